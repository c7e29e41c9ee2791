"""Every file in events/ replayed through the handler that template.yaml routes it to."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from mnemo.local.routes import http_routes, match_route
from mnemo.local.server import LocalContext

from tests.support.events import EXPECTED

EVENTS = Path(__file__).resolve().parents[2] / "events"
HTTP_EVENTS = sorted(p for p in EVENTS.glob("*.json") if json.loads(p.read_text()).get("version") == "2.0")


def invoke(event: dict) -> dict:
    found = match_route(http_routes(), event["requestContext"]["http"]["method"], event["rawPath"])
    assert found is not None, f"template.yaml has no route for {event['routeKey']}"
    route, _ = found
    assert route.route_key == event["routeKey"]
    handler = getattr(importlib.import_module(route.module), route.attribute)
    return handler(event, LocalContext(route.function))


@pytest.mark.parametrize("path", HTTP_EVENTS, ids=lambda p: p.name)
def test_event_replays_through_its_handler(wired_runtime, path):
    response = invoke(json.loads(path.read_text()))

    body = json.loads(response["body"])
    assert response["statusCode"] == EXPECTED.get(path.name, 200), body
    if response["statusCode"] >= 400:
        assert set(body) >= {"message", "code"}
        assert "Traceback" not in response["body"]


def test_sample_add_then_search_finds_it(wired_runtime):
    invoke(json.loads((EVENTS / "memory_add.json").read_text()))

    response = invoke(json.loads((EVENTS / "memory_search.json").read_text()))

    memories = json.loads(response["body"])["memories"]
    assert [m["tags"] for m in memories] == [["reddit", "rules"]]
    assert response["headers"]["RateLimit-Policy"] == '"search";q=120;w=60'


def test_sample_add_then_search_memory_and_recall_context_find_it(wired_runtime):
    invoke(json.loads((EVENTS / "memory_add.json").read_text()))

    strict = json.loads(invoke(json.loads((EVENTS / "search_memory.json").read_text()))["body"])
    context = json.loads(invoke(json.loads((EVENTS / "recall_context.json").read_text()))["body"])

    assert strict["matched"] is True
    assert strict["results"][0]["explanation"]["matched_terms"] == ["reddit", "help"]
    assert context["references"] == [strict["results"][0]["reference"]]
    assert "Reddit r/SaaS" in context["context"]


def test_a_write_tool_sent_to_the_search_function_is_not_served(wired_runtime):
    from functions.read.handler import lambda_handler

    event = json.loads((EVENTS / "memory_add.json").read_text())
    response = lambda_handler(event, LocalContext("ReadFunction"))

    assert response["statusCode"] == 404
    assert (
        wired_runtime.invoke(
            "memory_search", wired_runtime.authenticate("Bearer test-events-key-0123456789"), {}
        ).result.memories
        == []
    )


def test_every_template_route_has_an_importable_handler():
    for route in http_routes():
        module = importlib.import_module(route.module)
        assert callable(getattr(module, route.attribute)), route
