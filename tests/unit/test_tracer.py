"""``mnemo.observability.tracer``: Powertools' Tracer where it records (in Lambda), and where it would
record nothing a pass-through that never imports the X-Ray SDK — which ``mnemo serve`` would
otherwise import twice per start (≈ 0.45 s each), and every CLI call and test server once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: imports a handler in a fresh interpreter, as a server instance does, then says what it got
PROBE = """
import json, sys
import functions.write.handler as write
from mnemo import observability
print(json.dumps({
    "tracer": type(observability.tracer).__name__,
    "xray_imported": "aws_xray_sdk" in sys.modules,
    "handler": callable(write.lambda_handler),
}))
"""

TRACING_ENV = ("LAMBDA_TASK_ROOT", "POWERTOOLS_TRACE_DISABLED", "AWS_SAM_LOCAL", "AWS_CHALICE_CLI_MODE")


def probe(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k not in TRACING_ENV}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "env",
    [
        {},  # mnemo serve, the CLI, a test: not in Lambda
        {"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "true"},
        {"LAMBDA_TASK_ROOT": "/var/task", "AWS_SAM_LOCAL": "true"},
    ],
    ids=["outside-lambda", "disabled", "sam-local"],
)
def test_where_nothing_would_be_traced_the_x_ray_sdk_is_never_imported(env):
    got = probe(**env)
    assert got["tracer"] == "Untraced"
    assert got["xray_imported"] is False
    assert got["handler"] is True


def test_in_lambda_the_handlers_are_traced_by_powertools():
    got = probe(LAMBDA_TASK_ROOT="/var/task", POWERTOOLS_TRACE_DISABLED="false")
    assert got["tracer"] == "Tracer"
    assert got["xray_imported"] is True


def test_the_pass_through_returns_each_function_itself():
    from mnemo.observability import Untraced

    def handler(event, context):
        return event

    untraced = Untraced()
    assert untraced.capture_lambda_handler(capture_response=False, capture_error=False)(handler) is handler
    assert untraced.capture_lambda_handler(handler) is handler
    assert untraced.capture_method(capture_response=False)(handler) is handler
    assert untraced.capture_method(handler) is handler
