"""template.yaml declares the background functions completely: the stream mapping retries a
bounded number of times, bisects a failing batch, reports partial failures and keeps what it gave
up on; cleanup runs on a schedule, finishing inside its timeout; both have log groups."""

from __future__ import annotations

from mnemo.local.template import load_template

RESOURCES = load_template()["Resources"]


def events(function: str, source_type: str) -> list[dict]:
    found = RESOURCES[function]["Properties"]["Events"].values()
    return [e["Properties"] for e in found if e["Type"] == source_type]


def test_the_indexer_consumes_the_memories_stream_with_bounded_retries_and_partial_failures():
    (stream,) = events("IndexerFunction", "DynamoDB")

    assert stream["Stream"] == {"Fn::GetAtt": "MemoriesTable.StreamArn"}
    assert stream["BisectBatchOnFunctionError"] is True
    assert 0 <= stream["MaximumRetryAttempts"] <= 10
    assert stream["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    failure = stream["DestinationConfig"]["OnFailure"]
    assert failure["Type"] == "SQS"
    assert RESOURCES[failure["Destination"]["Fn::GetAtt"].split(".")[0]]["Type"] == "AWS::SQS::Queue"


def test_cleanup_runs_on_a_schedule():
    (schedule,) = events("CleanupFunction", "Schedule")

    assert schedule["Schedule"].startswith(("rate(", "cron("))


def test_the_memories_table_streams_both_images_for_the_indexer():
    spec = RESOURCES["MemoriesTable"]["Properties"]["StreamSpecification"]

    assert spec["StreamViewType"] == "NEW_AND_OLD_IMAGES"


def test_each_background_function_has_a_log_group_with_retention():
    for function in ("IndexerFunction", "CleanupFunction"):
        group = RESOURCES[f"{function}LogGroup"]["Properties"]
        assert group["LogGroupName"] == {"Fn::Sub": f"/aws/lambda/${{{function}}}"}
        assert "RetentionInDays" in group
