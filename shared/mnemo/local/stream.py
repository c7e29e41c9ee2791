"""The memories table's stream, fed to the indexer as Lambda's event source mapping feeds it
(template.yaml, ``IndexerFunction`` → ``MemoriesStream``) — for ``mnemo serve --backend aws`` and
for the tests, against a moto server or DynamoDB itself.

:class:`StreamMapping` reads each shard of the table's stream (``DescribeTable`` →
``LatestStreamArn``, ``DescribeStream``, ``GetShardIterator``, ``GetRecords``), drops what the
mapping's filter drops (:data:`KEY_PREFIX`), and invokes the handler with batches shaped as
Lambda shapes them (``eventSourceARN``; ``ApproximateCreationDateTime`` in epoch seconds), up to
:data:`BATCH_SIZE` records, one shard at a time and in order, as the mapping does:

* a batch answered with ``batchItemFailures`` (``ReportBatchItemFailures``) is retried from its
  first failed record; a handler that raises has its batch split in two, each half retried on its
  own (``BisectBatchOnFunctionError``);
* after :data:`MAX_RETRY_ATTEMPTS` retries, or once a record is older than
  :data:`MAX_RECORD_AGE_S`, the batch is given up: described to ``on_failure`` (the deployed
  stack sends the same description to its SQS queue) and skipped — the indexer marked what it
  could not index for repair, and the cleanup job repairs it.

``tests/unit/test_local_stream.py`` holds these settings to template.yaml. The shard stays
blocked while a batch is retried, as in Lambda; :meth:`StreamMapping.run` polls every
:data:`POLL_INTERVAL_S` while there is work, and backs off to a second when the stream is idle.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mnemo.config import Settings

log = logging.getLogger("mnemo.local")

#: the mapping's filter (``{"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "MEM#"}]}}}}``): memories only
KEY_PREFIX = "MEM#"
BATCH_SIZE = 100
MAX_RETRY_ATTEMPTS = 5
MAX_RECORD_AGE_S = 3600
#: Lambda polls a shard four times a second
POLL_INTERVAL_S = 0.25
IDLE_INTERVAL_S = 1.0
#: the indexer's Timeout in template.yaml
FUNCTION_TIMEOUT_S = 60.0

Handler = Callable[[dict[str, Any], Any], Any]


class Stop(Protocol):
    """What :meth:`StreamMapping.run` polls until set (a ``threading.Event`` in the tests)."""

    def is_set(self) -> bool: ...
    def wait(self, timeout: float) -> bool: ...


@dataclass
class Failure:
    """A batch given up on, described as the mapping describes it to its on-failure destination."""

    shard_id: str
    start_sequence_number: str
    end_sequence_number: str
    batch_size: int
    reason: str
    memory_ids: list[str] = field(default_factory=list)

    def as_message(self, stream_arn: str) -> dict[str, Any]:
        return {
            "requestContext": {"condition": self.reason, "approximateInvokeCount": MAX_RETRY_ATTEMPTS + 1},
            "DDBStreamBatchInfo": {
                "shardId": self.shard_id,
                "startSequenceNumber": self.start_sequence_number,
                "endSequenceNumber": self.end_sequence_number,
                "batchSize": self.batch_size,
                "streamArn": stream_arn,
            },
        }


@dataclass
class _Shard:
    shard_id: str
    parent_id: str | None
    #: the last sequence number handled (delivered, filtered out or given up on)
    checkpoint: str | None = None
    iterator: str | None = None
    closed: bool = False


def _sequence(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["SequenceNumber"])


def _memory_id(record: dict[str, Any]) -> str:
    return str(record["dynamodb"].get("Keys", {}).get("sk", {}).get("S", "")).removeprefix(KEY_PREFIX)


class StreamMapping:
    """One table's stream → one handler, like an event source mapping."""

    def __init__(
        self,
        dynamodb: Any,
        streams: Any,
        table: str,
        handler: Handler,
        *,
        context: Callable[[], Any] | None = None,
        on_failure: Callable[[Failure], None] | None = None,
        retry_delay_s: float = 0.5,
        max_retry_attempts: int = MAX_RETRY_ATTEMPTS,
        start: str = "TRIM_HORIZON",
    ) -> None:
        """``max_retry_attempts``: retries of a failed batch before it is given up (the template's
        ``MaximumRetryAttempts`` by default; tests that only need a batch given up lower it)."""
        self.streams = streams
        self.handler = handler
        self.context = context or _context
        self.on_failure = on_failure or self._log_failure
        self.retry_delay_s = retry_delay_s
        self.max_retry_attempts = max_retry_attempts
        self.start = start
        self.arn = str(dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"])
        self.shards: dict[str, _Shard] = {}
        #: handler invocations, and the records handed to it (retries included)
        self.invocations = 0
        self.delivered = 0
        self._lock = threading.Lock()

    # -- the loop ------------------------------------------------------------------------------

    def run(self, stop: Stop) -> None:
        """Poll until ``stop`` is set (``mnemo serve``); errors reading the stream are logged and retried."""
        while not stop.is_set():
            try:
                busy = self.poll() > 0
            except Exception as exc:  # noqa: BLE001 - the mapping keeps polling, as Lambda's does
                log.warning("reading the memories table's stream failed: %s", type(exc).__name__)
                busy = False
            stop.wait(POLL_INTERVAL_S if busy else IDLE_INTERVAL_S)

    def drain(self, *, lose: Callable[[dict[str, Any]], bool] | None = None) -> int:
        """Poll until the stream has nothing more; returns how many records were read. ``lose``
        names records to drop as a mapping that gave up on them would (tests make drift so)."""
        total = 0
        while True:
            read = self.poll(lose=lose)
            if read == 0:
                return total
            total += read

    def poll(self, *, lose: Callable[[dict[str, Any]], bool] | None = None) -> int:
        """One pass over the shards: at most one batch each. Returns the records read."""
        with self._lock:
            self._discover()
            read = 0
            for shard in list(self.shards.values()):
                if shard.closed or not self._parent_done(shard):
                    continue
                read += self._poll_shard(shard, lose)
            return read

    # -- shards --------------------------------------------------------------------------------

    def _discover(self) -> None:
        request: dict[str, Any] = {"StreamArn": self.arn}
        while True:
            out = self.streams.describe_stream(**request)["StreamDescription"]
            for shard in out.get("Shards", []):
                if shard["ShardId"] not in self.shards:
                    self.shards[shard["ShardId"]] = _Shard(shard["ShardId"], shard.get("ParentShardId"))
            last = out.get("LastEvaluatedShardId")
            if not last:
                return
            request["ExclusiveStartShardId"] = last

    def _parent_done(self, shard: _Shard) -> bool:
        parent = self.shards.get(shard.parent_id or "")
        return parent is None or parent.closed

    def _iterator(self, shard: _Shard) -> str:
        if shard.iterator is None:
            request: dict[str, Any] = {"StreamArn": self.arn, "ShardId": shard.shard_id}
            if shard.checkpoint is None:
                request["ShardIteratorType"] = self.start
            else:
                request.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=shard.checkpoint)
            shard.iterator = str(self.streams.get_shard_iterator(**request)["ShardIterator"])
        return shard.iterator

    def _poll_shard(self, shard: _Shard, lose: Callable[[dict[str, Any]], bool] | None) -> int:
        try:
            out = self.streams.get_records(ShardIterator=self._iterator(shard), Limit=BATCH_SIZE)
        except self.streams.exceptions.ExpiredIteratorException:
            shard.iterator = None  # iterators expire after 15 minutes: resume from the checkpoint
            return 0
        records: list[dict[str, Any]] = out.get("Records", [])
        shard.iterator = out.get("NextShardIterator")
        if shard.iterator is None:
            shard.closed = True
        if not records:
            return 0
        batch = [_lambda_shape(r, self.arn) for r in records if _wanted(r)]
        if lose is not None:
            batch = [r for r in batch if not lose(r)]
        if batch:
            self._deliver(shard, batch)
        shard.checkpoint = _sequence(records[-1])
        return len(records)

    # -- one batch -----------------------------------------------------------------------------

    def _deliver(self, shard: _Shard, batch: list[dict[str, Any]]) -> None:
        """Invoke until the batch is done or given up (the shard waits meanwhile, as in Lambda)."""
        pending = [batch]
        while pending:
            part = pending.pop(0)
            retries = 0
            while part:
                stale = 0  # records past the maximum age are given up, the rest goes on
                while stale < len(part) and _age_s(part[stale]) > MAX_RECORD_AGE_S:
                    stale += 1
                if stale:
                    self.on_failure(_failure(shard, part[:stale], "RecordAgeExceeded"))
                    part = part[stale:]
                    continue
                if retries > self.max_retry_attempts:
                    self.on_failure(_failure(shard, part, "RetryAttemptsExhausted"))
                    break
                if retries:
                    time.sleep(min(self.retry_delay_s * 2 ** (retries - 1), 10.0))
                failed = self._invoke(part)
                if failed is None:  # the function raised: split the batch (BisectBatchOnFunctionError)
                    if len(part) > 1:
                        half = len(part) // 2
                        pending[:0] = [part[:half], part[half:]]
                        break
                    retries += 1
                    continue
                if not failed:
                    break
                first = min(range(len(part)), key=lambda i: _sequence(part[i]) not in failed)
                part = part[first:]  # the records before the first failed one are done
                retries += 1

    def _invoke(self, batch: list[dict[str, Any]]) -> set[str] | None:
        """The failed records' sequence numbers (empty: all done), or None when the handler raised."""
        self.invocations += 1
        self.delivered += len(batch)
        try:
            response = self.handler({"Records": batch}, self.context())
        except Exception:  # noqa: BLE001 - a function error, as the mapping sees one
            return None
        failures = (response or {}).get("batchItemFailures") or []
        return {str(f["itemIdentifier"]) for f in failures}

    def _log_failure(self, failure: Failure) -> None:
        log.warning(
            "the stream indexer gave up on %d record(s) of shard %s (%s); the cleanup job repairs them",
            failure.batch_size,
            failure.shard_id,
            failure.reason,
        )


def _wanted(record: dict[str, Any]) -> bool:
    return str(record["dynamodb"].get("Keys", {}).get("sk", {}).get("S", "")).startswith(KEY_PREFIX)


def _lambda_shape(record: dict[str, Any], arn: str) -> dict[str, Any]:
    """A GetRecords record as Lambda delivers it: the stream's ARN added, the creation time in
    epoch seconds (boto3 parses it into a datetime), binary attributes in base64 (boto3 decodes
    them into bytes; Lambda's event is JSON)."""
    data = dict(record["dynamodb"])
    created = data.get("ApproximateCreationDateTime")
    if isinstance(created, datetime):
        data["ApproximateCreationDateTime"] = created.timestamp()
    for image in ("Keys", "NewImage", "OldImage"):
        if image in data:
            data[image] = {name: _json_value(value) for name, value in data[image].items()}
    return {**record, "dynamodb": data, "eventSourceARN": arn}


def _json_value(value: dict[str, Any]) -> dict[str, Any]:
    """One attribute value of an image, its binary parts in base64 as in Lambda's JSON event."""
    (kind, inner), *_ = value.items()
    if kind == "B" and isinstance(inner, bytes | bytearray):
        return {"B": base64.b64encode(inner).decode("ascii")}
    if kind == "BS":
        return {"BS": [base64.b64encode(b).decode("ascii") if isinstance(b, bytes | bytearray) else b for b in inner]}
    if kind == "M":
        return {"M": {k: _json_value(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_json_value(v) for v in inner]}
    return value


def _age_s(record: dict[str, Any]) -> float:
    created = record["dynamodb"].get("ApproximateCreationDateTime")
    return 0.0 if created is None else time.time() - float(created)


def _failure(shard: _Shard, batch: list[dict[str, Any]], reason: str) -> Failure:
    return Failure(
        shard.shard_id,
        _sequence(batch[0]),
        _sequence(batch[-1]),
        len(batch),
        reason,
        [_memory_id(r) for r in batch],
    )


def _context() -> Any:
    from mnemo.local.gateway import LocalContext

    return LocalContext("IndexerFunction", deadline=time.monotonic() + FUNCTION_TIMEOUT_S)


def clients(cfg: Any) -> tuple[Any, Any]:
    """DynamoDB and DynamoDB Streams clients for the settings' endpoint and region."""
    import boto3

    kwargs = {"endpoint_url": cfg.dynamodb_endpoint_url, "region_name": cfg.aws_region}
    return boto3.client("dynamodb", **kwargs), boto3.client("dynamodbstreams", **kwargs)


# -- mnemo serve: the mapping in a process of its own ---------------------------------------------


def follow(stop: Any, settings: Settings | None = None) -> None:
    """A child process of ``mnemo serve --backend aws`` (:class:`mnemo.local.background.Child`):
    the indexer's handler (the very module Lambda runs) fed from the stream until the server
    stops it (``stop``, a :class:`~mnemo.local.background.PipeStop`)."""
    from functions.indexer.handler import lambda_handler
    from mnemo import runtime

    if settings is not None:
        runtime.use(None, settings)
    dynamodb, streams = clients(runtime.settings())
    mapping = StreamMapping(dynamodb, streams, runtime.settings().memories_table, lambda_handler)
    mapping.run(stop)
