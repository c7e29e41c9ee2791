"""Nothing a caller sent or Mnemo stores reaches a trace or a log line. Every built function ran
with tracing active (a sampled trace id, ``LAMBDA_TASK_ROOT``, ``AWS_XRAY_DAEMON_ADDRESS`` pointing
at a local UDP listener), so every segment the X-Ray SDK sent is here to search: no API key (the
events' or a newly created one), no memory content, no AWS credential — in any trace or log."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.built.conftest import (
    CREDENTIALS,
    EVENTS_KEY,
    IDEMPOTENT_CONTENT,
    OUTAGE_CONTENT,
    POISON_CONTENT,
    BuiltStack,
    Run,
)
from tests.support import events as samples

pytestmark = [pytest.mark.slow]


def contents_of_the_samples() -> list[str]:
    """Every memory content the sample events write."""
    found = []
    for path in sorted(samples.EVENTS.glob("*.json")):
        body = json.loads(path.read_text()).get("body")
        if not body:
            continue
        args = json.loads(body)
        args = args.get("params", {}).get("arguments", args) if "jsonrpc" in args else args
        # a content of a word or two ("new", memory_update_unknown.json) is no evidence of a leak
        # when it turns up (any trace may say "new"): only distinctive contents are searched for
        if isinstance(args.get("content"), str) and 12 <= len(args["content"]) < 1000:
            found.append(args["content"])
    return found


@pytest.fixture(scope="module")
def secrets(built_runs: dict[str, Run]) -> dict[str, str]:
    """What must never appear: keys, credentials, contents (distinctive substrings of them)."""
    created = built_runs["admin"].body("admin_key_create.json")["secret"]
    found = {"events' API key": EVENTS_KEY, "created API key": created}
    found.update({f"credential {name}": value for name, value in CREDENTIALS.items()})
    contents = [*contents_of_the_samples(), OUTAGE_CONTENT, IDEMPOTENT_CONTENT, POISON_CONTENT, "新的内容"]
    found.update({f"content {c[:24]!r}": c[: max(4, len(c) // 2)] for c in contents})
    assert len(contents) >= 7
    return found


def subsegments(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for doc in docs:
        out.append(doc)
        out.extend(subsegments(doc.get("subsegments", [])))
    return out


def test_every_invocation_was_traced(built_stack: BuiltStack, built_runs: dict[str, Run]):
    """The leak checks below look at real segments: each invocation sent its handler subsegment,
    and each DynamoDB call its botocore subsegment."""
    for run in built_stack.runs:
        for name, root in run.traces.items():
            names = [d["name"] for d in subsegments(built_stack.xray.documents(root))]
            assert "## lambda_handler" in names, (run.function, name, names)
    write_trace = built_runs["write"].traces["memory_add.json"]
    docs = subsegments(built_stack.xray.documents(write_trace))
    calls = [(d["aws"]["operation"], d["aws"].get("table_name")) for d in docs if d.get("namespace") == "aws"]
    # the add's commit: the memory and its dedup claim in one transaction (X-Ray names no table for it)
    assert "TransactWriteItems" in [operation for operation, _ in calls], calls


def test_no_secret_and_no_memory_content_in_any_trace(built_stack: BuiltStack, secrets: dict[str, str]):
    raw = "\n".join(built_stack.xray.raw)
    decoded = built_stack.xray.text()
    assert len(built_stack.xray.raw) > 50

    leaked = [what for what, value in secrets.items() if value in raw or value in decoded]

    assert leaked == []


def test_no_response_and_no_error_metadata_in_the_handler_subsegments(built_stack: BuiltStack):
    handlers = [d for d in subsegments(built_stack.xray.documents()) if d["name"] == "## lambda_handler"]

    assert handlers
    assert [d["metadata"] for d in handlers if d.get("metadata")] == []


def test_a_crash_is_traced_by_type_and_place_only(built_stack: BuiltStack, built_runs: dict[str, Run]):
    """A batch whose every record is unreadable fails the invocation (the stream retries it); what
    escapes the handler names the failure without the text of the records' errors, which quote
    the records."""
    run = built_runs["indexer"]
    assert run.results["poison_stream"]["error"] == "HandlerFailed"
    docs = subsegments(built_stack.xray.documents(run.traces["poison_stream"]))
    (handler,) = [d for d in docs if d["name"] == "## lambda_handler"]

    exceptions = handler["cause"]["exceptions"]
    assert [e["type"] for e in exceptions] == ["HandlerFailed"]
    assert exceptions[0]["message"].startswith("BatchProcessingError at ")
    assert POISON_CONTENT[:20] not in json.dumps(handler)


def test_no_secret_and_no_memory_content_in_any_log(built_stack: BuiltStack, secrets: dict[str, str]):
    logs = "\n".join(run.logs for run in built_stack.runs)
    assert "invocation failed" in logs  # the poison batch was logged, by type and place

    leaked = [what for what, value in secrets.items() if value in logs]

    assert leaked == []
