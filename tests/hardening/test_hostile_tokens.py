"""OAuth access tokens against a real ``mnemo serve`` (docs/auth.md): a bound token works on REST and
MCP beside the API key; every hostile token is refused with the right status, leaks nothing and
changes nothing; an issuer whose keys are down or slow fails closed (503) without holding up calls
that do not need it.

The tokens are signed by a stand-in issuer (``tests.support.issuer``: no real authorization server
signs a deliberately wrong token); real Keycloak tokens are tests/integration/test_keycloak_tokens.py's."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.hardening.conftest import SERVER_BACKENDS, UNLIMITED, backend_env, mcp_call, rest_call, send
from tests.hardening.spec import assert_spec_error
from tests.support.issuer import FakeIssuer
from tests.support.server import RunningServer, start_server, stop_server
from tests.unit.test_oauth_verifier import HOSTILE, hostile

pytestmark = [pytest.mark.slow]

RESOURCE = "http://mnemo.test"


@dataclass
class OAuthServer:
    server: RunningServer
    issuer: FakeIssuer
    #: an issuer the server trusts whose keys are never reachable (down, or slow past the timeout)
    broken: FakeIssuer
    other_workspace: str


def cli(server: RunningServer, env: dict[str, str], *args: str) -> dict:
    data_dir = str(server.output.parent) if server.output else ""
    proc = subprocess.run(
        [sys.executable, "-m", "mnemo.local.cli", *args, "--json"],
        env={**env, "MNEMO_DATA_DIR": data_dir},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(proc.stdout)


@pytest.fixture(scope="module", params=SERVER_BACKENDS)
def oauth(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthServer]:
    import os

    with FakeIssuer() as issuer, FakeIssuer(kid="broken", delay_s=5.0) as broken:
        broken.mode = "down"
        env = {
            **UNLIMITED,
            **backend_env(request, request.param, "oauth"),
            "MNEMO_OAUTH_ISSUERS": f"{issuer.url},{broken.url}",
            "MNEMO_OAUTH_RESOURCE": RESOURCE,
            "MNEMO_OAUTH_FETCH_TIMEOUT_S": "1",
            "MNEMO_OAUTH_JWKS_MIN_REFRESH_S": "0",
        }
        server = start_server(tmp_path_factory.mktemp(f"mnemo-oauth-{request.param}"), env, ("--timeout", "60"))
        try:
            full_env = {**os.environ, **env}
            other = cli(server, full_env, "workspace", "create", "other")["workspace"]["id"]
            cli(
                server,
                full_env,
                "principal",
                "add",
                "--workspace",
                other,
                "--subject",
                "bob",
                "--scope",
                "memory:read,memory:write",
            )
            bound = send(
                server,
                "/v1/admin/principals",
                json.dumps({"kind": "sub", "value": "alice", "scopes": ["memory:read", "memory:write"]}).encode(),
            )
            assert bound.status == 201, bound.raw
            yield OAuthServer(server, issuer, broken, other)
        finally:
            server.banner = stop_server(server)


def alice(oauth: OAuthServer, **claims: object) -> str:
    return oauth.issuer.token(sub="alice", aud=RESOURCE, scope="memory:read memory:write", **claims)


# ---- discovery ------------------------------------------------------------------------------


def test_the_protected_resource_metadata_names_the_issuers_and_scopes(oauth):
    rest = send(oauth.server, "/.well-known/oauth-protected-resource", None, method="GET", key="unused")
    mcp = send(oauth.server, "/.well-known/oauth-protected-resource/mcp", None, method="GET", key="unused")

    assert (rest.status, mcp.status) == (200, 200)
    assert rest.body["resource"] == RESOURCE and mcp.body["resource"] == RESOURCE + "/mcp"
    assert mcp.body["authorization_servers"] == [oauth.issuer.url, oauth.broken.url]
    assert set(mcp.body["scopes_supported"]) == {"memory:read", "memory:write", "memory:delete", "admin"}


@pytest.mark.parametrize(("path", "metadata"), [("/v1/tools/memory_search", ""), ("/mcp", "/mcp")])
def test_every_401_points_at_the_metadata(oauth, path, metadata):
    reply = send(oauth.server, path, b"{}", headers={"Authorization": ""})

    assert reply.status == 401
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{RESOURCE}/.well-known/oauth-protected-resource{metadata}"' in challenge
    assert 'scope="memory:read memory:write"' in challenge


# ---- the right token ------------------------------------------------------------------------


def test_a_bound_token_works_on_rest_and_mcp_beside_the_key(oauth):
    token = alice(oauth)

    added = rest_call(oauth.server, "memory_add", {"content": "token wrote this"}, key=token)
    found = mcp_call(oauth.server, "memory_search", {"q": "token wrote"}, key=token)
    by_key = rest_call(oauth.server, "memory_search", {"q": "token wrote"})

    assert added.ok and found.ok and by_key.ok
    assert added.body["memory"]["source"] == "sub:alice"
    assert [m["id"] for m in found.body["memories"]] == [added.body["memory"]["id"]]
    assert [m["id"] for m in by_key.body["memories"]] == [added.body["memory"]["id"]]


def test_a_token_without_the_scope_gets_403_with_a_step_up_challenge(oauth):
    reader = oauth.issuer.token(sub="alice", aud=RESOURCE, scope="memory:read")

    reply = send(oauth.server, "/v1/tools/memory_add", b'{"content": "x"}', key=reader)

    assert reply.status == 403
    assert_spec_error(reply.status, reply.raw, "forbidden")
    assert 'error="insufficient_scope"' in reply.headers["www-authenticate"]


def test_a_token_of_another_workspaces_principal_sees_nothing_of_this_one(oauth):
    rest_call(oauth.server, "memory_add", {"content": "default workspace only"})
    bob = oauth.issuer.token(sub="bob", aud=RESOURCE, scope="memory:read memory:write")

    their_project = send(oauth.server, "/v1/whoami", None, method="GET").body["workspace"]["default_project_id"]

    mine = rest_call(oauth.server, "memory_search", {"q": "default workspace only"}, key=bob)
    theirs = rest_call(oauth.server, "memory_search", {"q": "", "project": their_project}, key=bob)

    assert mine.ok and mine.body["memories"] == []
    assert (theirs.status, theirs.code) == (404, "not_found")
    assert rest_call(oauth.server, "memory_add", {"content": "bob's note"}, key=bob).ok
    assert rest_call(oauth.server, "memory_search", {"q": "bob's note"}).body["memories"] == []


def test_a_valid_token_bound_to_nothing_is_forbidden(oauth):
    mallory = oauth.issuer.token(sub="mallory", aud=RESOURCE, scope="memory:read memory:write admin")

    for outcome in (
        rest_call(oauth.server, "memory_search", {"q": ""}, key=mallory),
        mcp_call(oauth.server, "memory_search", {"q": ""}, key=mallory),
    ):
        assert (outcome.status, outcome.code) == (403, "forbidden")


# ---- hostile tokens -------------------------------------------------------------------------


@pytest.mark.parametrize("case", HOSTILE)
@pytest.mark.parametrize("surface", ["rest", "mcp"])
def test_a_hostile_token_is_refused_and_changes_nothing(oauth, case, surface):
    token = hostile(oauth.issuer)[case]
    before = rest_call(oauth.server, "memory_search", {"q": "", "limit": 100}).body["memories"]

    if surface == "rest":
        reply = send(oauth.server, "/v1/tools/memory_add", b'{"content": "hostile"}', key=token)
    else:
        reply = send(oauth.server, "/mcp", b"{}", key=token, headers={"Accept": "application/json"})

    assert reply.status == 401, reply.raw[:300]
    assert_spec_error(reply.status, reply.raw, "unauthorized")
    assert 'error="invalid_token"' in reply.headers["www-authenticate"]
    assert b"alice" not in reply.raw and oauth.issuer.url.encode() not in reply.raw
    assert rest_call(oauth.server, "memory_search", {"q": "", "limit": 100}).body["memories"] == before


# ---- an issuer that is down or slow ---------------------------------------------------------


def test_an_issuer_whose_keys_are_down_fails_closed_with_503(oauth):
    oauth.broken.mode = "down"
    token = oauth.broken.token(sub="alice", aud=RESOURCE, scope="memory:read")

    reply = send(oauth.server, "/v1/tools/memory_search", b"{}", key=token)

    assert reply.status == 503, reply.raw[:300]
    assert_spec_error(reply.status, reply.raw, "unavailable")
    assert "retry-after" in reply.headers


def test_a_slow_issuer_fails_closed_and_holds_up_no_other_call(oauth):
    oauth.broken.mode = "slow"  # each key fetch waits 5 s; the server gives up after 1 s
    token = oauth.broken.token(sub="alice", aud=RESOURCE, scope="memory:read")
    answers: list[int] = []
    waiting = threading.Thread(
        target=lambda: answers.append(send(oauth.server, "/v1/tools/memory_search", b"{}", key=token).status)
    )
    fetched = oauth.broken.fetches
    started = time.monotonic()
    waiting.start()
    deadline = time.monotonic() + 30
    while oauth.broken.fetches == fetched and time.monotonic() < deadline:
        time.sleep(0.01)

    assert rest_call(oauth.server, "memory_search", {"q": ""}).ok  # a key's call, while the token's waits
    assert rest_call(oauth.server, "memory_search", {"q": ""}, key=alice(oauth)).ok  # a cached issuer's token
    waiting.join(timeout=60)
    assert answers == [503]
    # bounded by the fetch timeout (1 s for metadata, 1 s for keys), never by the issuer's 5 s
    assert time.monotonic() - started < 30
