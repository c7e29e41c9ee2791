"""The sample events of ``events/``: which function template.yaml sends each to, and the status
each HTTP sample must answer. Shared by the in-process replay (tests/unit/test_events_replay.py)
and the built-artifact run (tests/built/)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from mnemo.local.routes import http_routes, match_route

from tests.support.template import load_template

EVENTS = Path(__file__).resolve().parents[2] / "events"

#: what each HTTP sample must answer; every other HTTP sample must answer 200
EXPECTED = {
    "memory_add_too_large.json": 413,
    "memory_search_bad_limit.json": 400,
    "memory_get_unknown.json": 404,
    "memory_update_unknown.json": 404,
    "memory_delete_unknown.json": 404,
    "unknown_tool.json": 404,
    "search_memory_bad_pattern.json": 400,
    "forget_unknown.json": 404,
    "admin_key_create.json": 201,
    "admin_key_revoke_unknown.json": 404,
}


def load(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return event


def source_type(event: dict[str, Any]) -> str:
    """The SAM event source type a sample event comes from."""
    if event.get("version") == "2.0" and "routeKey" in event:
        return "HttpApi"
    records = event.get("Records") or [{}]
    if records[0].get("eventSource") == "aws:dynamodb":
        return "DynamoDB"
    if event.get("source") == "aws.events" and event.get("detail-type") == "Scheduled Event":
        return "Schedule"
    raise AssertionError(f"unknown event shape: {sorted(event)}")


def function_for(event: dict[str, Any]) -> str:
    """The logical id of the function template.yaml delivers ``event`` to."""
    kind = source_type(event)
    if kind == "HttpApi":
        found = match_route(http_routes(), event["requestContext"]["http"]["method"], event["rawPath"])
        assert found is not None, f"template.yaml has no route for {event['routeKey']}"
        return found[0].function
    owners = [
        logical_id
        for logical_id, resource in load_template()["Resources"].items()
        if resource.get("Type") == "AWS::Serverless::Function"
        and any(e.get("Type") == kind for e in (resource["Properties"].get("Events") or {}).values())
    ]
    assert len(owners) == 1, f"{kind}: {owners}"
    return owners[0]


def samples_by_function() -> dict[str, list[str]]:
    """Every file in events/, by the function it goes to (file names, sorted)."""
    out: dict[str, list[str]] = {}
    for path in sorted(EVENTS.glob("*.json")):
        out.setdefault(function_for(json.loads(path.read_text())), []).append(path.name)
    return out


def http_event(base: str, *, body: Any = None, headers: dict[str, str] | None = None, path: str | None = None) -> dict:
    """A variant of an HTTP sample: another JSON body, extra headers, another path."""
    event = copy.deepcopy(load(base))
    if body is not None:
        event["body"] = json.dumps(body)
    event["headers"].update(headers or {})
    if path is not None:
        event["rawPath"] = event["requestContext"]["http"]["path"] = path
    return event
