"""The /v1/admin routes through the AdminFunction handler: secrets never reach the logs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from mnemo.local.server import LocalContext

from tests.conftest import EVENTS_KEY

EVENTS = Path(__file__).resolve().parents[2] / "events"


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(f"{record.getMessage()} {record.__dict__}")


def test_keys_and_secrets_never_reach_the_logs(wired_runtime, capfd):
    from functions.admin.handler import lambda_handler

    service_logger = logging.getLogger("mnemo")  # Powertools' Logger(service="mnemo") underneath
    collect = _Collect()
    service_logger.addHandler(collect)
    level = service_logger.level
    service_logger.setLevel(logging.DEBUG)
    try:
        event = json.loads((EVENTS / "admin_key_create.json").read_text())
        created = lambda_handler(event, LocalContext("AdminFunction"))
        secret = json.loads(created["body"])["secret"]
        event["headers"]["authorization"] = "Bearer mnemo_not-a-real-key-0123456789"
        refused = lambda_handler(event, LocalContext("AdminFunction"))
    finally:
        service_logger.removeHandler(collect)
        service_logger.setLevel(level)

    printed = capfd.readouterr()
    logs = "\n".join([*collect.seen, printed.out, printed.err])
    assert (created["statusCode"], refused["statusCode"]) == (201, 401)
    assert "admin call" in logs  # the handler does log
    for secret_text in (secret, EVENTS_KEY, "not-a-real-key"):
        assert secret_text not in logs


def test_a_key_created_over_http_is_listed_without_its_secret(wired_runtime):
    from functions.admin.handler import lambda_handler

    created = lambda_handler(json.loads((EVENTS / "admin_key_create.json").read_text()), LocalContext("AdminFunction"))
    listed = lambda_handler(json.loads((EVENTS / "admin_keys_list.json").read_text()), LocalContext("AdminFunction"))

    body = json.loads(created["body"])
    assert body["key"] in json.loads(listed["body"])["keys"]
    assert body["secret"] not in listed["body"]
    assert "salt" not in listed["body"] and "secret_hash" not in listed["body"]


#: the workspace operations the read function serves: the export reads memories, which only the
#: read function may; whoami is the console's first call
ON_THE_READ_FUNCTION = {"admin_project_export", "whoami"}


def test_every_workspace_operation_has_a_route_of_the_function_its_data_needs_and_an_openapi_operation():
    from mnemo.api.openapi import build_openapi
    from mnemo.local.routes import http_routes
    from mnemo.service.catalog import ADMIN_OPERATIONS

    routes = {(r.method, r.path): r.function for r in http_routes()}
    doc = build_openapi()

    for op in ADMIN_OPERATIONS.values():
        wanted = "ReadFunction" if op.name in ON_THE_READ_FUNCTION else "AdminFunction"
        assert routes.get((op.method, op.path)) == wanted, op.name
        assert doc["paths"][op.path][op.method.lower()]["operationId"] == op.name
    assert {path for (_, path), fn in routes.items() if fn == "AdminFunction"} == {
        op.path for op in ADMIN_OPERATIONS.values() if op.name not in ON_THE_READ_FUNCTION
    }
