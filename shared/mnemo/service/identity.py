"""Who is calling: the key's identity and what it may do, built once per call from the key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mnemo.errors import Forbidden
from mnemo.models.common import SCOPE_NAMES

READ, WRITE, DELETE, ADMIN = SCOPE_NAMES
#: the scopes a key may carry, in the order docs list them
ALL_SCOPES = SCOPE_NAMES


@dataclass(frozen=True, slots=True)
class Caller:
    key_id: str
    workspace_id: str
    label: str
    scopes: frozenset[str]
    team_ids: frozenset[str]
    default_project_id: str | None
    #: how the caller proved who it is: an API key, an OAuth access token (``key_id`` is then the
    #: principal binding's id) or the local user of ``mnemo mcp``
    kind: Literal["key", "token", "local"] = "key"

    @property
    def is_admin(self) -> bool:
        return ADMIN in self.scopes

    def may(self, needed: frozenset[str]) -> bool:
        """True when the key holds any of ``needed`` (admin holds all)."""
        return self.is_admin or bool(self.scopes & needed)

    def sees_team(self, team_id: str | None) -> bool:
        return team_id is None or self.is_admin or team_id in self.team_ids

    def require_team(self, team_id: str) -> None:
        if not self.sees_team(team_id):
            raise Forbidden(f"this {'token' if self.kind == 'token' else 'key'} does not belong to team {team_id!r}")


def local_caller(workspace_id: str, project_id: str | None, label: str) -> Caller:
    """The user who owns the process and its store, as ``mnemo mcp`` serves them over stdio:
    no key (there is no network to guard), every scope, ``project_id`` as the default project."""
    return Caller(
        key_id="local",
        workspace_id=workspace_id,
        label=label,
        scopes=frozenset({ADMIN}),
        team_ids=frozenset(),
        default_project_id=project_id,
        kind="local",
    )


def looks_like_jwt(value: str) -> bool:
    """A JWS in compact form (three base64url parts, a JSON header ``eyJ…``): never an API key's shape."""
    return value.startswith("eyJ") and value.count(".") == 2


def bearer_secret(authorization: str | None) -> str | None:
    """The plain key of an ``Authorization: Bearer <key>`` header, or None."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value:
        return None
    return value
