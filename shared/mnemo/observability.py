"""Logging, metrics and tracing: one Powertools ``Logger``, ``Metrics`` and ``Tracer`` per process,
built here and imported wherever they are needed (handlers decorate with them; the service and
the API log through ``logger``).

``tracer`` is built on first use: Powertools' ``Tracer()`` imports the X-Ray SDK and botocore's
session with it (a heavy import: bench/results/docstring-figures.md), which only a traced Lambda function needs. Where
Powertools would trace nothing — outside Lambda (no ``LAMBDA_TASK_ROOT``: ``mnemo serve``, its
handler instances, the CLI, the tests), under ``sam local``, or with ``POWERTOOLS_TRACE_DISABLED`` —
``tracer`` is :class:`Untraced`, whose decorators return the handler itself, and the SDK is never
imported (each ``mnemo serve`` imports the handlers twice: in the server and in the forkserver its
instances are forked from). In Lambda it patches botocore only (a subsegment per DynamoDB call):
Powertools' default would also patch sqlite3, requests and others, importing them for nothing.
(The X-Ray SDK's http.client patch records nothing of urllib3 2's requests, so OpenSearch calls
show as time inside the handler's subsegment.)

Nothing a caller sent or stored goes into a trace or a log line: the handlers trace with
``capture_response=False`` / ``capture_error=False`` (a response can hold a new key's secret or
memory contents), and :func:`contain_errors` makes sure an exception escaping a handler — which
the X-Ray SDK records with its message, and Lambda logs — carries only a type and a place.
"""

from __future__ import annotations

import functools
import os
import traceback
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools import Logger, Metrics

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

SERVICE = "mnemo"
#: CloudWatch namespace of every metric (EMF needs one, or Powertools refuses to flush)
NAMESPACE = "Mnemo"

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)

#: what the X-Ray SDK records subsegments for
TRACED_MODULES = ("botocore",)

# ``log_metrics`` warns on every invocation that recorded no metric; /healthz, /openapi.json and
# the admin routes record none by design, so the warning is noise (on the local server's console
# and in every such Lambda log). Only this message is silenced.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


class Untraced:
    """``tracer`` where Powertools' ``Tracer`` would record nothing: the decorators the handlers use
    return the function as it is (Powertools' disabled tracer still wraps every call in a no-op)."""

    def capture_lambda_handler(self, lambda_handler: Any = None, **_options: Any) -> Any:
        return lambda_handler if lambda_handler is not None else (lambda handler: handler)

    def capture_method(self, method: Any = None, **_options: Any) -> Any:
        return method if method is not None else (lambda function: function)


def tracing_on() -> bool:
    """Powertools' rule for whether its ``Tracer`` records (aws_lambda_powertools.tracing.Tracer):
    in Lambda (``LAMBDA_TASK_ROOT``), not under ``sam local`` or Chalice's local mode, and not
    turned off by ``POWERTOOLS_TRACE_DISABLED``."""
    from aws_lambda_powertools.shared.functions import resolve_truthy_env_var_choice

    if resolve_truthy_env_var_choice(env=os.getenv("POWERTOOLS_TRACE_DISABLED", "false")):
        return False
    return bool(os.getenv("LAMBDA_TASK_ROOT")) and not (os.getenv("AWS_SAM_LOCAL") or os.getenv("AWS_CHALICE_CLI_MODE"))


_tracer: Tracer | Untraced | None = None


def __getattr__(name: str) -> Any:
    if name == "tracer":
        global _tracer
        if _tracer is None:
            if tracing_on():
                from aws_lambda_powertools import Tracer

                _tracer = Tracer(service=SERVICE, patch_modules=TRACED_MODULES)
            else:
                _tracer = Untraced()
        return _tracer
    raise AttributeError(name)


tracer: Tracer  # built lazily by __getattr__ above (an Untraced where nothing would be traced)


def where(exc: BaseException, depth: int = 12) -> list[str]:
    """The innermost frames of ``exc`` as ``file.py:line in function``, without any message."""
    frames = traceback.extract_tb(exc.__traceback__)[-depth:]
    return [f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in frames]


class HandlerFailed(Exception):
    """Raised by :func:`contain_errors` in place of whatever escaped a handler: its message is
    the original's type and innermost place, nothing the exception's text might have quoted."""


F = TypeVar("F", bound=Callable[..., Any])


def contain_errors(handler: F) -> F:
    """Let no exception text out of a Lambda handler. An exception's message may quote user data
    (a pydantic error echoing a stored record, a driver echoing a request); the X-Ray SDK records
    the message of an exception that escapes the traced handler, and the runtime logs it. This
    logs the type and place of the exception (and of each record's, for a failed batch) and
    raises :class:`HandlerFailed` instead, so the invocation still fails (and is retried) as it
    would have."""

    @functools.wraps(handler)
    def contained(event: Any, context: Any) -> Any:
        try:
            return handler(event, context)
        except Exception as exc:  # noqa: BLE001 - re-raised, without its text
            places = where(exc)
            causes = [
                {"error_type": child[0].__name__, "where": where(child[1])[-1:]}
                for child in getattr(exc, "child_exceptions", None) or []
                if child and child[0] is not None and child[1] is not None
            ]
            logger.error(
                "invocation failed",
                extra={"error_type": type(exc).__name__, "where": places, "record_errors": causes},
            )
            raise HandlerFailed(f"{type(exc).__name__} at {places[-1] if places else '?'}") from None

    return contained  # type: ignore[return-value]
