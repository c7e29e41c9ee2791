"""Bearer JWTs checked by ``mnemo.oauth`` against a stand-in issuer's published keys: the one right
token passes; every hostile one is refused as a token problem (401), and an issuer whose keys
cannot be fetched fails closed (503) within the fetch timeout."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mnemo.config import Settings
from mnemo.errors import InvalidToken, Unavailable
from mnemo.oauth.keys import IssuerUnavailable, metadata_urls
from mnemo.oauth.verifier import JwtVerifier

from tests.support.issuer import FakeIssuer, new_key

RESOURCE = "http://mnemo.test"


@pytest.fixture
def issuer():
    with FakeIssuer(delay_s=5.0) as running:
        yield running


def verifier_for(issuer: FakeIssuer, **settings: object) -> JwtVerifier:
    values = {
        "oauth_issuers": issuer.url,
        "oauth_resource": RESOURCE,
        "oauth_fetch_timeout_s": 1.0,
        "oauth_jwks_min_refresh_s": 30.0,
        **settings,
    }
    verifier = JwtVerifier.from_settings(Settings(**values))  # type: ignore[arg-type]
    assert verifier is not None
    return verifier


def b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_a_token_of_the_issuer_for_this_resource_passes(issuer):
    claims = verifier_for(issuer).verify(issuer.token(sub="alice", aud=RESOURCE, scope="memory:read"))

    assert (claims["sub"], claims["iss"]) == ("alice", issuer.url)


def test_the_mcp_endpoints_url_is_an_audience_too(issuer):
    assert verifier_for(issuer).verify(issuer.token(sub="a", aud=[RESOURCE + "/mcp", "account"]))["sub"] == "a"


def hand_made(header: dict, claims: dict, sign: Callable[[bytes], bytes] = lambda _: b"") -> str:
    """A compact JWS put together by hand, for what PyJWT refuses to sign."""
    signing_input = b64(header) + "." + b64(claims)
    signature = base64.urlsafe_b64encode(sign(signing_input.encode())).rstrip(b"=").decode()
    return signing_input + "." + signature


def hostile(issuer: FakeIssuer) -> dict[str, str]:
    now = int(time.time())
    right = {"sub": "alice", "aud": RESOURCE}
    claims = {"iss": issuer.url, **right, "exp": now + 60}
    public_pem = issuer.key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    signed = issuer.token(**right)
    return {
        "alg none": hand_made({"alg": "none", "typ": "JWT", "kid": issuer.kid}, claims),
        # HS256 keyed with the issuer's public key: the classic algorithm confusion
        "HS256 keyed with the public key": hand_made(
            {"alg": "HS256", "typ": "JWT", "kid": issuer.kid},
            claims,
            lambda data: hmac.new(public_pem, data, hashlib.sha256).digest(),
        ),
        "signed by another key": issuer.token(key=new_key(), **right),
        "another issuer's claim": issuer.token(**right, iss="https://evil.example/realms/test"),
        "another audience": issuer.token(sub="alice", aud="https://other-service.example"),
        "no audience": issuer.token(sub="alice"),
        "expired": issuer.token(**right, iat=now - 3600, exp=now - 120),
        "not yet valid": issuer.token(**right, nbf=now + 600),
        "issued in the future": issuer.token(**right, iat=now + 600),
        "no expiry": jwt.encode({"iss": issuer.url, **right}, issuer.key, "RS256", headers={"kid": issuer.kid}),
        "unknown kid": issuer.token(**right, headers={"kid": "someone-elses"}),
        "huge": issuer.token(**right, padding="x" * 20_000),
        "tampered payload": ".".join([signed.split(".")[0], b64({**claims, "sub": "admin"}), signed.split(".")[2]]),
        "not a JWT": "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln",
        "ES256 header on an RSA key's kid": issuer.token(
            **right, key=ec.generate_private_key(ec.SECP256R1()), algorithm="ES256"
        ),
    }


HOSTILE = [
    "alg none",
    "HS256 keyed with the public key",
    "signed by another key",
    "another issuer's claim",
    "another audience",
    "no audience",
    "expired",
    "not yet valid",
    "issued in the future",
    "no expiry",
    "unknown kid",
    "huge",
    "tampered payload",
    "not a JWT",
    "ES256 header on an RSA key's kid",
]


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_token_is_refused_as_invalid(issuer, case):
    verifier = verifier_for(issuer)
    token = hostile(issuer)[case]

    with pytest.raises(InvalidToken) as refused:
        verifier.verify(token)
    assert "alice" not in refused.value.message and issuer.url not in refused.value.message


def test_a_token_without_aud_passes_only_as_an_access_token_of_a_configured_app_client(issuer):
    """Amazon Cognito's access tokens carry ``client_id`` and ``token_use`` but no ``aud``."""
    verifier = verifier_for(issuer, oauth_client_ids="app-client-1")

    assert verifier.verify(issuer.token(sub="c", client_id="app-client-1", token_use="access"))["sub"] == "c"
    for refused in (
        issuer.token(sub="c", client_id="app-client-2", token_use="access"),
        issuer.token(sub="c", client_id="app-client-1", token_use="id"),
        issuer.token(sub="c", client_id="app-client-1"),
    ):
        with pytest.raises(InvalidToken):
            verifier.verify(refused)


def test_expiry_allows_the_configured_skew_and_no_more(issuer):
    now = int(time.time())
    verifier = verifier_for(issuer, oauth_leeway_s=30)

    assert verifier.verify(issuer.token(sub="a", aud=RESOURCE, iat=now - 600, exp=now - 10))["sub"] == "a"
    with pytest.raises(InvalidToken):
        verifier.verify(issuer.token(sub="a", aud=RESOURCE, iat=now - 600, exp=now - 60))


def test_an_issuer_that_is_not_configured_is_never_fetched(issuer):
    with FakeIssuer() as stranger:
        verifier = verifier_for(issuer)
        with pytest.raises(InvalidToken):
            verifier.verify(stranger.token(sub="a", aud=RESOURCE))
        assert stranger.fetches == 0


def test_unknown_kids_fetch_the_keys_at_most_once_per_refresh_interval(issuer):
    verifier = verifier_for(issuer)
    verifier.verify(issuer.token(sub="a", aud=RESOURCE))
    assert issuer.fetches == 1

    for n in range(20):
        with pytest.raises(InvalidToken):
            verifier.verify(issuer.token(sub="a", aud=RESOURCE, headers={"kid": f"made-up-{n}"}))

    assert issuer.fetches == 1  # a fetch a moment ago: the made-up kids wait for the interval


def test_a_rotated_key_is_picked_up_by_its_new_kid(issuer):
    verifier = verifier_for(issuer, oauth_jwks_min_refresh_s=0)
    verifier.verify(issuer.token(sub="a", aud=RESOURCE))

    issuer.key, issuer.kid = new_key(), "test-key-2"

    assert verifier.verify(issuer.token(sub="b", aud=RESOURCE))["sub"] == "b"


def test_keys_that_are_down_fail_closed_as_unavailable(issuer):
    issuer.mode = "down"
    verifier = verifier_for(issuer)

    with pytest.raises(Unavailable) as refused:
        verifier.verify(issuer.token(sub="a", aud=RESOURCE))
    assert refused.value.status == 503


def test_keys_that_are_slow_fail_closed_within_the_timeout(issuer):
    issuer.mode = "slow"  # each key fetch waits 5 s; the verifier's timeout is 1 s
    verifier = verifier_for(issuer)

    started = time.monotonic()
    with pytest.raises(IssuerUnavailable):
        verifier.verify(issuer.token(sub="a", aud=RESOURCE))

    assert time.monotonic() - started < 4.5  # bounded by the timeout, not by the issuer


def test_one_call_has_one_deadline_for_all_its_fetches_of_metadata(issuer):
    # Given an issuer whose metadata is slow at both addresses (OIDC, then RFC 8414), cold caches
    rfc_8414 = metadata_urls(issuer.url)[1].removeprefix(issuer.url.removesuffix("/realms/test"))
    issuer.delays = {"/.well-known/openid-configuration": 5.0, rfc_8414: 5.0}
    verifier = verifier_for(issuer)  # a 1 s fetch timeout

    # When a call needs the keys, Then it fails closed once the OIDC fetch used up the call's
    # whole budget: RFC 8414 is never tried (before, each took its own timeout: 503 after 2 of them)
    with pytest.raises(IssuerUnavailable):
        verifier.verify(issuer.token(sub="a", aud=RESOURCE))
    assert issuer.requests == ["/realms/test/.well-known/openid-configuration"]


def test_the_key_set_is_fetched_within_what_the_metadata_left_of_the_budget(issuer):
    # Given metadata and keys that each answer within the fetch timeout, but not both together
    issuer.delays = {"/.well-known/openid-configuration": 1.2, "/certs": 1.2}
    verifier = verifier_for(issuer, oauth_fetch_timeout_s=2.0)

    # Then the call fails closed within its one budget (before: 2.4 s, and the token passed)
    with pytest.raises(IssuerUnavailable):
        verifier.verify(issuer.token(sub="a", aud=RESOURCE))

    # And once the issuer is quick again (and the refresh interval allows), the same token passes
    issuer.delays = {}
    quick = verifier_for(issuer, oauth_fetch_timeout_s=2.0)
    assert quick.verify(issuer.token(sub="a", aud=RESOURCE))["sub"] == "a"


def test_cached_keys_keep_verifying_while_the_issuer_is_down(issuer):
    verifier = verifier_for(issuer, oauth_jwks_ttl_s=0, oauth_jwks_min_refresh_s=0)
    verifier.verify(issuer.token(sub="a", aud=RESOURCE))

    issuer.mode = "down"

    assert verifier.verify(issuer.token(sub="b", aud=RESOURCE))["sub"] == "b"


def test_a_slow_fetch_for_one_token_does_not_hold_up_tokens_with_known_keys(issuer):
    verifier = verifier_for(issuer, oauth_fetch_timeout_s=3.0, oauth_jwks_min_refresh_s=0)
    verifier.verify(issuer.token(sub="a", aud=RESOURCE))
    issuer.mode = "slow"

    def verify_new_kid() -> None:
        with pytest.raises(IssuerUnavailable):
            verifier.verify(issuer.token(sub="x", aud=RESOURCE, headers={"kid": "new"}))

    stalled = threading.Thread(target=verify_new_kid)
    stalled.start()
    deadline = time.monotonic() + 10
    while issuer.fetches < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert issuer.fetches == 2  # the unknown kid's fetch is under way, and stalled at the issuer

    started = time.monotonic()
    assert verifier.verify(issuer.token(sub="b", aud=RESOURCE))["sub"] == "b"
    assert time.monotonic() - started < 1.0  # the known key needs no fetch and takes no lock
    stalled.join()


def test_algorithms_outside_the_asymmetric_set_cannot_be_configured(issuer):
    for algorithms in ("HS256", "none", "RS256,HS512"):
        with pytest.raises(ValueError):
            verifier_for(issuer, oauth_algorithms=algorithms)


def test_issuer_metadata_is_looked_up_as_oidc_then_rfc_8414():
    assert metadata_urls("https://idp.example/realms/acme") == [
        "https://idp.example/realms/acme/.well-known/openid-configuration",
        "https://idp.example/.well-known/oauth-authorization-server/realms/acme",
    ]


def test_the_challenge_of_an_mcp_path_points_at_the_mcp_metadata_with_or_without_a_stage():
    from mnemo.api.oauth import metadata_url

    cfg = Settings(oauth_issuers="https://idp.example", oauth_resource="https://mnemo.example/")

    assert metadata_url(cfg, "/prod/mcp") == "https://mnemo.example/.well-known/oauth-protected-resource/mcp"
    assert metadata_url(cfg, "/mcp") == "https://mnemo.example/.well-known/oauth-protected-resource/mcp"
    assert metadata_url(cfg, "/prod/v1/tools/recall") == "https://mnemo.example/.well-known/oauth-protected-resource"
