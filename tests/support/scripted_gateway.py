"""A handler instance for worker-pool tests: the request's path says what the instance does, so a
test can make one call slow, crash its instance or record a metric, with no handler involved."""

from __future__ import annotations

import json
import os
import time

from mnemo.local.gateway import Answer


class ScriptedGateway:
    """``/sleep/<seconds>``, ``/crash``, ``/metric/<name>``; anything else answers at once. Every
    answer names the instance's pid and the budget the pool gave the call."""

    def warm(self) -> None:
        pass

    def close(self) -> None:
        pass

    def dispatch(
        self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str, budget_s: float
    ) -> Answer:
        if target.startswith("/sleep/"):
            time.sleep(float(target.removeprefix("/sleep/")))
        elif target == "/crash":
            os._exit(3)
        elif target.startswith("/metric/"):
            from aws_lambda_powertools.metrics import MetricUnit
            from mnemo.observability import metrics

            metrics.add_metric(name=target.removeprefix("/metric/"), unit=MetricUnit.Count, value=1)
        payload = {"pid": os.getpid(), "budget_s": budget_s, "path": target, "body": body.decode()}
        return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()
