"""One bearer JWT checked, with PyJWT: size, shape, an allowed asymmetric algorithm, a configured
issuer, the signature against that issuer's key for the token's ``kid``, ``aud`` naming this
resource (RFC 8707), ``exp`` / ``nbf`` / ``iat`` within the leeway. The claims of a token that
passes every check come back; anything else is ``Unauthorized`` (a token problem, 401
``invalid_token``) or ``IssuerUnavailable`` (the issuer's keys cannot be fetched: 503).

Nothing unverified is trusted beyond choosing which configured issuer's keys to try: the header's
``alg`` must be in the allow list (never ``none``, never an HMAC algorithm, so a public key can
never be used as an HMAC secret) and must be the algorithm of the issuer's key (PyJWT verifies with
the key's own algorithm, never the header's).

PyJWT rather than joserfc: it is already in the tree (the MCP SDK depends on it), it is the most
used JWT library in Python, and its ``decode`` does every registered-claim check needed here."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mnemo.config import Settings, split_list
from mnemo.errors import InvalidToken
from mnemo.oauth.keys import IssuerKeys

#: the algorithms that may ever be allowed: asymmetric signatures only
ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "ES256K", "EdDSA"}
)
_JWS_COMPACT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")


@dataclass(frozen=True, slots=True)
class TokenPolicy:
    issuers: tuple[str, ...]
    audiences: tuple[str, ...]
    algorithms: frozenset[str]
    leeway_s: int
    max_bytes: int
    #: app clients whose tokens may come without ``aud`` (Cognito access tokens)
    client_ids: frozenset[str] = frozenset()

    @classmethod
    def of(cls, cfg: Settings) -> TokenPolicy:
        resource = cfg.oauth_resource.rstrip("/")
        audiences = [a for a in (resource, resource + "/mcp" if resource else "") if a]
        algorithms = frozenset(split_list(cfg.oauth_algorithms))
        if not algorithms or not algorithms <= ASYMMETRIC:
            raise ValueError(f"MNEMO_OAUTH_ALGORITHMS must be among {sorted(ASYMMETRIC)}")
        issuers = tuple(split_list(cfg.oauth_issuers))
        audiences += split_list(cfg.oauth_audiences)
        if issuers and not audiences:
            raise ValueError("MNEMO_OAUTH_RESOURCE (this deployment's URL) is required with MNEMO_OAUTH_ISSUERS")
        client_ids = frozenset(split_list(cfg.oauth_client_ids))
        return cls(issuers, tuple(audiences), algorithms, cfg.oauth_leeway_s, cfg.oauth_max_token_bytes, client_ids)


class JwtVerifier:
    """Checks access tokens of the configured issuers (the ``TokenVerifier`` port)."""

    def __init__(self, policy: TokenPolicy, keys: IssuerKeys) -> None:
        self.policy = policy
        self.keys = keys

    @classmethod
    def from_settings(cls, cfg: Settings) -> JwtVerifier | None:
        """None when no issuer is configured (tokens are then unknown keys, as before)."""
        policy = TokenPolicy.of(cfg)
        if not policy.issuers:
            return None
        keys = IssuerKeys(
            list(policy.issuers),
            jwks_url=cfg.oauth_jwks_url,
            timeout_s=cfg.oauth_fetch_timeout_s,
            ttl_s=cfg.oauth_jwks_ttl_s,
            min_refresh_s=cfg.oauth_jwks_min_refresh_s,
        )
        return cls(policy, keys)

    def verify(self, token: str) -> Mapping[str, Any]:
        import jwt

        policy = self.policy
        if len(token) > policy.max_bytes or not _JWS_COMPACT.match(token):
            raise InvalidToken("the bearer token is not a usable access token")
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise InvalidToken("the bearer token is not a well-formed JWT") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in policy.algorithms:
            raise InvalidToken("the token's signature algorithm is not accepted")
        issuer = unverified.get("iss")
        if not isinstance(issuer, str) or issuer not in policy.issuers:
            raise InvalidToken("the token was not issued by an authorization server this resource trusts")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's key id is not a string")
        # Cognito's access tokens name no audience: one of the configured app clients stands for it
        by_client = "aud" not in unverified and unverified.get("client_id") in policy.client_ids
        if by_client and unverified.get("token_use") != "access":
            raise InvalidToken("the token was not issued for this resource")
        key = self.keys.key(issuer, kid)
        if key is None:
            raise InvalidToken("the token is not signed by a key of its issuer")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,  # a PyJWK: PyJWT verifies with the key's own algorithm, which must be the header's
                algorithms=[alg],
                audience=None if by_client else list(policy.audiences),
                issuer=issuer,
                leeway=policy.leeway_s,
                options={
                    "require": ["exp", "iss"] if by_client else ["exp", "iss", "aud"],
                    "verify_aud": not by_client,
                    "verify_iat": True,
                    "enforce_minimum_key_length": True,
                },
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise InvalidToken("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken("the token was not issued for this resource") from None
        except jwt.PyJWTError:
            raise InvalidToken("the token's signature or claims do not check out") from None
        return claims
