"""memory_add's ``similar`` on the wire: the REST answer and the MCP tool result carry it (the
memory first saved is listed when a second on its subject is added), and the MCP tool listing
declares it in memory_add's output schema (docs/contract.md, "Similar memories")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemo.api.http import Resolver
from mnemo.api.routers.mcp import build_catalog, mcp_router
from mnemo.api.routers.tools import tools_router
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.local.server import LocalContext
from mnemo.service import tenancy
from mnemo.service.pipeline import Service

from tests.support.events import http_event
from tests.unit.test_wiring import Given

KEY = "test-similar-key-0123456789"
OLD = "We deploy to production on Fridays after the weekly review."
NEW = "Deploys to production moved to Tuesdays, after the weekly review."


@pytest.fixture
def given(tmp_path: Path) -> Iterator[Given]:
    backend = SqliteBackend(tmp_path / "own.db")
    tenancy.bootstrap(backend, plain_key=KEY)
    yield Given(Service(backend, embedder=None), Settings(backend="sqlite", data_dir=tmp_path / "unused"))
    backend.close()


def rest_add(given: Given, content: str) -> dict:
    app = Resolver(tools_router(given, "memory_add"))
    event = http_event("memory_add.json", body={"content": content}, headers={"authorization": f"Bearer {KEY}"})
    answer = app.resolve(event, LocalContext("WriteFunction"))
    assert answer["statusCode"] == 200, answer["body"]
    return json.loads(answer["body"])


def mcp_add(given: Given, content: str) -> dict:
    app = Resolver(mcp_router(given))
    base = http_event("mcp_tools_call.json")
    body = json.loads(base["body"])
    body["params"]["arguments"] = {"content": content}
    event = http_event("mcp_tools_call.json", body=body, headers={"authorization": f"Bearer {KEY}"})
    answer = app.resolve(event, LocalContext("McpFunction"))
    assert answer["statusCode"] == 200, answer["body"]
    result = json.loads(answer["body"])["result"]
    assert result["isError"] is False, result
    return result["structuredContent"]


@pytest.mark.parametrize("add", [rest_add, mcp_add], ids=["rest", "mcp"])
def test_the_answer_lists_the_memory_on_the_same_subject(given, add):
    old = add(given, OLD)
    assert old["similar"] == []

    new = add(given, NEW)

    assert [(s["reference"], s["content"]) for s in new["similar"]] == [(old["memory"]["id"], OLD)]
    assert 0 < new["similar"][0]["similarity"] <= 1


def test_the_mcp_output_schema_of_memory_add_declares_similar():
    (tool,) = [t for t in build_catalog() if t.name == "memory_add"]

    schema = tool.output_schema
    similar = schema["$defs"]["MemoryAddResult"]["properties"]["similar"]

    assert similar["type"] == "array"
    item = schema["$defs"][similar["items"]["$ref"].rsplit("/", 1)[1]]
    assert set(item["required"]) == {"reference", "similarity", "content"}
