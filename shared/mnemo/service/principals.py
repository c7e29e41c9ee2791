"""OAuth principals: who a verified access token is, and what it may do in which workspace.

A principal binding (``models.records.Principal``) ties a token's ``sub``, its client or one of its
groups, at one issuer, to one workspace with at most some scopes, teams and a default project —
what a key carries. ``caller_for`` turns a verified token's claims into a ``Caller``:

* the binding of its ``sub`` wins, then that of its client (``client_id``, else ``azp``), then
  those of its groups (which must all name one workspace; their scopes and teams are merged);
* its scopes are the token's (``scope`` or ``scp``, after ``scope_prefix``) narrowed by the
  binding's; ``admin`` only when both grant it;
* a token bound to nothing is ``Forbidden`` (403): valid at its issuer, but no tenant of this
  deployment. Bindings are read on every call, never cached: a removed one is refused at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mnemo.errors import Conflict, Forbidden, InvalidRequest, NotFound
from mnemo.models.common import utc_now
from mnemo.models.records import Principal, PrincipalKind
from mnemo.ports import Ports, TokenVerifier, VersionConflict
from mnemo.service import tenancy
from mnemo.service.identity import ADMIN, ALL_SCOPES, DELETE, READ, WRITE, Caller

#: the most group claim values looked up for one token
MAX_GROUPS = 50


@dataclass(frozen=True, slots=True)
class TokenAuth:
    """What the service needs to accept access tokens: the verifier (``mnemo.oauth``), the issuers it
    trusts (the first is the default of a new binding) and how tokens spell scopes and groups."""

    verifier: TokenVerifier
    issuers: tuple[str, ...]
    scope_prefix: str = ""
    group_claims: tuple[str, ...] = ()


def principal_id(issuer: str, kind: str, value: str) -> str:
    digest = hashlib.sha256("\0".join((issuer, kind, value)).encode("utf-8", "surrogatepass")).hexdigest()
    return "prn_" + digest[:24]


def bind(
    ports: Ports,
    workspace_id: str,
    *,
    issuer: str,
    kind: PrincipalKind,
    value: str,
    scopes: list[str],
    label: str | None = None,
    default_project: str | None = None,
    team_ids: list[str] | None = None,
) -> Principal:
    if not value or not issuer:
        raise InvalidRequest("a principal needs an issuer and a value")
    project_id = tenancy.grant(ports, workspace_id, scopes, default_project)
    principal = Principal(
        id=principal_id(issuer, kind, value),
        workspace_id=workspace_id,
        issuer=issuer,
        kind=kind,
        value=value,
        label=label or f"{kind}:{value}",
        scopes=sorted(set(scopes)),
        default_project_id=project_id,
        team_ids=sorted(set(team_ids or [])),
        created_at=utc_now(),
    )
    try:
        ports.tenants.create_principal(principal)
    except VersionConflict:
        # one principal, one workspace: never say which workspace holds it
        raise Conflict("this principal is already bound") from None
    return principal


def list_bound(ports: Ports, workspace_id: str) -> list[Principal]:
    return ports.tenants.list_principals(workspace_id)


def remove(ports: Ports, workspace_id: str, principal_id_: str) -> None:
    """Another workspace's principal is ``NotFound``, exactly like one that is not bound."""
    if not ports.tenants.remove_principal(workspace_id, principal_id_):
        raise NotFound(f"no principal {principal_id_!r} in this workspace")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.split()
    return _strings_list(value)


def token_scopes(claims: Mapping[str, Any], prefix: str) -> frozenset[str]:
    """Mnemo's scopes among the token's (``scope``: space-separated, RFC 9068; ``scp``: a list)."""
    raw = _strings(claims.get("scope")) + _strings(claims.get("scp"))
    return frozenset(s[len(prefix) :] for s in raw if s.startswith(prefix) and s[len(prefix) :] in ALL_SCOPES)


def _expand(scopes: frozenset[str]) -> frozenset[str]:
    return frozenset({READ, WRITE, DELETE}) if ADMIN in scopes else scopes


def effective_scopes(granted: frozenset[str], bound: frozenset[str]) -> frozenset[str]:
    """What the token may do here: both the token and the binding must allow it."""
    if ADMIN in granted and ADMIN in bound:
        return frozenset({ADMIN})
    return _expand(granted) & _expand(bound)


def candidates(claims: Mapping[str, Any], group_claims: tuple[str, ...]) -> list[tuple[PrincipalKind, str]]:
    """The (kind, value) pairs a token may be bound by, most specific first."""
    found: list[tuple[PrincipalKind, str]] = []
    sub = claims.get("sub")
    if isinstance(sub, str) and sub:
        found.append(("sub", sub))
    client = claims.get("client_id") or claims.get("azp")
    if isinstance(client, str) and client:
        found.append(("client", client))
    groups: list[str] = []
    for claim in group_claims:
        groups += [g for g in _strings_list(claims.get(claim)) if g not in groups]
    found += [("group", g) for g in groups[:MAX_GROUPS]]
    return found


def _strings_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


def caller_for(ports: Ports, claims: Mapping[str, Any], auth: TokenAuth) -> Caller:
    issuer = str(claims["iss"])
    direct: Principal | None = None
    groups: list[Principal] = []
    for kind, value in candidates(claims, auth.group_claims):
        found = ports.tenants.get_principal(principal_id(issuer, kind, value))
        if found is None:
            continue
        if kind != "group":
            direct = found
            break
        groups.append(found)
    if direct is not None:
        bound = [direct]
    elif groups:
        if len({g.workspace_id for g in groups}) > 1:
            raise Forbidden("this token's groups are bound to more than one workspace")
        bound = groups
    else:
        raise Forbidden("this token's principal is not bound to a workspace here (mnemo principal add)")
    first = bound[0]
    scopes = effective_scopes(token_scopes(claims, auth.scope_prefix), frozenset(s for b in bound for s in b.scopes))
    return Caller(
        key_id=first.id,
        workspace_id=first.workspace_id,
        label=first.label,
        scopes=scopes,
        team_ids=frozenset(t for b in bound for t in b.team_ids),
        default_project_id=first.default_project_id,
        kind="token",
    )


#: the issuer of principals that are AWS IAM roles or users (the ``/mcp-iam`` route)
IAM_ISSUER = "aws-iam"


def iam_principal(arn: str) -> str:
    """A caller ARN as it is bound: an assumed role's session ARN
    (``arn:aws:sts::123456789012:assumed-role/Name/session``) as its role's
    (``arn:aws:iam::123456789012:role/Name``; a role path is not in the session ARN, so bind roles
    without one); any other ARN as it is."""
    parts = arn.split(":", 5)
    if len(parts) == 6 and parts[2] == "sts" and parts[5].startswith("assumed-role/"):
        role = parts[5].split("/")[1]
        return f"arn:{parts[1]}:iam::{parts[4]}:role/{role}"
    return arn


def caller_for_iam(ports: Ports, caller_arn: str) -> Caller:
    """An IAM caller has no token scopes: its binding's scopes are what it may do."""
    bound = ports.tenants.get_principal(principal_id(IAM_ISSUER, "sub", iam_principal(caller_arn)))
    if bound is None:
        raise Forbidden("this AWS principal is not bound to a workspace here (mnemo principal add --issuer aws-iam)")
    return Caller(
        key_id=bound.id,
        workspace_id=bound.workspace_id,
        label=bound.label,
        scopes=frozenset(bound.scopes),
        team_ids=frozenset(bound.team_ids),
        default_project_id=bound.default_project_id,
        kind="token",
    )
