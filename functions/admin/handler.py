"""AdminFunction: workspace administration under ``/v1/admin`` (keys, projects, limits, privacy), for ``admin`` keys."""

from mnemo import coldstart  # first: no garbage collection while the function loads (until done() below)

# isort: split
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mnemo import runtime
from mnemo.api.http import Resolver
from mnemo.api.routers.admin import admin_router
from mnemo.observability import contain_errors, logger, metrics, tracer

app = Resolver(
    admin_router(
        runtime,
        "admin_keys_list",
        "admin_key_create",
        "admin_key_revoke",
        "admin_projects_list",
        "admin_project_create",
        "admin_limits_get",
        "admin_principals_list",
        "admin_principal_bind",
        "admin_principal_remove",
        "admin_privacy_get",
        "admin_privacy_set",
    ),
    root=runtime,
)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
@contain_errors
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)


coldstart.done()
