"""WriteFunction: the write tools — memory_add, memory_update, memory_delete, forget."""

from mnemo import coldstart  # first: no garbage collection while the function loads (until done() below)

# isort: split
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mnemo import runtime
from mnemo.api.http import Resolver
from mnemo.api.routers.tools import tools_router
from mnemo.observability import contain_errors, logger, metrics, tracer

app = Resolver(tools_router(runtime, "memory_add", "memory_update", "memory_delete", "forget"), root=runtime)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
@contain_errors
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)


coldstart.done()
