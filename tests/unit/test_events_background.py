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

from tests.support.events import EVENTS
from tests.support.events import source_type as event_type
from tests.support.template import load_template


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


@pytest.mark.aws
@pytest.mark.parametrize("path", samples("DynamoDB"), ids=lambda p: p.name)
def test_stream_event_is_applied_to_the_index(aws_stack, aws_backend, path):
    """The sample's images are older than the indexer's verification age and their records do not
    exist in this store, so verification is switched off: the images are applied as they are."""
    from mnemo import runtime
    from mnemo.backends.aws.mapping import doc_id
    from mnemo.embedding import default_embedder
    from mnemo.service.pipeline import Service

    event = json.loads(path.read_text())
    runtime.use(
        Service(aws_backend, embedder=default_embedder()),
        aws_stack.model_copy(update={"indexer_verify_after_s": 10**9}),
    )
    try:
        function, handler = handler_for("DynamoDB")
        response = handler(event, LocalContext(function))
    finally:
        runtime.use(None)

    assert response == {"batchItemFailures": []}
    expected: dict[str, tuple[int, bool]] = {}
    for record in event["Records"]:  # the last change of each memory decides
        data = record["dynamodb"]
        image = data.get("NewImage") or data["OldImage"]
        version = int(image["version"]["N"])
        removed = record["eventName"] == "REMOVE"
        expected[image["id"]["S"]] = (version + 1, True) if removed else (version, False)
    project = event["Records"][0]["dynamodb"]["Keys"]["pk"]["S"].split("#PRJ#")[1]
    docs = [{"_id": doc_id(project, memory_id), "routing": project} for memory_id in expected]
    out = aws_backend.index.client.mget(index=aws_backend.index.alias, body={"docs": docs})
    held = {d["_source"]["id"]: (d["_version"], bool(d["_source"].get("deleted"))) for d in out["docs"] if d["found"]}
    assert held == expected
