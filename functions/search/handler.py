"""Read tools (rate class ``search``), ``GET /openapi.json`` and ``GET /healthz``."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mnemo.api.rest import build_app
from mnemo.observability import logger, metrics, tracer

app = build_app({"search"}, meta=True)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
