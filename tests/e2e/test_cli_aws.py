"""``mnemo --backend aws`` administration against DynamoDB (moto server) and OpenSearch endpoints
from the environment: an import, then export and re-import, round trip through the AWS backend."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.e2e.test_cli import mnemo

pytestmark = [pytest.mark.slow, pytest.mark.aws]


def test_import_export_round_trip_on_the_aws_backend(aws_stack, tmp_path):
    run = uuid.uuid4().hex[:8]
    env = {
        "MNEMO_AWS_CREATE_TABLES": "true",
        "MNEMO_AWS_REGION": "us-east-1",
        "MNEMO_DYNAMODB_ENDPOINT_URL": aws_stack.dynamodb_endpoint_url,
        "MNEMO_OPENSEARCH_ENDPOINT": aws_stack.opensearch_endpoint,
        "MNEMO_OPENSEARCH_INDEX": f"{aws_stack.opensearch_index}-cli",
        "MNEMO_MEMORIES_TABLE": f"cli-memories-{run}",
        "MNEMO_TENANTS_TABLE": f"cli-tenants-{run}",
        "MNEMO_RATE_TABLE": f"cli-rate-{run}",
        "MNEMO_IDEMPOTENCY_TABLE": f"cli-idempotency-{run}",
    }

    def aws(*args: str, stdin: str | None = None):
        return mnemo(tmp_path, "--backend", "aws", *args, stdin=stdin, env_extra=env)

    created = aws("--json", "workspace", "create", "acme")
    assert created.code == 0, created.err
    workspace_id = created.json()["workspace"]["id"]
    assert aws("project", "create", "copy", "-w", workspace_id).code == 0
    lines = [
        {
            "id": f"mem_01ARZ3NDEKTSV4RRFFQ69G5FA{suffix}",
            "workspace_id": workspace_id,
            "project_id": "prj_01ARZ3NDEKTSV4RRFFQ69G5FAZ",
            "content": content,
            "kind": "insight",
            "tags": ["t"],
            "path": None,
            "team_id": team,
            "session": session,
            "source": "cli",
            "expires_at": None,
            "version": version,
            "created_at": "2026-01-02T03:04:05.678Z",
            "updated_at": "2026-02-03T04:05:06.789Z",
        }
        for suffix, content, team, session, version in [
            ("V", "数据库延迟很高", None, "claude:3f2a", 3),
            ("W", "red plan", "red", None, 1),
        ]
    ]
    source = "".join(json.dumps(line) + "\n" for line in lines)

    imported = aws("import", "-w", workspace_id, stdin=source)
    exported = aws("export", "-w", workspace_id)
    copied = aws("import", "-w", workspace_id, "--project", "copy", stdin=exported.out)
    again = aws("export", "-w", workspace_id, "--project", "copy")

    assert (imported.code, exported.code, copied.code, again.code) == (0, 0, 0, 0), imported.err + copied.err

    def body(text):
        return [{k: v for k, v in json.loads(line).items() if k != "project_id"} for line in text.splitlines()]

    assert body(again.out) == body(exported.out) == body(source)
