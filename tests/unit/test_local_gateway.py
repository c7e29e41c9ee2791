"""The local gateway runs one handler invocation at a time, as a Lambda instance does."""

from __future__ import annotations

import threading
import time

from mnemo.local.routes import http_routes
from mnemo.local.server import LocalGateway


def test_handler_invocations_never_overlap_even_across_functions():
    gateway = LocalGateway()
    running = 0
    most = 0
    guard = threading.Lock()

    def handler(event, context):
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(0.005)
        with guard:
            running -= 1
        return {"statusCode": 200, "body": "{}"}

    for route in http_routes():
        gateway._handlers[route.function] = handler
    targets = ["/v1/tools/memory_add", "/v1/tools/memory_search", "/mcp", "/healthz"]
    threads = [
        threading.Thread(
            target=gateway.dispatch,
            args=("GET" if target == "/healthz" else "POST", target, {}, b"{}"),
        )
        for target in targets * 5
    ]

    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert most == 1


class CountingEmbedder:
    model = "counting"
    dim = 2

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return [[1.0, 0.0] for _ in texts]


def test_warming_an_instance_loads_the_embedder_before_its_first_request(tmp_path):
    from mnemo import runtime
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.config import Settings
    from mnemo.service.pipeline import Service

    embedder = CountingEmbedder()
    svc = Service(SqliteBackend(tmp_path / "mnemo.db"), embedder=embedder)

    with runtime.using(svc, Settings(data_dir=tmp_path)):
        LocalGateway().warm()

    assert embedder.calls == 1
    svc.ports.close()
