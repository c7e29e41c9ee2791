"""template.yaml's deployment rules that cfn-lint does not check (docs/contract.md §7)."""

from __future__ import annotations

from tests.support.template import load_template, table_key_schema

RESOURCES = load_template()["Resources"]


def _of_type(kind: str) -> dict[str, dict]:
    return {name: r for name, r in RESOURCES.items() if r["Type"] == kind}


def test_every_function_logs_to_a_log_group_of_its_own_with_retention():
    groups = _of_type("AWS::Logs::LogGroup")
    functions = _of_type("AWS::Serverless::Function")

    used = [f["Properties"]["LoggingConfig"]["LogGroup"]["Ref"] for f in functions.values()]
    assert len(set(used)) == len(functions)
    assert set(used) <= set(groups)
    for name, group in groups.items():
        assert "RetentionInDays" in group["Properties"], name


def test_every_table_has_point_in_time_recovery_and_the_expiring_ones_ttl():
    tables = _of_type("AWS::DynamoDB::Table")

    for name, table in tables.items():
        assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}, name
    for name in ("MemoriesTable", "RateLimitTable", "IdempotencyTable"):
        assert tables[name]["Properties"]["TimeToLiveSpecification"]["Enabled"] is True


def test_the_indexer_consumes_the_memories_stream_with_bounded_retries_and_a_failure_queue():
    stream = RESOURCES["IndexerFunction"]["Properties"]["Events"]["MemoriesStream"]["Properties"]

    assert stream["Stream"] == {"Fn::GetAtt": "MemoriesTable.StreamArn"}
    assert stream["BisectBatchOnFunctionError"] is True
    assert 0 < stream["MaximumRetryAttempts"] <= 10
    assert stream["DestinationConfig"]["OnFailure"]["Type"] == "SQS"
    assert "StreamSpecification" in table_key_schema("MemoriesTable")


def test_the_memories_table_has_no_local_index_so_no_project_is_capped_at_10_gb():
    schema = table_key_schema("MemoriesTable")

    assert "LocalSecondaryIndexes" not in schema
    assert [i["IndexName"] for i in schema["GlobalSecondaryIndexes"]] == ["recent", "repair"]
