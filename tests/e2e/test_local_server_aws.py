"""``mnemo serve --backend aws`` against DynamoDB (a moto server) and OpenSearch endpoints given in
the environment, creating its tables on first start (MNEMO_AWS_CREATE_TABLES) — the README's recipe."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.conftest import start_server, stop_server
from tests.e2e.test_local_server import call

pytestmark = pytest.mark.aws


def test_serve_with_the_aws_backend_creates_its_tables_and_finds_what_it_stores(aws_stack, tmp_path):
    run = uuid.uuid4().hex[:8]
    env = {
        "MNEMO_BACKEND": "aws",
        "MNEMO_AWS_CREATE_TABLES": "true",
        "MNEMO_AWS_REGION": "us-east-1",
        "MNEMO_DYNAMODB_ENDPOINT_URL": aws_stack.dynamodb_endpoint_url,
        "MNEMO_OPENSEARCH_ENDPOINT": aws_stack.opensearch_endpoint,
        "MNEMO_OPENSEARCH_INDEX": f"{aws_stack.opensearch_index}-e2e",
        "MNEMO_MEMORIES_TABLE": f"e2e-memories-{run}",
        "MNEMO_TENANTS_TABLE": f"e2e-tenants-{run}",
        "MNEMO_RATE_TABLE": f"e2e-rate-{run}",
        "MNEMO_IDEMPOTENCY_TABLE": f"e2e-idempotency-{run}",
    }
    server = start_server(tmp_path, env)
    try:
        status, _, added = call(server, "memory_add", {"content": "数据库延迟很高，需要加缓存", "kind": "insight"})
        assert status == 200, added
        status, _, found = call(server, "memory_search", {"q": "延迟"})
        assert status == 200
        assert [m["id"] for m in found["memories"]] == [added["memory"]["id"]]
    finally:
        banner = stop_server(server)
    assert "backend: aws" in banner
