"""A handler instance for worker-pool tests: the request's path says what the instance does, so a
test can make one call slow, crash its instance or record a metric, with no handler involved."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mnemo.local.gateway import Answer


class ScriptedGateway:
    """``/sleep/<seconds>``, ``/hold/<folder>``, ``/crash``, ``/metric/<name>``; anything else
    answers at once. Every answer names the instance's pid and the budget the pool gave the call.

    ``/hold/<folder>`` writes ``<folder>/held-<pid>`` and answers once ``<folder>/release`` exists
    (see :class:`Hold`): a call that lasts exactly as long as the test needs, however loaded the
    machine, where a ``/sleep`` may end before the test has looked or outlast what it waited for."""

    def warm(self) -> None:
        pass

    def close(self) -> None:
        pass

    def dispatch(
        self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str, budget_s: float
    ) -> Answer:
        if target.startswith("/sleep/"):
            time.sleep(float(target.removeprefix("/sleep/")))
        elif target.startswith("/hold/"):
            folder = Path(target.removeprefix("/hold/"))
            (folder / f"held-{os.getpid()}").touch()
            deadline = time.monotonic() + 120
            while not (folder / "release").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        elif target == "/crash":
            os._exit(3)
        elif target.startswith("/metric/"):
            from aws_lambda_powertools.metrics import MetricUnit
            from mnemo.observability import metrics

            metrics.add_metric(name=target.removeprefix("/metric/"), unit=MetricUnit.Count, value=1)
        payload = {"pid": os.getpid(), "budget_s": budget_s, "path": target, "body": body.decode()}
        return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()


class Hold:
    """The test's side of ``/hold/<folder>``: the path to call, the pids holding a call, release."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = f"/hold/{folder}"

    def holders(self) -> set[int]:
        return {int(p.name.removeprefix("held-")) for p in self.folder.glob("held-*")}

    def release(self) -> None:
        (self.folder / "release").touch()
