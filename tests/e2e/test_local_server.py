"""``mnemo serve`` as a user meets it: real HTTP on loopback, the README's tour."""

from __future__ import annotations

import json

import pytest

from tests.support.http import Headers, request, send
from tests.support.server import RunningServer, start_server, stop_server

pytestmark = [pytest.mark.slow]


def call(
    server: RunningServer,
    tool: str,
    body: object,
    *,
    key: str | None = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Headers, dict]:
    data = raw if raw is not None else json.dumps(body).encode()
    reply = send(server, f"/v1/tools/{tool}", data, key=key, headers=dict(headers or {}))
    return reply.status, reply.headers, reply.body


def test_the_readme_tour(server):
    status, headers, added = call(
        server,
        "memory_add",
        {
            "content": "Reddit r/SaaS ignores self-promo; reply with help first.",
            "kind": "insight",
            "tags": ["reddit", "rules"],
        },
    )
    assert status == 200, added
    assert set(added) == {"project", "memory", "deduplicated", "similar"}
    assert added["deduplicated"] is False and added["similar"] == []
    assert set(added["project"]) == {"id", "slug"}
    assert {"id", "kind", "content", "tags", "source", "created_at", "updated_at"} <= set(added["memory"])
    assert "RateLimit" in headers

    status, _, found = call(server, "memory_search", {"q": "reddit", "kind": "insight", "limit": 10})
    assert status == 200
    assert [m["id"] for m in found["memories"]] == [added["memory"]["id"]]

    _, _, chinese = call(server, "memory_add", {"content": "数据库延迟很高，需要加缓存"})
    _, _, found = call(server, "memory_search", {"q": "延迟"})
    assert [m["id"] for m in found["memories"]] == [chinese["memory"]["id"]]

    _, _, recent = call(server, "memory_search", {"q": ""})
    assert [m["id"] for m in recent["memories"]][:2] == [chinese["memory"]["id"], added["memory"]["id"]]

    status, _, updated = call(
        server, "memory_update", {"id": chinese["memory"]["id"], "content": "cache hit rate is 90%"}
    )
    assert status == 200 and updated["memory"]["version"] == 2
    assert call(server, "memory_search", {"q": "延迟"})[2]["memories"] == []
    assert [m["id"] for m in call(server, "memory_search", {"q": "cache rate"})[2]["memories"]] == [
        chinese["memory"]["id"]
    ]


def test_errors_have_the_spec_body(server):
    status, _, body = call(server, "memory_add", {"content": "x" * 4097})
    assert (status, body["code"]) == (413, "content_too_large")

    status, _, body = call(server, "memory_search", {"q": "x", "limit": 0})
    assert (status, body["code"]) == (400, "invalid_request")
    assert body["details"][0]["loc"] == ["limit"]

    status, headers, body = call(server, "memory_search", {}, key="wrong-key-0000000000")
    assert headers["WWW-Authenticate"].startswith("Bearer")
    assert (status, body["code"]) == (401, "unauthorized")
    assert set(body) == {"message", "code"}

    status, _, body = call(server, "memory_add", None, raw=b'{"content": ')
    assert (status, body["code"]) == (400, "invalid_request")

    status, _, body = call(server, "memory_add", None, raw=b"\xff\xfe{}")
    assert (status, body["code"]) == (400, "invalid_request")

    status, _, body = call(server, "memory_add", None, raw=json.dumps({"content": "y" * 70000}).encode())
    assert (status, body["code"]) == (413, "content_too_large")

    status, _, body = call(server, "nope", {})
    assert (status, body["code"]) == (404, "not_found")


def test_openapi_is_served_and_names_every_tool(server):
    from mnemo.service.catalog import TOOLS

    doc = request(server, "GET", "/openapi.json", content_type=None, timeout=60).body

    assert doc["openapi"].startswith("3.1")
    operations = {op["post"]["operationId"] for path, op in doc["paths"].items() if path.startswith("/v1/tools/")}
    assert operations == set(TOOLS)


def test_first_start_prints_an_admin_key_that_works(tmp_path):
    running = start_server(tmp_path / "fresh", env_extra={"MNEMO_BOOTSTRAP_KEY": ""})
    try:
        # the banner is only readable after the process ends; the key must work meanwhile too
        output = stop_server(running)
    finally:
        if running.process.poll() is None:
            running.process.kill()
    key = next(line.strip() for line in output.splitlines() if line.strip().startswith("mnemo_"))
    again = start_server(tmp_path / "fresh", env_extra={"MNEMO_BOOTSTRAP_KEY": ""})
    try:
        status, _, body = call(again, "memory_search", {}, key=key)
        assert status == 200, body
    finally:
        second_output = stop_server(again)
    assert "mnemo_" not in second_output  # an existing store prints no new key


def test_a_rebound_host_or_a_foreign_origin_is_refused_before_any_work(server):
    """DNS rebinding (MCP transport spec: servers MUST validate Origin): a page whose name was
    re-pointed at 127.0.0.1 is refused with 403 ``{message, code}``; local callers are served."""
    from tests.hardening.conftest import send

    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    mcp = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    port = server.url.rsplit(":", 1)[1]
    refused = [
        send(server, "/mcp", initialize, headers={**mcp, "Host": f"evil.example:{port}"}),
        send(server, "/mcp", initialize, headers={**mcp, "Origin": "http://evil.example"}),
        send(server, "/v1/tools/memory_add", b'{"content": "x"}', headers={"Host": "evil.example"}),
    ]
    served = send(server, "/mcp", initialize, headers={**mcp, "Origin": f"http://localhost:{port}"})

    for reply in refused:
        assert reply.status == 403, reply.raw[:200]
        body = json.loads(reply.raw)
        assert body["code"] == "forbidden" and body["message"], body
    assert served.status == 200, served.raw[:200]


def test_a_host_name_the_operator_allows_is_served_and_no_other(tmp_path):
    """``MNEMO_ALLOWED_HOSTS``: ``mnemo serve --host 0.0.0.0`` reached by a machine's name answers
    that name (and the console's same-origin calls) and still refuses any other name."""
    from tests.hardening.conftest import send

    running = start_server(tmp_path / "named", env_extra={"MNEMO_ALLOWED_HOSTS": "mybox.lan"})
    try:
        port = running.url.rsplit(":", 1)[1]
        ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        mcp = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        named = {**mcp, "Host": f"mybox.lan:{port}", "Origin": f"http://mybox.lan:{port}"}
        served = send(running, "/mcp", ping, headers=named)
        refused = send(running, "/mcp", ping, headers={**mcp, "Host": f"evil.mybox.lan:{port}"})
    finally:
        stop_server(running)
    assert served.status == 200, served.raw[:200]
    assert refused.status == 403 and json.loads(refused.raw)["code"] == "forbidden", refused.raw[:200]
