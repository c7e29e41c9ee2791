"""The non-HTTP files in events/ (stream batches, schedules) replayed through the function that
template.yaml gives an event source of that type; and no file in events/ goes unreplayed."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mnemo.local.server import LocalContext
from mnemo.local.template import load_template

EVENTS = Path(__file__).resolve().parents[2] / "events"


def event_type(event: dict[str, Any]) -> str:
    """The SAM event source type a sample event comes from."""
    if event.get("version") == "2.0" and "routeKey" in event:
        return "HttpApi"
    records = event.get("Records") or [{}]
    if records[0].get("eventSource") == "aws:dynamodb":
        return "DynamoDB"
    if event.get("source") == "aws.events" and event.get("detail-type") == "Scheduled Event":
        return "Schedule"
    raise AssertionError(f"unknown event shape: {sorted(event)}")


def handler_for(source_type: str) -> tuple[str, Callable[[dict, Any], Any]]:
    """The one function whose Events include ``source_type``, imported as a package."""
    found = []
    for logical_id, resource in load_template()["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        if any(e.get("Type") == source_type for e in (props.get("Events") or {}).values()):
            found.append((logical_id, props))
    assert len(found) == 1, f"{source_type}: {[f[0] for f in found]}"
    logical_id, props = found[0]
    module, _, attribute = props["Handler"].rpartition(".")
    package = ".".join(p for p in props["CodeUri"].strip("/").split("/") if p)
    return logical_id, getattr(importlib.import_module(f"{package}.{module}"), attribute)


def samples(source_type: str) -> list[Path]:
    return sorted(p for p in EVENTS.glob("*.json") if event_type(json.loads(p.read_text())) == source_type)


def test_every_event_file_has_a_known_source_and_a_function_for_it():
    for path in sorted(EVENTS.glob("*.json")):
        source_type = event_type(json.loads(path.read_text()))
        if source_type != "HttpApi":  # HTTP samples are routed by path in test_events_replay
            handler_for(source_type)


@pytest.mark.parametrize("path", samples("Schedule"), ids=lambda p: p.name)
def test_schedule_event_runs_one_cleanup(wired_runtime, path):
    function, handler = handler_for("Schedule")

    summary = handler(json.loads(path.read_text()), LocalContext(function))

    assert summary["index_unavailable"] is False
    assert set(summary["counts"]) >= {"expired", "repaired", "reindexed", "purged"}
    assert summary["more"] is False
