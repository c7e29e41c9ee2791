"""The local gateway runs one handler invocation at a time, as a Lambda instance does."""

from __future__ import annotations

import threading
import time

import pytest
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
    """A remote embedder (no ``load``): warming never calls it."""

    model = "counting"
    dim = 2

    def __init__(self) -> None:
        self.calls = 0
        self.loads = 0

    def embed(self, texts):
        self.calls += 1
        return [[1.0, 0.0] for _ in texts]


class LocalCountingEmbedder(CountingEmbedder):
    """A local model (``load``): warming loads it and embeds once."""

    def load(self) -> None:
        self.loads += 1


@pytest.mark.parametrize(("kind", "expected"), [(LocalCountingEmbedder, (1, 1)), (CountingEmbedder, (0, 0))])
def test_warming_an_instance_loads_a_local_embedder_before_its_first_request_and_calls_no_remote_one(
    tmp_path, kind, expected
):
    from mnemo import runtime
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.config import Settings
    from mnemo.service.pipeline import Service

    embedder = kind()
    svc = Service(SqliteBackend(tmp_path / "mnemo.db"), embedder=embedder)

    with runtime.using(svc, Settings(data_dir=tmp_path)):
        LocalGateway().warm()

    assert (embedder.loads, embedder.calls) == expected
    svc.ports.close()
