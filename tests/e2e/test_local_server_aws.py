"""``mnemo serve --backend aws`` against DynamoDB (a moto server) and OpenSearch endpoints given in
the environment, creating its tables on first start (MNEMO_AWS_CREATE_TABLES) — the README's recipe.

It behaves like the deployed stack: the write answers without touching OpenSearch, the search
finds the write at once, and the server feeds the table's stream to the indexer, as Lambda's
event source mapping does, so the index catches up by itself; ``mnemo cleanup --backend aws``
runs beside it and finds nothing left to repair."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid

import pytest

from tests.e2e.test_cli import mnemo
from tests.e2e.test_local_server import call
from tests.support.server import start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.aws]


def indexed_versions(aws_stack, alias: str, memory_ids: list[str]) -> dict[str, tuple[int, bool]]:
    """memory id → (version, tombstone) of what the index behind ``alias`` holds."""
    from mnemo.backends.aws.clients import opensearch_client

    client = opensearch_client(aws_stack)
    try:
        if not client.indices.exists_alias(index=alias, name=alias):
            return {}
        client.indices.refresh(index=alias)
        out = client.search(
            index=alias, body={"query": {"terms": {"id": memory_ids}}, "version": True, "size": len(memory_ids)}
        )
    finally:
        client.close()
    return {h["_source"]["id"]: (h["_version"], bool(h["_source"].get("deleted"))) for h in out["hits"]["hits"]}


def test_serve_with_the_aws_backend_creates_its_tables_and_finds_what_it_stores(aws_stack, tmp_path):
    run = uuid.uuid4().hex[:8]
    alias = f"{aws_stack.opensearch_index}-e2e"
    env = {
        "MNEMO_BACKEND": "aws",
        "MNEMO_AWS_CREATE_TABLES": "true",
        "MNEMO_AWS_REGION": "us-east-1",
        "MNEMO_DYNAMODB_ENDPOINT_URL": aws_stack.dynamodb_endpoint_url,
        "MNEMO_OPENSEARCH_ENDPOINT": aws_stack.opensearch_endpoint,
        "MNEMO_OPENSEARCH_INDEX": alias,
        "MNEMO_MEMORIES_TABLE": f"e2e-memories-{run}",
        "MNEMO_TENANTS_TABLE": f"e2e-tenants-{run}",
        "MNEMO_RATE_TABLE": f"e2e-rate-{run}",
        "MNEMO_IDEMPOTENCY_TABLE": f"e2e-idempotency-{run}",
    }
    server = start_server(tmp_path, env)
    try:
        # Given a memory written and another written then deleted
        status, _, added = call(server, "memory_add", {"content": "数据库延迟很高，需要加缓存", "kind": "insight"})
        assert status == 200, added
        gone = call(server, "memory_add", {"content": "延迟 to be deleted"})[2]["memory"]["id"]
        assert call(server, "memory_delete", {"id": gone})[0] == 200
        kept = added["memory"]["id"]

        # Then the very next search finds the one and not the other
        status, _, found = call(server, "memory_search", {"q": "延迟"})
        assert status == 200
        assert [m["id"] for m in found["memories"]] == [kept]

        # And the index catches up by itself: the server feeds the stream to the indexer
        deadline = time.monotonic() + 20
        while indexed_versions(aws_stack, alias, [kept, gone]) != {kept: (1, False), gone: (2, True)}:
            assert time.monotonic() < deadline, indexed_versions(aws_stack, alias, [kept, gone])
            time.sleep(0.2)

        # And the scheduled cleanup, run beside the server, has nothing to repair or re-index
        cleanup = mnemo(tmp_path, "--backend", "aws", "cleanup", "--until-done", env_extra=env)
        assert cleanup.code == 0, cleanup.err
        runs = [json.loads(line)["counts"] for line in cleanup.out.splitlines()]
        work = {name: sum(r[name] for r in runs) for name in ("repaired", "reindexed", "unindexed", "conflicts")}
        assert work == dict.fromkeys(work, 0)
    finally:
        banner = stop_server(server)
    assert "backend: aws" in banner
    assert "the indexer follows the stream" in banner


def started_primaries(aws_stack, alias: str) -> list[str]:
    """The states of the primary shards of the index behind ``alias`` (none: no such index)."""
    from mnemo.backends.aws.clients import opensearch_client

    client = opensearch_client(aws_stack)
    try:
        if not client.indices.exists_alias(index=alias, name=alias):
            return []
        shards = client.cat.shards(index=alias, format="json")
    finally:
        client.close()
    return [shard["state"] for shard in shards if shard["prirep"] == "p"]


def test_serve_with_the_aws_backend_creates_its_index_and_starts_its_shards_before_it_answers(aws_stack, tmp_path):
    # Given a deployment whose index does not exist yet (a fresh alias)
    run = uuid.uuid4().hex[:8]
    alias = f"{aws_stack.opensearch_index}-start-{run}"
    assert started_primaries(aws_stack, alias) == []
    env = {
        "MNEMO_BACKEND": "aws",
        "MNEMO_AWS_CREATE_TABLES": "true",
        "MNEMO_AWS_REGION": "us-east-1",
        "MNEMO_DYNAMODB_ENDPOINT_URL": aws_stack.dynamodb_endpoint_url,
        "MNEMO_OPENSEARCH_ENDPOINT": aws_stack.opensearch_endpoint,
        "MNEMO_OPENSEARCH_INDEX": alias,
        "MNEMO_MEMORIES_TABLE": f"start-memories-{run}",
        "MNEMO_TENANTS_TABLE": f"start-tenants-{run}",
        "MNEMO_RATE_TABLE": f"start-rate-{run}",
        "MNEMO_IDEMPOTENCY_TABLE": f"start-idempotency-{run}",
    }
    server = start_server(tmp_path, env)
    try:
        # Then, once it answers and before anything is written, the index exists with every
        # primary shard started (not created by the indexer's first write, mid-traffic)
        states = started_primaries(aws_stack, alias)
        assert states and set(states) == {"STARTED"}, states

        # And a search right after the start answers, and so does one right after the first add
        status, _, found = call(server, "memory_search", {"q": "latency"})
        assert status == 200, found
        assert call(server, "memory_add", {"content": "latency of the cache"})[0] == 200
        status, _, found = call(server, "memory_search", {"q": "latency"})
        assert status == 200, found
        assert len(found["memories"]) == 1
    finally:
        stop_server(server)  # (the aws_stack fixture drops the index: its name starts with the stack's)


def test_serve_with_the_aws_backend_stops_when_its_process_group_gets_sigterm(aws_stack, tmp_path):
    # Given the server in a process group of its own, its stream follower running (as systemd
    # starts a service, and stops it with KillMode=control-group: SIGTERM to every process)
    run = uuid.uuid4().hex[:8]
    env = {
        "MNEMO_BACKEND": "aws",
        "MNEMO_AWS_CREATE_TABLES": "true",
        "MNEMO_AWS_REGION": "us-east-1",
        "MNEMO_DYNAMODB_ENDPOINT_URL": aws_stack.dynamodb_endpoint_url,
        "MNEMO_OPENSEARCH_ENDPOINT": aws_stack.opensearch_endpoint,
        "MNEMO_OPENSEARCH_INDEX": f"{aws_stack.opensearch_index}-term-{run}",
        "MNEMO_MEMORIES_TABLE": f"term-memories-{run}",
        "MNEMO_TENANTS_TABLE": f"term-tenants-{run}",
        "MNEMO_RATE_TABLE": f"term-rate-{run}",
        "MNEMO_IDEMPOTENCY_TABLE": f"term-idempotency-{run}",
    }
    alias = env["MNEMO_OPENSEARCH_INDEX"]
    server = start_server(tmp_path, env, new_session=True)
    try:
        status, _, added = call(server, "memory_add", {"content": "stopped by the group"})
        assert status == 200, added
        # (the follower is past its start-up and polling: it indexed the write)
        kept = added["memory"]["id"]
        deadline = time.monotonic() + 30
        while indexed_versions(aws_stack, alias, [kept]) != {kept: (1, False)}:
            assert time.monotonic() < deadline, indexed_versions(aws_stack, alias, [kept])
            time.sleep(0.2)
        # When the whole group gets SIGTERM
        os.killpg(server.process.pid, signal.SIGTERM)
        # Then the server exits (its follower no longer holds it: 60 s and more before the fix)
        try:
            code = server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            code = None
        assert code == 0, server.output.read_text() if server.output else ""
    finally:
        stop_server(server)
