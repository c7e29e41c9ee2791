"""Key administration over HTTP (``/v1/admin``) against the real ``mnemo serve``."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_local_server import call
from tests.support.http import Headers, request
from tests.support.server import RunningServer

pytestmark = [pytest.mark.slow]


def admin_call(
    server: RunningServer, method: str, path: str, body: object = None, *, key: str | None = None
) -> tuple[int, Headers, dict]:
    reply = request(server, method, path, body, key=key, content_type=None if body is None else "application/json")
    return reply.status, reply.headers, reply.body


def test_an_admin_key_creates_lists_and_revokes_keys_over_http(server):
    status, headers, created = admin_call(
        server, "POST", "/v1/admin/keys", {"label": "ci-bot", "scopes": ["memory:read", "memory:write"]}
    )
    assert status == 201, created
    assert "RateLimit" in headers
    secret, key_id = created["secret"], created["key"]["id"]
    assert call(server, "memory_add", {"content": "written by the new key"}, key=secret)[0] == 200

    status, _, listed = admin_call(server, "GET", "/v1/admin/keys")
    assert status == 200
    assert key_id in {k["id"] for k in listed["keys"]}
    assert secret not in json.dumps(listed) and server.key not in json.dumps(listed)

    status, _, revoked = admin_call(server, "POST", f"/v1/admin/keys/{key_id}/revoke")
    assert (status, revoked["key"]["revoked"]) == (200, True)

    status, headers, refused = call(server, "memory_search", {}, key=secret)
    assert (status, refused["code"]) == (401, "unauthorized")
    assert headers.get("WWW-Authenticate", "").startswith("Bearer")


def test_admin_routes_refuse_non_admin_keys_and_bad_bodies(server):
    _, _, reader = admin_call(server, "POST", "/v1/admin/keys", {"label": "reader", "scopes": ["memory:read"]})

    status, _, body = admin_call(server, "GET", "/v1/admin/keys", key=reader["secret"])
    assert (status, body["code"]) == (403, "forbidden")
    status, _, body = admin_call(server, "POST", "/v1/admin/keys", {"label": "x", "scopes": ["root"]})
    assert (status, body["code"]) == (400, "invalid_request")
    status, _, body = admin_call(server, "POST", "/v1/admin/keys/key_nope/revoke")
    assert (status, body["code"]) == (404, "not_found")
    status, _, body = admin_call(server, "GET", "/v1/admin/keys", key="mnemo_unknown-key-0123456789")
    assert (status, body["code"]) == (401, "unauthorized")


def test_projects_and_limits_over_http_and_in_the_openapi_document(server):
    status, _, created = admin_call(server, "POST", "/v1/admin/projects", {"slug": "http-docs"})
    assert (status, created["project"]["slug"]) == (201, "http-docs")
    _, _, listed = admin_call(server, "GET", "/v1/admin/projects")
    assert "http-docs" in {p["slug"] for p in listed["projects"]}
    _, _, limits = admin_call(server, "GET", "/v1/admin/limits")
    assert (limits["search"], limits["write"]) == (120, 60)

    doc = request(server, "GET", "/openapi.json", content_type=None).body
    assert set(doc["paths"]["/v1/admin/keys"]) == {"get", "post"}
    assert "post" in doc["paths"]["/v1/admin/keys/{key_id}/revoke"]


def test_the_secret_check_is_turned_off_and_on_over_http_by_an_admin_key_only(server):
    note = "deploys use " + "AKIA" + "Z7QW3RTY5UIOPASD"  # built from parts: no key in the repository
    _, _, member = admin_call(server, "POST", "/v1/admin/keys", {"label": "m", "scopes": ["memory:write"]})
    assert admin_call(server, "GET", "/v1/admin/privacy")[2]["secret_check"] is True
    status, _, body = admin_call(server, "POST", "/v1/admin/privacy", {"secret_check": False}, key=member["secret"])
    assert (status, body["code"]) == (403, "forbidden")
    status, _, body = admin_call(server, "POST", "/v1/admin/privacy", {"secret_check": "maybe"})
    assert (status, body["code"]) == (400, "invalid_request")
    assert call(server, "memory_add", {"content": note})[2]["code"] == "secret_detected"

    status, _, body = admin_call(server, "POST", "/v1/admin/privacy", {"secret_check": False})
    try:
        assert (status, body["secret_check"]) == (200, False)
        status, _, added = call(server, "memory_add", {"content": note}, key=member["secret"])
        assert (status, added["memory"]["content"]) == (200, note)
    finally:
        status, _, body = admin_call(server, "POST", "/v1/admin/privacy", {"secret_check": True})
    assert (status, body["secret_check"]) == (200, True)
    assert call(server, "memory_add", {"content": note + " again"})[2]["code"] == "secret_detected"
