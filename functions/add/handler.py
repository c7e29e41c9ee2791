"""Write tools (rate class ``write``): memory_add, memory_update, memory_delete, forget."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mnemo.api.rest import build_app
from mnemo.observability import logger, metrics, tracer

app = build_app({"write"})


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
