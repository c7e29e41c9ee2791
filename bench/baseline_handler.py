"""The cold-start baseline: a minimal Powertools HTTP API handler that imports boto3.

It has what every Mnemo function has from Powertools (Logger, Tracer, Metrics and the
APIGatewayHttpResolver, with the same decorators) and one route, and imports boto3 as any
handler talking to AWS does (no client is created at import). ``bench.coldstart`` divides each
function's import time by this module's.
"""

import boto3  # noqa: F401 - the import is the point
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger(service="baseline")
tracer = Tracer(service="baseline")
metrics = Metrics(namespace="Baseline", service="baseline")
app = APIGatewayHttpResolver()


@app.get("/healthz")
def healthz() -> dict:
    return {"status": "ok"}


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
