"""Secrets and privacy, proved by scanning what the service writes: API keys are never logged nor
returned after creation, memory contents are never logged, and error bodies never carry internals.

A run sends distinctive canary strings (in contents, tags, paths, queries, keys and idempotency
keys) through every tool and every error path, then searches everything captured — the Powertools
JSON logs of the in-process handlers (file descriptors and the logging tree, at DEBUG), and the
whole output of a real ``mnemo serve -v`` — for any canary."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mnemo.local.routes import http_routes
from mnemo.local.server import LocalGateway
from mnemo.models.records import RateLimits
from mnemo.service import tenancy
from mnemo.service.catalog import TOOLS
from mnemo.service.identity import ADMIN, READ
from mnemo.service.pipeline import Service

from tests.conftest import EVENTS_KEY
from tests.hardening.conftest import SERVER_BACKENDS, UNLIMITED, backend_env, call
from tests.hardening.spec import INTERNALS, assert_spec_error
from tests.support.server import start_server, stop_server

pytestmark = [pytest.mark.slow]

CONTENT = "CanaryContent-q7Zx"  # every memory text carries it
KEY = "CanaryKey-admin-Vb3n-0123456789"
READ_KEY = "CanaryKey-reader-Hs5d-0123456789"
UNKNOWN_KEY = "CanaryKey-unknown-Lp2w-0123456789"
IDEMPOTENCY = "CanaryIdem-Rt8k"
QUERY = "CanaryQuery-Mw4c"
CANARIES = [CONTENT, KEY, READ_KEY, UNKNOWN_KEY, IDEMPOTENCY, QUERY, "CanaryTag-", "CanaryPath-", "CanarySource-"]


def exercise(send: Any) -> list[tuple[int, bytes]]:
    """Every tool and every error path, through ``send(tool, arguments, key=…, headers=…)``,
    which answers ``(status, body bytes)``. Returns every answer."""
    answers: list[tuple[int, bytes]] = []

    def go(tool: str, arguments: Any, expect: int, **kwargs: Any) -> Any:
        status, body = send(tool, arguments, **kwargs)
        answers.append((status, body))
        assert status == expect, body[:300]
        return json.loads(body)

    def content(n: int) -> str:
        return f"{CONTENT} number {n} with secrets"

    memory = go(
        "memory_add",
        {"content": content(1), "tags": ["CanaryTag-1"], "path": "CanaryPath-1", "source": "CanarySource-1"},
        200,
        headers={"Idempotency-Key": IDEMPOTENCY},
    )["memory"]
    go("memory_add", {"content": content(1), "tags": ["CanaryTag-1"]}, 409, headers={"Idempotency-Key": IDEMPOTENCY})
    go("memory_get", {"id": memory["id"]}, 200)
    go("memory_update", {"id": memory["id"], "content": content(2), "if_version": 1}, 200)
    go("memory_update", {"id": memory["id"], "content": content(3), "if_version": 1}, 409)
    go("memory_search", {"q": f"{CONTENT} {QUERY}"}, 200)
    go("memory_search", {"q": CONTENT, "tags": ["CanaryTag-1"]}, 200)
    for tool in ("search_memory", "recall"):
        if tool in TOOLS:
            go(tool, {"query": f"{CONTENT} {QUERY}", "explain": True}, 200)
    if "recall_context" in TOOLS:
        go("recall_context", {"query": CONTENT}, 200)
    go("memory_add", {"content": content(4) + "x" * 4096}, 413)
    go("memory_add", {"content": content(5), "kind": "CanaryTag-" + "k" * 64}, 400)
    go("memory_add", {"content": content(6), "contnet": content(6)}, 400)
    go("memory_add", {"content": content(7)}, 401, key=UNKNOWN_KEY)
    go("memory_add", {"content": content(8)}, 403, key=READ_KEY)
    go("memory_get", {"id": "mem_" + "0" * 26, "project": "CanaryPath-nowhere"}, 404)
    go("no_such_tool", {"content": content(9)}, 404)
    if "forget" in TOOLS:
        other = go("memory_add", {"content": content(10)}, 200)["memory"]
        go("forget", {"reference": other["id"], "reason": f"{CONTENT} reason"}, 200)
    go("memory_delete", {"id": memory["id"]}, 200)
    go("memory_delete", {"id": memory["id"]}, 404)
    return answers


def assert_clean(answers: list[tuple[int, bytes]], captured: str, *, banner: str = "") -> None:
    errors = [(status, body) for status, body in answers if status >= 400]
    assert {status for status, _ in errors} >= {400, 401, 403, 404, 409, 413}
    for status, body in errors:
        assert_spec_error(status, body)
        assert not any(c in body.decode() for c in (KEY, READ_KEY, UNKNOWN_KEY)), body
    for _, body in answers:
        assert KEY not in body.decode() and READ_KEY not in body.decode()
    # the scan proves something only if the service's own logs were captured: its per-call line,
    # and its line for every rejection
    assert '"tool call"' in captured and '"rejected"' in captured, captured[:2000]
    leaked = sorted({c for c in CANARIES if c in captured.replace(banner, "")})
    assert not leaked, f"{leaked} found in the logs:\n{captured[:4000]}"


@pytest.fixture
def gateway(wired_runtime: Service) -> Iterator[tuple[LocalGateway, Service]]:
    svc = wired_runtime
    workspace = svc.ports.tenants.list_workspaces()[0]
    tenancy.create_key(svc.ports, workspace.id, label="canary admin", scopes=[ADMIN], plain=KEY)
    tenancy.create_key(svc.ports, workspace.id, label="canary reader", scopes=[READ], plain=READ_KEY)
    svc.ports.tenants.set_limits(workspace.id, RateLimits(search=1000, write=1000))
    yield LocalGateway(http_routes()), svc


def through(gateway: LocalGateway) -> Any:
    def send(tool: str, arguments: Any, key: str = KEY, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        sent = {"authorization": f"Bearer {key}", "content-type": "application/json"}
        sent.update({k.lower(): v for k, v in (headers or {}).items()})
        status, _, body = gateway.dispatch("POST", f"/v1/tools/{tool}", sent, json.dumps(arguments).encode())
        return status, body

    return send


def debug_logging() -> None:
    """Everything at DEBUG, and Powertools' handlers (bound to whatever ``sys.stdout`` was when
    the handler modules were imported, possibly an earlier test's closed capture) pointed at the
    stream this test captures."""
    for name in ("mnemo", "mnemo.local", ""):
        logging.getLogger(name).setLevel(logging.DEBUG)
    for name in list(logging.Logger.manager.loggerDict):
        if name.startswith("mnemo"):
            for handler in logging.getLogger(name).handlers:
                if isinstance(handler, logging.StreamHandler):
                    handler.stream = sys.stdout  # not setStream: it flushes the old, closed one


def _backend_of(name: str, env: dict[str, str], data_dir: Any) -> Any:
    """The store the server of ``env`` uses, opened from this process (to add a second key)."""
    if name == "sqlite":
        from mnemo.backends.sqlite import SqliteBackend

        return SqliteBackend(data_dir / "mnemo.db")
    from mnemo.backends.aws import AwsBackend
    from mnemo.config import Settings

    return AwsBackend.from_settings(Settings(**{k.removeprefix("MNEMO_").lower(): v for k, v in env.items()}))


def test_in_process_handlers_log_no_key_and_no_content(gateway, capfd, caplog):
    gw, _ = gateway
    debug_logging()
    caplog.set_level(logging.DEBUG)

    answers = exercise(through(gw))

    out, err = capfd.readouterr()
    assert_clean(answers, out + err + caplog.text)


def test_rate_limited_calls_log_no_key_and_no_content(gateway, capfd, caplog):
    gw, svc = gateway
    debug_logging()
    caplog.set_level(logging.DEBUG)
    svc.ports.tenants.set_limits(svc.ports.tenants.list_workspaces()[0].id, RateLimits(search=1, write=1))
    send = through(gw)

    answers = [send("memory_add", {"content": f"{CONTENT} {n}"}) for n in range(3)]

    out, err = capfd.readouterr()
    assert [status for status, _ in answers] == [200, 429, 429]
    for status, body in answers[1:]:
        assert_spec_error(status, body, "rate_limited")
    leaked = [c for c in CANARIES if c in out + err + caplog.text]
    assert not leaked


def test_an_unexpected_failure_is_a_bare_500_and_its_message_is_not_logged(gateway, capfd, caplog, monkeypatch):
    """A backend failing with an exception that carries user data (as driver errors echoing a
    query do): the caller gets the bare 500 of docs/contract.md §4, and the logs get the type and
    place, not the text."""
    gw, svc = gateway
    debug_logging()
    caplog.set_level(logging.DEBUG)

    def broken_search(query: Any) -> Any:
        raise RuntimeError(f"index said no to {CONTENT} {QUERY}")

    monkeypatch.setattr(svc.ports.index, "search", broken_search)

    status, body = through(gw)("memory_search", {"q": f"{CONTENT} {QUERY}"})

    out, err = capfd.readouterr()
    assert status == 500
    assert json.loads(body) == {"message": "internal error", "code": "internal"}
    logs = out + err + caplog.text
    assert "RuntimeError" in logs, "the failure must still be logged for operators"
    assert CONTENT not in logs and QUERY not in logs


def test_errors_never_carry_internals_in_process(gateway):
    gw, _ = gateway

    answers = exercise(through(gw))

    for status, body in answers:
        if status >= 400:
            assert not INTERNALS.search(body.decode()), body


@pytest.mark.parametrize("backend_name", SERVER_BACKENDS)
def test_mnemo_serve_output_has_no_key_and_no_content(request, backend_name, tmp_path):
    """The real server, verbose and at DEBUG: after the one-time banner, no canary anywhere (with
    ``--backend aws`` too, whose clients log at DEBUG themselves)."""
    env = backend_env(request, backend_name, "secrets")
    server = start_server(
        tmp_path,
        {**UNLIMITED, **env, "MNEMO_BOOTSTRAP_KEY": KEY, "POWERTOOLS_LOG_LEVEL": "DEBUG"},
        args=("--verbose",),
    )
    server.key = KEY
    try:
        backend = _backend_of(backend_name, env, tmp_path)
        workspace = backend.tenants.list_workspaces()[0]
        tenancy.create_key(backend, workspace.id, label="reader", scopes=[READ], plain=READ_KEY)
        backend.close()

        def send(tool: str, arguments: Any, key: str = KEY, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
            reply = call(server, tool, arguments, key=key, headers=dict(headers or {}))
            return reply.status, reply.raw

        answers = exercise(send)
    finally:
        output = stop_server(server)

    banner = "\n".join(
        line for line in output.splitlines() if KEY in line and ("export" in line or line.strip() == KEY)
    )
    assert output.count(KEY) == banner.count(KEY) == 2, "the key is printed once, at creation, and never again"
    assert_clean(answers, output, banner=banner)


def test_a_created_key_is_returned_once_and_stored_only_as_a_hash(sqlite_backend):
    workspace, _ = tenancy.create_workspace(sqlite_backend, "w")

    created = tenancy.create_key(sqlite_backend, workspace.id, label="k", scopes=[READ])

    stored = sqlite_backend.tenants.get_key(created.key.id)
    assert stored is not None
    assert created.plain not in stored.model_dump_json()
    assert created.plain not in json.dumps(
        [k.model_dump(mode="json") for k in sqlite_backend.tenants.list_keys(workspace.id)]
    )
    raw = (sqlite_backend.db.conn().execute("SELECT group_concat(body) FROM api_keys").fetchone()[0]) or ""
    assert created.plain not in raw


def test_the_authenticated_caller_holds_no_plain_key(wired_runtime):
    """What the service keeps after authenticating, and may log or pass on, has no secret in it."""
    caller = wired_runtime.authenticate(f"Bearer {EVENTS_KEY}")

    assert EVENTS_KEY not in repr(caller)


def test_mcp_tool_calls_log_no_key_and_no_content(gateway, capfd, caplog):
    """The same scan over ``POST /mcp`` (stateless 2026-07-28 requests): a write, a read, a
    rejected call and an unknown key."""
    if not any(route.route_key == "POST /mcp" for route in http_routes()):
        pytest.skip("no MCP route in template.yaml yet")
    gw, _ = gateway
    debug_logging()
    caplog.set_level(logging.DEBUG)

    def mcp(name: str, arguments: dict[str, Any], key: str = KEY) -> tuple[int, bytes]:
        version = "2026-07-28"
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": version,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "hardening", "version": "1"},
                },
                "name": name,
                "arguments": arguments,
            },
        }
        headers = {
            "authorization": f"Bearer {key}",
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": version,
            "mcp-method": "tools/call",
            "mcp-name": name,
        }
        status, _, out = gw.dispatch("POST", "/mcp", headers, json.dumps(body).encode())
        return status, out

    answers = [
        mcp(
            "memory_add", {"content": f"{CONTENT} over mcp", "tags": ["CanaryTag-mcp"], "idempotency_key": IDEMPOTENCY}
        ),
        mcp("memory_search", {"q": f"{CONTENT} {QUERY}"}),
        mcp("memory_add", {"content": f"{CONTENT} rejected", "kind": "CanaryTag-" + "k" * 64}),
        mcp("memory_add", {"content": f"{CONTENT} unknown key"}, key=UNKNOWN_KEY),
    ]

    out, err = capfd.readouterr()
    for _, body in answers:
        text = body.decode()
        assert KEY not in text and UNKNOWN_KEY not in text
        assert not INTERNALS.search(text.replace(CONTENT, "")), text
    logs = out + err + caplog.text
    leaked = sorted({c for c in CANARIES if c in logs})
    assert not leaked, f"{leaked} found in the logs:\n{logs[:4000]}"


def test_a_key_created_over_http_is_shown_once_and_never_again(gateway, capfd, caplog):
    """``POST /v1/admin/keys`` answers the secret once; listing keys, using the key, and the logs
    never show the secret, its salt or its hash."""
    if not any(route.route_key == "POST /v1/admin/keys" for route in http_routes()):
        pytest.skip("no admin key routes in template.yaml yet")
    gw, svc = gateway
    debug_logging()
    caplog.set_level(logging.DEBUG)
    headers = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    body = json.dumps({"label": "CanarySource-label", "scopes": ["memory:read"]}).encode()

    status, _, created = gw.dispatch("POST", "/v1/admin/keys", headers, body)
    assert status in (200, 201), created
    secret = json.loads(created)["secret"]
    stored = svc.ports.tenants.get_key(json.loads(created)["key"]["id"])
    assert stored is not None
    used_status, _, used = gw.dispatch(
        "POST",
        "/v1/tools/memory_search",
        {"authorization": f"Bearer {secret}", "content-type": "application/json"},
        b"{}",
    )
    listed_status, _, listed = gw.dispatch("GET", "/v1/admin/keys", headers, b"")

    out, err = capfd.readouterr()
    assert used_status == 200 and listed_status == 200
    for text in (used.decode(), listed.decode(), out + err + caplog.text):
        assert secret not in text and stored.secret_hash not in text and stored.salt not in text
