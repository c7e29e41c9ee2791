"""An issuer's signing keys: discovered from its metadata (OIDC discovery, else RFC 8414) or a
configured JWKS URL, fetched with a bounded timeout and size, cached, and fetched again when a token
names a ``kid`` the cache does not hold — at most once per ``min_refresh_s`` per issuer, so a flood
of made-up ``kid`` values cannot turn into a flood of fetches.

Only the configured issuers are ever fetched (a token's ``iss`` is checked against them first), so
no caller can make the server fetch a URL of its choosing. A fetch that fails or takes too long
raises ``IssuerUnavailable`` (503): the service fails closed, and only the calls that need that
issuer's keys wait, each for at most the timeout — one budget for the whole call (waiting for
another call's fetch, metadata at up to two addresses, then the key set), not one per fetch."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from mnemo.errors import Unavailable

#: the most a metadata document or key set may weigh, and the most keys a set may hold
MAX_DOCUMENT_BYTES = 64 * 1024
MAX_KEYS = 32


class IssuerUnavailable(Unavailable):
    """An authorization server's metadata or keys cannot be fetched right now."""


@dataclass
class _Keys:
    keys: dict[str, Any] = field(default_factory=dict)  # kid ("" for a key without one) → PyJWK
    fetched_at: float = float("-inf")
    attempted_at: float = float("-inf")
    lock: threading.Lock = field(default_factory=threading.Lock)


def _fetch_json(url: str, deadline: float) -> dict[str, Any]:
    """The JSON object at ``url``, fetched before ``deadline`` (``time.monotonic()``)."""
    timeout_s = deadline - time.monotonic()
    if timeout_s <= 0:
        raise IssuerUnavailable(cause="the call's time for fetching keys ran out")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("https", "http"):
        raise IssuerUnavailable(cause=f"not an http(s) URL: {parsed.scheme}")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})  # noqa: S310 - http(s) only
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:  # noqa: S310 - scheme checked above
            data = answer.read(MAX_DOCUMENT_BYTES + 1)
    except (OSError, urllib.error.URLError) as exc:  # HTTPError, timeouts and refused connections are OSErrors
        raise IssuerUnavailable(cause=f"fetch failed: {type(exc).__name__}") from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise IssuerUnavailable(cause="document too large")
    try:
        doc = json.loads(data)
    except ValueError:
        raise IssuerUnavailable(cause="document is not JSON") from None
    if not isinstance(doc, dict):
        raise IssuerUnavailable(cause="document is not a JSON object")
    return doc


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: OIDC discovery (appended), then RFC 8414 (inserted)."""
    base = issuer.rstrip("/")
    parsed = urllib.parse.urlsplit(base)
    inserted = urllib.parse.urlunsplit(
        (parsed.scheme, parsed.netloc, "/.well-known/oauth-authorization-server" + parsed.path, "", "")
    )
    return [base + "/.well-known/openid-configuration", inserted]


class IssuerKeys:
    """The key sets of the configured issuers, by issuer."""

    def __init__(
        self,
        issuers: list[str],
        *,
        jwks_url: str = "",
        timeout_s: float = 3.0,
        ttl_s: float = 3600.0,
        min_refresh_s: float = 30.0,
    ) -> None:
        self.issuers = list(issuers)
        self.jwks_url = jwks_url
        self.timeout_s = timeout_s
        self.ttl_s = ttl_s
        self.min_refresh_s = min_refresh_s
        self._jwks_urls: dict[str, str] = {}
        self._keys = {issuer: _Keys() for issuer in issuers}

    def key(self, issuer: str, kid: str | None) -> Any | None:
        """The issuer's key ``kid`` (a PyJWK), or None when the issuer does not publish it.
        A token without ``kid`` gets the set's only key, if it has exactly one."""
        state = self._keys[issuer]
        found = self._pick(state.keys, kid)
        if found is not None and time.monotonic() - state.fetched_at < self.ttl_s:
            return found
        # an unknown kid or a stale set: fetch, unless this issuer was fetched a moment ago
        deadline = time.monotonic() + self.timeout_s  # for everything this call fetches or waits for
        if not state.lock.acquire(timeout=self.timeout_s):
            raise IssuerUnavailable(cause="another fetch of the keys is taking too long")
        try:
            now = time.monotonic()
            found = self._pick(state.keys, kid)
            if found is not None and now - state.fetched_at < self.ttl_s:
                return found  # another thread fetched it meanwhile
            if now - state.attempted_at < self.min_refresh_s:
                if found is not None or state.fetched_at >= state.attempted_at:
                    return found  # the set as last fetched (a kid it lacks stays unknown)
                raise IssuerUnavailable(cause="the last fetch of the keys failed a moment ago")
            state.attempted_at = now
            try:
                state.keys = self._fetch_keys(issuer, deadline)
            except IssuerUnavailable:
                if found is not None:
                    return found  # a key of a set that cannot be refreshed now still verifies
                raise
            state.fetched_at = time.monotonic()
            return self._pick(state.keys, kid)
        finally:
            state.lock.release()

    @staticmethod
    def _pick(keys: dict[str, Any], kid: str | None) -> Any | None:
        if kid is not None:
            return keys.get(kid)
        return next(iter(keys.values())) if len(keys) == 1 else None

    def _jwks_url(self, issuer: str, deadline: float) -> str:
        if self.jwks_url:
            return self.jwks_url
        if issuer not in self._jwks_urls:
            last: IssuerUnavailable | None = None
            for url in metadata_urls(issuer):
                try:
                    doc = _fetch_json(url, deadline)
                except IssuerUnavailable as exc:
                    last = exc  # the next address gets what is left of the budget (none: not tried)
                    continue
                if doc.get("issuer") != issuer or not isinstance(doc.get("jwks_uri"), str):
                    last = IssuerUnavailable(cause="metadata names another issuer or no jwks_uri")
                    continue
                self._jwks_urls[issuer] = doc["jwks_uri"]
                break
            else:
                raise last or IssuerUnavailable(cause="no metadata")
        return self._jwks_urls[issuer]

    def _fetch_keys(self, issuer: str, deadline: float) -> dict[str, Any]:
        from jwt import PyJWK
        from jwt.exceptions import PyJWKError

        doc = _fetch_json(self._jwks_url(issuer, deadline), deadline)
        entries = doc.get("keys")
        if not isinstance(entries, list):
            raise IssuerUnavailable(cause="key set has no keys")
        keys: dict[str, Any] = {}
        for entry in entries[:MAX_KEYS]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
                continue  # encryption keys and symmetric keys never verify a token here
            try:
                keys[str(entry.get("kid", ""))] = PyJWK(entry)
            except (PyJWKError, ValueError, TypeError):
                continue  # a key type or curve this build does not know: skip it, keep the others
        return keys
