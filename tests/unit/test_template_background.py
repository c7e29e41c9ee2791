"""template.yaml's background functions, beyond tests/unit/test_template_resources.py: the stream
mapping reports partial batch failures into a queue the template owns, both stream images reach
the indexer, and cleanup runs on a schedule."""

from __future__ import annotations

from tests.support.template import load_template

RESOURCES = load_template()["Resources"]


def events(function: str, source_type: str) -> list[dict]:
    found = RESOURCES[function]["Properties"]["Events"].values()
    return [e["Properties"] for e in found if e["Type"] == source_type]


def test_the_indexer_reports_partial_batch_failures_to_a_queue_of_this_stack():
    (stream,) = events("IndexerFunction", "DynamoDB")

    assert stream["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    queue = stream["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"].split(".")[0]
    assert RESOURCES[queue]["Type"] == "AWS::SQS::Queue"


def test_the_memories_table_streams_both_images_for_the_indexer():
    spec = RESOURCES["MemoriesTable"]["Properties"]["StreamSpecification"]

    assert spec["StreamViewType"] == "NEW_AND_OLD_IMAGES"


def test_cleanup_runs_on_a_schedule_within_its_timeout():
    (schedule,) = events("CleanupFunction", "Schedule")
    props = RESOURCES["CleanupFunction"]["Properties"]

    assert schedule["Schedule"].startswith(("rate(", "cron("))
    assert props["Timeout"] <= 900  # Lambda's limit; the job stops before it (deadline)
