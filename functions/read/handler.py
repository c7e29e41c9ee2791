"""ReadFunction: the read tools — memory_get, memory_search, search_memory, recall, recall_context —,
404 for any other tool name, ``GET /v1/whoami``, the project export (``POST /v1/admin/export``: it
reads memories, which this function may), ``GET /openapi.json``, ``GET /healthz`` and the console
(``GET /console`` and its files)."""

from mnemo import coldstart  # first: no garbage collection while the function loads (until done() below)

# isort: split
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mnemo import runtime
from mnemo.api.http import Resolver
from mnemo.api.routers.admin import admin_router
from mnemo.api.routers.console import console_router
from mnemo.api.routers.meta import meta_router
from mnemo.api.routers.tools import tools_router
from mnemo.observability import contain_errors, logger, metrics, tracer

app = Resolver(
    tools_router(
        runtime,
        "memory_get",
        "memory_history",
        "memory_search",
        "search_memory",
        "recall",
        "recall_context",
        unknown=True,
    ),
    admin_router(runtime, "whoami", "admin_project_export"),
    meta_router(runtime),
    console_router(),
    root=runtime,
)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
@contain_errors
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)


coldstart.done()
