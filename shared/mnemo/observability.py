"""Logging, metrics and tracing: one Powertools ``Logger``, ``Metrics`` and ``Tracer`` per process,
built here and imported wherever they are needed (handlers decorate with them; the service and
the API log through ``logger``).

``tracer`` is built on first use: Powertools' ``Tracer()`` imports the X-Ray SDK (≈ 0.2 s), which
only the Lambda handlers need, not the CLI or the stdio MCP server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

SERVICE = "mnemo"
#: CloudWatch namespace of every metric (EMF needs one, or Powertools refuses to flush)
NAMESPACE = "Mnemo"

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)

_tracer: Tracer | None = None


def __getattr__(name: str) -> Any:
    if name == "tracer":
        global _tracer
        if _tracer is None:
            from aws_lambda_powertools import Tracer

            _tracer = Tracer(service=SERVICE)
        return _tracer
    raise AttributeError(name)


tracer: Tracer  # built lazily by __getattr__ above
