"""``mnemo.local.stream.StreamMapping`` plays template.yaml's event source mapping for
``mnemo serve --backend aws`` and the tests: its settings are the template's, and it delivers,
retries, bisects and gives up as the mapping does (driven here by a scripted stream)."""

from __future__ import annotations

import json
import time
from datetime import UTC
from typing import Any

import pytest
from mnemo.local import stream
from mnemo.local.stream import StreamMapping

from tests.support.template import load_template


def mapping_properties() -> dict[str, Any]:
    function = load_template()["Resources"]["IndexerFunction"]["Properties"]
    return {"Timeout": function["Timeout"], **function["Events"]["MemoriesStream"]["Properties"]}


def test_the_local_mapping_uses_the_templates_settings():
    props = mapping_properties()

    assert props["BatchSize"] == stream.BATCH_SIZE
    assert props["MaximumRetryAttempts"] == stream.MAX_RETRY_ATTEMPTS
    assert props["MaximumRecordAgeInSeconds"] == stream.MAX_RECORD_AGE_S
    assert props["Timeout"] == stream.FUNCTION_TIMEOUT_S
    assert props["BisectBatchOnFunctionError"] is True
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["StartingPosition"] == "TRIM_HORIZON"
    (pattern,) = [json.loads(f["Pattern"]) for f in props["FilterCriteria"]["Filters"]]
    assert pattern == {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": stream.KEY_PREFIX}]}}}}


class ScriptedStreams:
    """One open shard holding ``records``, served in pages as DynamoDB Streams serves them."""

    class exceptions:
        class ExpiredIteratorException(Exception):
            pass

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records

    def describe_table(self, TableName: str) -> dict[str, Any]:
        return {"Table": {"LatestStreamArn": "arn:stream"}}

    def describe_stream(self, **_: Any) -> dict[str, Any]:
        return {"StreamDescription": {"Shards": [{"ShardId": "shard-1"}]}}

    def get_shard_iterator(self, **request: Any) -> dict[str, Any]:
        after = request.get("SequenceNumber")
        start = 0 if after is None else next(i + 1 for i, r in enumerate(self.records) if _seq(r) == after)
        return {"ShardIterator": str(start)}

    def get_records(self, ShardIterator: str, Limit: int) -> dict[str, Any]:
        start = int(ShardIterator)
        page = self.records[start : start + Limit]
        return {"Records": page, "NextShardIterator": str(start + len(page))}


def _seq(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["SequenceNumber"])


def record(n: int, sk: str | None = None, *, age_s: float = 0.0) -> dict[str, Any]:
    return {
        "eventName": "INSERT",
        "dynamodb": {
            "Keys": {"pk": {"S": "WS#w#PRJ#p"}, "sk": {"S": sk or f"MEM#m{n:03d}"}},
            "SequenceNumber": f"{n:021d}",
            "ApproximateCreationDateTime": time.time() - age_s,
        },
    }


def test_batches_are_filtered_to_memories_and_delivered_in_order_in_pages():
    streams = ScriptedStreams([record(i) for i in range(150)] + [record(150, "CHECKPOINT#x")])
    seen: list[list[str]] = []
    mapping = StreamMapping(
        streams, streams, "t", lambda event, _: seen.append([_seq(r) for r in event["Records"]]), context=lambda: None
    )

    assert mapping.drain() == 151
    assert [len(batch) for batch in seen] == [100, 50]
    assert [s for batch in seen for s in batch] == [f"{i:021d}" for i in range(150)]
    assert mapping.drain() == 0  # the position is kept


@pytest.mark.parametrize("budget", [stream.MAX_RETRY_ATTEMPTS, 1])
def test_a_reported_failure_is_retried_from_the_first_failed_record_then_given_up(budget):
    streams = ScriptedStreams([record(i) for i in range(4)])
    calls: list[list[str]] = []
    failures: list[Any] = []

    def handler(event: dict[str, Any], _: Any) -> dict[str, Any]:
        seqs = [_seq(r) for r in event["Records"]]
        calls.append(seqs)
        return {"batchItemFailures": [{"itemIdentifier": s} for s in seqs if s.endswith("2")]}

    # the template's budget is the default; a test that only needs a batch given up sets its own
    options = {} if budget == stream.MAX_RETRY_ATTEMPTS else {"max_retry_attempts": budget}
    mapping = StreamMapping(
        streams, streams, "t", handler, context=lambda: None, on_failure=failures.append, retry_delay_s=0, **options
    )
    mapping.drain()

    assert calls[0] == [f"{i:021d}" for i in range(4)]
    assert calls[1:] == [[f"{i:021d}" for i in (2, 3)]] * budget
    assert [(f.reason, f.memory_ids) for f in failures] == [("RetryAttemptsExhausted", ["m002", "m003"])]


def test_a_function_error_splits_the_batch_and_records_too_old_are_given_up():
    streams = ScriptedStreams([record(4, age_s=stream.MAX_RECORD_AGE_S + 60)] + [record(i) for i in range(4)])
    sizes: list[int] = []
    failures: list[Any] = []

    def handler(event: dict[str, Any], _: Any) -> None:
        sizes.append(len(event["Records"]))
        if any(_seq(r).endswith("1") for r in event["Records"]):
            raise RuntimeError("boom")

    mapping = StreamMapping(
        streams, streams, "t", handler, context=lambda: None, on_failure=failures.append, retry_delay_s=0
    )
    mapping.drain()

    assert sizes[:3] == [4, 2, 1]  # the whole batch, then halves until the failing record is alone
    assert [f.memory_ids for f in failures if f.reason == "RetryAttemptsExhausted"] == [["m001"]]
    assert [f.memory_ids for f in failures if f.reason == "RecordAgeExceeded"] == [["m004"]]


def test_records_are_shaped_as_lambda_delivers_them():
    from datetime import UTC, datetime

    created = datetime.now(UTC).replace(microsecond=0)
    raw = record(1)
    raw["dynamodb"]["ApproximateCreationDateTime"] = created  # boto3 parses it into a datetime
    streams = ScriptedStreams([raw])
    events: list[dict[str, Any]] = []
    StreamMapping(streams, streams, "t", lambda event, _: events.append(event), context=lambda: None).drain()

    (delivered,) = events[0]["Records"]
    assert delivered["eventSourceARN"] == "arn:stream"
    assert delivered["dynamodb"]["ApproximateCreationDateTime"] == created.timestamp()


def test_records_are_delivered_as_lambdas_json_event_binary_values_in_base64():
    from datetime import datetime

    from mnemo.backends.aws.items import memory_item, record_from_item
    from mnemo.models.common import utc_now
    from mnemo.models.records import Embedding

    from tests.support.records import memory_record

    record = memory_record("c", id="mem_1", at=utc_now(), embedding=Embedding.of("m", [0.25, -0.5, 1.0]))
    item = memory_item(record)
    assert isinstance(item["embedding"]["B"], bytes)  # as boto3's GetRecords gives it
    got = {
        "eventName": "INSERT",
        "dynamodb": {"Keys": {"pk": item["pk"], "sk": item["sk"]}, "NewImage": item,
                     "ApproximateCreationDateTime": datetime(2026, 12, 1, tzinfo=UTC)},
    }  # fmt: skip

    shaped = stream._lambda_shape(got, "arn:stream")

    event = json.loads(json.dumps({"Records": [shaped]}))  # JSON, as Lambda hands it over
    image = event["Records"][0]["dynamodb"]["NewImage"]
    assert isinstance(image["embedding"]["B"], str)
    assert record_from_item(image).embedding == record.embedding
    assert record_from_item(image) == record
