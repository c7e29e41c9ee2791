"""Supersession and history on the wire (docs/contract.md §3, "Supersession" and memory_history):
over REST a refused ``supersedes`` answers its status (404, 400, 409) with the ``{message, code}``
body of docs/contract.md §4 and changes nothing; over MCP the same refusal is an ``isError`` tool result
carrying that body and changes nothing; memory_history answers on both, and its tools/list entry
says it is read-only. The behaviour itself, on every backend: tests/contract/test_supersession.py
and test_history.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mnemo.api.http import Resolver
from mnemo.api.routers.mcp import mcp_router
from mnemo.api.routers.tools import tools_router
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.local.server import LocalContext
from mnemo.service import tenancy
from mnemo.service.identity import ADMIN
from mnemo.service.pipeline import Service

from tests.support.events import http_event
from tests.unit.test_wiring import Given

KEY = "test-supersession-key-0123456789"
OLD = "We deploy to production on Fridays."
NEW = "Deploys to production moved to Tuesdays."
UNKNOWN = "mem_01J00000000000000000000000"
TOOLS = ("memory_add", "memory_update", "memory_get", "memory_search", "memory_history")


@pytest.fixture
def given(tmp_path: Path) -> Iterator[Given]:
    backend = SqliteBackend(tmp_path / "own.db")
    tenancy.bootstrap(backend, plain_key=KEY)
    yield Given(Service(backend, embedder=None), Settings(backend="sqlite", data_dir=tmp_path / "unused"))
    backend.close()


def rest(given: Given, tool: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The status and body of ``POST /v1/tools/<tool>``."""
    app = Resolver(tools_router(given, *TOOLS))
    event = http_event(
        "memory_add.json", body=arguments, headers={"authorization": f"Bearer {KEY}"}, path=f"/v1/tools/{tool}"
    )
    answer = app.resolve(event, LocalContext("WriteFunction"))
    return answer["statusCode"], json.loads(answer["body"])


def mcp(given: Given, method: str, params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """The JSON-RPC result of one ``POST /mcp`` (the 2026-07-28 revision: its headers name the call)."""
    app = Resolver(mcp_router(given))
    body = json.loads(http_event("mcp_tools_call.json")["body"])
    body["method"], body["params"] = method, {"_meta": body["params"]["_meta"], **params}
    event = http_event(
        "mcp_tools_call.json",
        body=body,
        headers={"authorization": f"Bearer {KEY}", "mcp-method": method, **headers},
    )
    answer = app.resolve(event, LocalContext("McpFunction"))
    assert answer["statusCode"] == 200, answer["body"]
    reply = json.loads(answer["body"])
    assert "error" not in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def mcp_call(given: Given, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tools/call result: ``structuredContent``, ``isError`` and the text."""
    return mcp(given, "tools/call", {"name": tool, "arguments": arguments}, {"mcp-name": tool})


def everything(given: Given) -> list[dict[str, Any]]:
    """Every memory of the key's project, superseded ones included, as the service returns them
    (in process: the snapshot does not depend on the surface under test)."""
    caller = given.svc.authenticate(f"Bearer {KEY}")
    listed = given.svc.invoke("memory_search", caller, {"include_superseded": True, "limit": 100}).result
    return [m.model_dump(mode="json") for m in listed.memories]


def other_workspaces_memory(given: Given) -> str:
    workspace, _ = tenancy.create_workspace(given.svc.ports, "other")
    key = tenancy.create_key(given.svc.ports, workspace.id, label="admin", scopes=[ADMIN])
    caller = given.svc.authenticate(f"Bearer {key.plain}")
    return str(given.svc.invoke("memory_add", caller, {"content": "their memory"}).result.memory.id)


def saved(given: Given, content: str, **arguments: Any) -> dict[str, Any]:
    status, body = rest(given, "memory_add", {"content": content, **arguments})
    assert status == 200, body
    memory: dict[str, Any] = body["memory"]
    return memory


@pytest.fixture
def refusals(given: Given) -> dict[str, tuple[str, dict[str, Any], int, str]]:
    """Each refused supersession: (tool, arguments, status, code), with the memories it names."""
    old = saved(given, OLD)
    saved(given, "Deploys moved to Mondays.", supersedes=[old["id"]])  # old is superseded now
    third = saved(given, "Deploys run on Wednesdays.")
    theirs = other_workspaces_memory(given)
    many = [third["id"], *(f"mem_01J0000000000000000000{i:04d}" for i in range(20))]
    return {
        "unknown": ("memory_add", {"content": NEW, "supersedes": [UNKNOWN]}, 404, "not_found"),
        "another workspace's": ("memory_add", {"content": NEW, "supersedes": [third["id"], theirs]}, 404, "not_found"),
        "more than 20": ("memory_add", {"content": NEW, "supersedes": many}, 400, "invalid_request"),
        "itself": ("memory_update", {"id": third["id"], "supersedes": [third["id"]]}, 400, "invalid_request"),
        "superseded already": ("memory_add", {"content": NEW, "supersedes": [old["id"]]}, 409, "conflict"),
        "superseded already, by update": (
            "memory_update", {"id": third["id"], "supersedes": [old["id"]]}, 409, "conflict"
        ),
    }  # fmt: skip


CASES = [
    "unknown",
    "another workspace's",
    "more than 20",
    "itself",
    "superseded already",
    "superseded already, by update",
]


@pytest.mark.parametrize("case", CASES)
def test_over_rest_a_refused_supersedes_answers_its_status_and_changes_nothing(given, refusals, case):
    tool, arguments, status, code = refusals[case]
    before = everything(given)

    answer_status, body = rest(given, tool, arguments)

    assert (answer_status, body["code"]) == (status, code), body
    assert isinstance(body["message"], str) and body["message"]
    assert set(body) <= {"message", "code", "details"}
    assert everything(given) == before


@pytest.mark.parametrize("case", CASES)
def test_over_mcp_a_refused_supersedes_is_an_error_result_and_changes_nothing(given, refusals, case):
    tool, arguments, _, code = refusals[case]
    before = everything(given)

    result = mcp_call(given, tool, arguments)

    assert result["isError"] is True, result
    assert result["structuredContent"]["code"] == code
    assert result["structuredContent"]["message"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert everything(given) == before


def test_another_workspaces_id_answers_exactly_as_an_unknown_one_on_both_surfaces(given):
    theirs = other_workspaces_memory(given)

    foreign = rest(given, "memory_add", {"content": NEW, "supersedes": [theirs]})
    unknown = rest(given, "memory_add", {"content": NEW, "supersedes": [UNKNOWN]})
    foreign_mcp = mcp_call(given, "memory_add", {"content": NEW, "supersedes": [theirs]})
    unknown_mcp = mcp_call(given, "memory_add", {"content": NEW, "supersedes": [UNKNOWN]})

    assert foreign == unknown
    assert foreign_mcp["structuredContent"] == unknown_mcp["structuredContent"] == unknown[1]


def history_over_rest(given: Given, arguments: dict[str, Any]) -> dict[str, Any]:
    status, body = rest(given, "memory_history", arguments)
    assert status == 200, body
    return body


def history_over_mcp(given: Given, arguments: dict[str, Any]) -> dict[str, Any]:
    result = mcp_call(given, "memory_history", arguments)
    assert result["isError"] is False, result
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    structured: dict[str, Any] = result["structuredContent"]
    return structured


@pytest.mark.parametrize("history", [history_over_rest, history_over_mcp], ids=["rest", "mcp"])
def test_memory_history_answers_the_versions_newest_first_and_the_chain(given, history):
    first = saved(given, OLD)
    status, _ = rest(given, "memory_update", {"id": first["id"], "content": OLD + " After the review."})
    assert status == 200
    second = saved(given, NEW, supersedes=[first["id"]])

    oldest = history(given, {"id": first["id"]})
    newest = history(given, {"id": second["id"]})

    assert oldest["memory"]["version"] == 3  # added, updated, marked
    assert [(v["version"], v["content"]) for v in oldest["versions"]] == [
        (2, OLD + " After the review."),
        (1, OLD),
    ]
    assert oldest["superseded_by"] == [second["id"]]
    assert newest["supersedes"] == [first["id"]]
    assert newest["versions"] == []


@pytest.mark.parametrize(
    ("arguments", "status", "code"),
    [({"id": UNKNOWN}, 404, "not_found"), ({"id": UNKNOWN, "limit": 0}, 400, "invalid_request")],
)
def test_memory_history_refusals_are_the_error_body_on_both_surfaces(given, arguments, status, code):
    answer_status, body = rest(given, "memory_history", arguments)
    result = mcp_call(given, "memory_history", arguments)

    assert (answer_status, body["code"]) == (status, code)
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == code


def test_the_tools_list_entry_of_memory_history_says_it_is_read_only(given):
    listed = mcp(given, "tools/list", {}, {})["tools"]

    (entry,) = [tool for tool in listed if tool["name"] == "memory_history"]

    assert entry["annotations"]["readOnlyHint"] is True
    assert entry["annotations"]["destructiveHint"] is False
