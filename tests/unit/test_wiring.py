"""Explicit wiring: a router serves the service its ``ServiceProvider`` gives it, and the stdio
MCP server the service it is handed: the memory lands in that service's own store. No
process-wide service is involved (``runtime.use`` is not called here; the layer test keeps
``mnemo.api`` from importing ``mnemo.runtime``)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mnemo.api.http import Resolver
from mnemo.api.routers.mcp import mcp_router, serve_stdio
from mnemo.api.routers.tools import tools_router
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.local.server import LocalContext
from mnemo.ports import Scope
from mnemo.service import tenancy
from mnemo.service.between import Between
from mnemo.service.identity import local_caller
from mnemo.service.pipeline import Service

from tests.support.events import http_event

KEY = "test-wiring-key-0123456789"


@dataclass
class Given:
    """A ``ServiceProvider`` of the test's own."""

    svc: Service
    cfg: Settings

    def service(self) -> Service:
        return self.svc

    def settings(self) -> Settings:
        return self.cfg


@pytest.fixture
def given(tmp_path: Path) -> Iterator[Given]:
    backend = SqliteBackend(tmp_path / "own.db")
    tenancy.bootstrap(backend, plain_key=KEY)
    yield Given(Service(backend, embedder=None), Settings(backend="sqlite", data_dir=tmp_path / "unused"))
    backend.close()


def _scope(svc: Service) -> Scope:
    caller = svc.authenticate(f"Bearer {KEY}")
    return Scope(caller.workspace_id, svc.resolve_project(caller, None, None).id)


def _stored(svc: Service, answer: dict) -> str:
    """The content the service's own store holds under the memory id of a tool's answer."""
    memory_id = answer["memory"]["id"]
    return svc.ports.store.get(_scope(svc), memory_id).content


def test_a_tools_router_serves_the_service_it_is_given(given):
    app = Resolver(tools_router(given, "memory_add"))
    event = http_event("memory_add.json", body={"content": "wired by hand"}, headers={"authorization": f"Bearer {KEY}"})

    answer = app.resolve(event, LocalContext("WriteFunction"))

    assert answer["statusCode"] == 200, answer["body"]
    assert _stored(given.svc, json.loads(answer["body"])) == "wired by hand"


def test_the_mcp_router_serves_the_service_it_is_given(given):
    app = Resolver(mcp_router(given))
    event = http_event("mcp_tools_call.json", headers={"authorization": f"Bearer {KEY}"})  # a memory_add

    answer = app.resolve(event, LocalContext("McpFunction"))

    assert answer["statusCode"] == 200, answer["body"]
    result = json.loads(answer["body"])["result"]
    assert result["isError"] is False, result
    assert (
        _stored(given.svc, result["structuredContent"]) == json.loads(event["body"])["params"]["arguments"]["content"]
    )


def test_the_stdio_server_serves_the_service_it_is_handed(given):
    scope = _scope(given.svc)
    call = http_event("mcp_tools_call.json")["body"]  # the same memory_add, as one stdio message
    out = io.BytesIO()

    serve_stdio(
        given.svc,
        local_caller(scope.workspace_id, scope.project_id, "stdio-test"),
        io.BytesIO(call.encode() + b"\n"),
        out,
        max_message_bytes=65536,
    )

    result = json.loads(out.getvalue().decode().splitlines()[0])["result"]
    assert result["isError"] is False, result
    assert _stored(given.svc, result["structuredContent"]) == json.loads(call)["params"]["arguments"]["content"]


def test_the_stdio_server_hands_the_services_vectors_to_its_serving_thread(given, monkeypatch):
    """``mnemo mcp``: vectors made after an answer are stored between messages on the thread that
    serves them (``EmbedAfter.hand_over``, through ``Service.between``), and handed back when the
    session ends."""
    scope = _scope(given.svc)
    calls: list[str] = []

    class Recorder:
        def hand_over(self, wake) -> None:
            calls.append("hand_over")

        def write_ready(self) -> int:
            return 0

        def hand_back(self) -> None:
            calls.append("hand_back")

        def submit(self, record) -> None:
            calls.append("submit")

    recorder = Recorder()
    monkeypatch.setattr(given.svc, "embed_after", recorder)
    monkeypatch.setattr(given.svc, "between", Between(given.svc.ports, recorder))
    call = http_event("mcp_tools_call.json")["body"]
    serve_stdio(
        given.svc,
        local_caller(scope.workspace_id, scope.project_id, "stdio-test"),
        io.BytesIO(call.encode() + b"\n"),
        io.BytesIO(),
        max_message_bytes=65536,
    )
    assert calls[0] == "hand_over" and calls[-1] == "hand_back"
    assert "submit" in calls
