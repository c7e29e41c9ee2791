"""DynamoDB stream of the memories table → OpenSearch: each record applied with its external
version (idempotent, order-safe); failed records are reported, so only they are retried."""

from mnemo import coldstart  # first: no garbage collection while the function loads (until done() below)

# isort: split
from datetime import timedelta

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from mnemo import runtime
from mnemo.observability import contain_errors, logger, metrics, tracer
from mnemo.service import indexer

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def record_handler(record: DynamoDBRecord) -> str:
    change = runtime.stream_change(record.raw_event)
    if change is None:
        return "skipped"
    verify_after = timedelta(seconds=runtime.settings().indexer_verify_after_s)
    outcome = indexer.apply_change(runtime.service().ports, change, verify_after=verify_after)
    metrics.add_metric(name=f"Indexer{outcome.capitalize()}", unit=MetricUnit.Count, value=1)
    return outcome


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
@contain_errors
def lambda_handler(event: dict, context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)


coldstart.done()
