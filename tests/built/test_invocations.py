"""Every built function, imported the way the python3.11 runtime imports it, answers every sample
event of events/ with the status it must, and loads nothing from outside its code, the layer and
the runtime's SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.built.conftest import FLOOR_SDK, BuiltStack, Run
from tests.support import events as samples

pytestmark = [pytest.mark.slow]

#: the run of built_runs that replays each function's samples
SAMPLE_RUN = {
    "WriteFunction": "write",
    "ReadFunction": "read",
    "McpFunction": "mcp",
    "AdminFunction": "admin",
    "IndexerFunction": "indexer",
    "CleanupFunction": "cleanup",
}
CASES = [(function, name) for function, names in samples.samples_by_function().items() for name in names]
#: the AWS SDK is the runtime's, never the layer's
SDK_PACKAGES = {"boto3", "botocore", "s3transfer"}


def test_every_function_and_every_sample_is_run():
    assert set(SAMPLE_RUN) == set(samples.samples_by_function())
    assert {name for _, name in CASES} == {p.name for p in samples.EVENTS.glob("*.json")}


@pytest.mark.parametrize(("function", "name"), CASES, ids=[f"{f}-{n}" for f, n in CASES])
def test_the_built_function_answers_its_sample(built_runs: dict[str, Run], function: str, name: str):
    run = built_runs[SAMPLE_RUN[function]]
    assert run.function == function

    response = run.response(name)

    kind = samples.source_type(samples.load(name))
    if kind == "HttpApi":
        body = json.loads(response["body"])
        assert response["statusCode"] == samples.EXPECTED.get(name, 200), body
        if response["statusCode"] >= 400:
            assert set(body) >= {"message", "code"}
    elif kind == "DynamoDB":
        assert response == {"batchItemFailures": []}
    else:
        assert response["index_unavailable"] is False
        assert response["more"] is False


@pytest.mark.parametrize("key", sorted(SAMPLE_RUN.values()))
def test_a_built_function_loads_only_its_code_the_layer_and_the_runtime_sdk(built_runs: dict[str, Run], key: str):
    run = built_runs[key]

    assert run.outside == []
    assert run.origins["handler"] == "code"
    assert run.origins["mnemo"] == "layer"
    assert run.origins["aws_lambda_powertools"] == "layer"
    assert run.origins["aws_xray_sdk"] == "layer"  # Tracer needs it: a runtime dependency
    from_sdk = {name for name, origin in run.origins.items() if origin == "runtime-sdk"}
    assert from_sdk == {"boto3", "botocore", "s3transfer"} & set(run.origins)
    assert "botocore" in from_sdk  # Tracer patches botocore at import
    assert not {"grpc", "google", "opensearch_protobufs", "yaml"} & set(run.origins)


@pytest.mark.parametrize("key", sorted(SAMPLE_RUN.values()))
def test_the_garbage_collector_is_back_on_once_a_built_function_is_loaded(built_runs: dict[str, Run], key: str):
    """mnemo.coldstart pauses it while the handler module loads; what was loaded is frozen, and
    what the first call built (the service: its AWS clients) is frozen after it."""
    collector = built_runs[key].gc

    assert collector["enabled"] is True
    assert collector["frozen"] > 10_000
    assert collector["frozen_after_calls"] > collector["frozen"] + 1_000


def test_reads_find_what_the_built_write_functions_wrote(built_runs: dict[str, Run]):
    search = built_runs["read"].body("memory_search.json")
    mcp_search = json.loads(built_runs["mcp"].response("mcp_search")["body"])["result"]["structuredContent"]

    assert [m["content"] for m in search["memories"]] == [
        json.loads(samples.load("memory_add.json")["body"])["content"]
    ]
    assert [m["kind"] for m in mcp_search["memories"]] == ["decision"]


def test_the_indexer_takes_the_tables_real_stream(built_stack: BuiltStack, built_runs: dict[str, Run]):
    """Every write of the story reached the indexer through the table's stream: inserts, and
    modifies (updates, delete markers); nothing failed, and the deletes left tombstones."""
    assert built_stack.facts["stream_events"] == ["INSERT", "MODIFY"]
    assert built_runs["indexer"].response("stream") == {"batchItemFailures": []}
    assert built_runs["indexer"].opensearch, "the indexer wrote nothing to the index"


def test_the_extra_calls_reach_their_code_paths(built_runs: dict[str, Run]):
    """What the permission checks rely on: these calls succeeded, so they made their requests."""
    write, write2, mcp2, admin = built_runs["write"], built_runs["write-2"], built_runs["mcp-2"], built_runs["admin"]

    assert write.status("add_idempotent") == write.status("replay") == 200
    assert write.body("replay") == write.body("add_idempotent")
    assert [write2.status("update_added"), write2.status("delete_updated")] == [200, 200]
    for name in ("mcp_get", "mcp_update", "mcp_delete"):
        assert json.loads(mcp2.response(name)["body"])["result"]["isError"] is False, name
    assert admin.status("project_create") == 201
    read = built_runs["read"]
    assert read.body("whoami")["key"]["label"] == "admin"
    assert [m["content"] for m in read.body("export")["memories"]] != []
    console = read.response("console")
    assert console["statusCode"] == 200 and console["headers"]["Content-Type"].startswith("text/html")
    assert read.status("console_asset") == 200
    assert built_runs["admin-2"].status("revoke_created") == 200
    assert built_runs["cleanup"].response("cleanup_schedule.json")["counts"] | {"examined": 0} == {
        "examined": 0,
        "repaired": 2,  # the memories written while OpenSearch refused (REST and MCP)
        "expired": 1,
        "reindexed": 0,
        # the orphan entry, and the expired record's: its delete marker's stream record has not
        # reached an indexer yet (when it does, the tombstone is there already: a 409, done)
        "unindexed": 2,
        "purged": 1,
        "skipped": 0,
        "conflicts": 0,
        "embedded": 0,  # every built write embedded its memory (the layer holds the model)
        "embed_failed": 0,
    }


def test_the_cleanup_job_erases_the_versions_an_expired_memory_kept(
    built_stack: BuiltStack, built_runs: dict[str, Run]
):
    assert built_runs["cleanup"].response("cleanup_schedule.json")["counts"]["expired"] == 1
    expired = built_stack.facts["expired_memory"]

    left = built_stack.backend.dynamodb.query(
        TableName=built_stack.cfg.memories_table,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :ver)",
        ExpressionAttributeValues={":pk": expired["pk"], ":ver": {"S": f"VER#{expired['id']}#"}},
        ConsistentRead=True,
    )["Items"]

    assert left == []


def test_the_built_functions_work_with_the_oldest_sdk_allowed(
    built_stack: BuiltStack, built_runs: dict[str, Run], floor_sdk: Any
):
    """The runtime's boto3 lags PyPI: the layer must work with the oldest one pyproject.toml allows."""
    content = "Floor SDK check: writes and searches work on boto3 " + FLOOR_SDK[0]
    add = samples.http_event("memory_add.json", body={"content": content})
    search = samples.http_event("memory_search.json", body={"q": "floor sdk check"})

    write = built_stack.run("WriteFunction", [("add", add)], sdk=floor_sdk)
    read = built_stack.run("ReadFunction", [("search", search)], sdk=floor_sdk)

    assert write.status("add") == 200
    assert [m["content"] for m in read.body("search")["memories"]] == [content]
    assert write.outside == read.outside == []
    assert {name for name, origin in write.origins.items() if origin == "runtime-sdk"} >= {"boto3", "botocore"}
