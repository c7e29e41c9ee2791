"""Workspace, project, key, rate-limit and secret-check administration.

Plain functions over the ports, each acting inside one workspace named by the caller: the CLI
(an operator with direct access to the backend) calls them with any workspace; the HTTP admin
routes (``service.admin_ops``) only ever with the calling key's own workspace."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.errors import Conflict, InvalidRequest, NotFound
from mnemo.ids import new_id
from mnemo.models.common import SLUG_PATTERN, SLUG_RULE, utc_now
from mnemo.models.records import ApiKey, Project, RateLimits, Workspace
from mnemo.ports import Ports, VersionConflict
from mnemo.service import keys
from mnemo.service.identity import ADMIN, ALL_SCOPES

SLUG_RE = re.compile(SLUG_PATTERN)


@dataclass(frozen=True)
class NewKey:
    key: ApiKey
    plain: str  # shown once, never stored


def create_workspace(ports: Ports, name: str, *, project_slug: str = "default") -> tuple[Workspace, Project]:
    if not name.strip() or len(name) > 128 or any(ord(c) < 32 for c in name):
        raise InvalidRequest("a workspace name is 1-128 characters with no control characters")
    if not SLUG_RE.match(project_slug):
        raise InvalidRequest(f"a slug is {SLUG_RULE}")
    now = utc_now()
    workspace_id = new_id("ws")
    project = Project(id=new_id("prj"), workspace_id=workspace_id, slug=project_slug, name=project_slug, created_at=now)
    workspace = Workspace(id=workspace_id, name=name, default_project_id=project.id, created_at=now)
    ports.tenants.create_workspace(workspace, project)
    return workspace, project


def create_project(ports: Ports, workspace_id: str, slug: str, name: str | None = None) -> Project:
    if not SLUG_RE.match(slug):
        raise InvalidRequest(f"a slug is {SLUG_RULE}")
    if ports.tenants.get_workspace(workspace_id) is None:
        raise NotFound("no such workspace")
    project = Project(id=new_id("prj"), workspace_id=workspace_id, slug=slug, name=name or slug, created_at=utc_now())
    try:
        ports.tenants.create_project(project)
    except VersionConflict:
        raise Conflict(f"a project with slug {slug!r} exists in this workspace") from None
    return project


def grant(ports: Ports, workspace_id: str, scopes: list[str], default_project: str | None) -> str | None:
    """What a key or a bound principal is given, checked: known scopes (at least one), a workspace
    that exists and, when named, its default project (slug or id) — that project's id, or None."""
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown or not scopes:
        raise InvalidRequest(f"scopes must be among {list(ALL_SCOPES)}; got {unknown or 'none'}")
    if ports.tenants.get_workspace(workspace_id) is None:
        raise NotFound("no such workspace")
    if not default_project:
        return None
    project = ports.tenants.get_project(workspace_id, default_project)
    if project is None:
        raise NotFound(f"no project {default_project!r} in this workspace")
    return project.id


def create_key(
    ports: Ports,
    workspace_id: str,
    *,
    label: str,
    scopes: list[str],
    default_project: str | None = None,
    team_ids: list[str] | None = None,
    plain: str | None = None,
) -> NewKey:
    project_id = grant(ports, workspace_id, scopes, default_project)
    plain = plain or keys.new_plain_key()
    check_plain_key(plain)
    salt = keys.new_salt()
    key = ApiKey(
        id=keys.key_id_for(plain),
        workspace_id=workspace_id,
        label=label,
        scopes=sorted(set(scopes)),
        default_project_id=project_id,
        team_ids=sorted(set(team_ids or [])),
        salt=salt,
        secret_hash=keys.hash_secret(plain, salt),
        created_at=utc_now(),
    )
    try:
        ports.tenants.create_key(key)
    except VersionConflict:
        # the id derives from the secret: only a re-used plain key (e.g. MNEMO_BOOTSTRAP_KEY) gets here
        raise Conflict("this key is already registered") from None
    return NewKey(key, plain)


def workspace(ports: Ports, workspace_id: str) -> Workspace:
    found = ports.tenants.get_workspace(workspace_id)
    if found is None:
        raise NotFound(f"no workspace {workspace_id!r}")
    return found


def project(ports: Ports, workspace_id: str, ref: str | None = None) -> Project:
    """A project of the workspace by slug or id; ``None`` is the workspace's default project."""
    ws = workspace(ports, workspace_id)
    found = ports.tenants.get_project(workspace_id, ref or ws.default_project_id)
    if found is None:
        raise NotFound(f"no project {ref!r} in this workspace")
    return found


def list_keys(ports: Ports, workspace_id: str) -> list[ApiKey]:
    workspace(ports, workspace_id)
    return ports.tenants.list_keys(workspace_id)


def revoke_key(ports: Ports, workspace_id: str, key_id: str) -> ApiKey:
    """Revoke a key of this workspace; it is refused from its very next call (keys are read on
    every call, never cached). Revoking a revoked key changes nothing. Another workspace's key
    is ``NotFound``, exactly like a key that does not exist."""
    if not ports.tenants.revoke_key(workspace_id, key_id):
        raise NotFound(f"no key {key_id!r} in this workspace")
    key = ports.tenants.get_key(key_id)
    if key is None or key.workspace_id != workspace_id:  # pragma: no cover - revoked keys are kept
        raise NotFound(f"no key {key_id!r} in this workspace")
    return key


def effective_limits(ports: Ports, workspace_id: str, defaults: RateLimits) -> tuple[RateLimits, bool]:
    """The workspace's rate-limit figures, and whether they are its own (else the defaults)."""
    limits = workspace(ports, workspace_id).limits
    return (limits, True) if limits is not None else (defaults, False)


def set_limits(ports: Ports, workspace_id: str, limits: RateLimits | None) -> None:
    """Give the workspace its own figures (``None``: back to the deployment's defaults). The
    next call is admitted against them (other AWS function instances: within ``tenant_cache_s``)."""
    workspace(ports, workspace_id)
    try:
        ports.tenants.set_limits(workspace_id, limits)
    except VersionConflict:
        raise NotFound(f"no workspace {workspace_id!r}") from None


def set_secret_check(ports: Ports, workspace_id: str, on: bool) -> Workspace:
    """Turn the workspace's secret check on or off (``service.privacy``); the workspace as it now
    is. The next write follows it (other AWS function instances: within ``tenant_cache_s``).
    ``<private>`` spans are stripped either way."""
    workspace(ports, workspace_id)
    try:
        ports.tenants.set_secret_check(workspace_id, on)
    except VersionConflict:
        raise NotFound(f"no workspace {workspace_id!r}") from None
    return workspace(ports, workspace_id)


#: the workspace and key label the first start creates
BOOTSTRAP_WORKSPACE = "default"
BOOTSTRAP_LABEL = "admin"


def check_plain_key(plain: str) -> None:
    """A hand-chosen key (``MNEMO_BOOTSTRAP_KEY``) long enough to be a key at all."""
    if len(plain) < keys.MIN_KEY_LENGTH:
        raise InvalidRequest(f"a key must be at least {keys.MIN_KEY_LENGTH} characters")


def bootstrap(ports: Ports, *, plain_key: str | None = None) -> NewKey | None:
    """On an empty store: a default workspace and project, and an admin key (docs/contract.md §7).

    The key is checked before anything is written. A store whose only workspace is the bootstrap's
    own with no key at all — a first start that stopped between its two writes — gets its admin
    key now, so a key is never lost between them. Returns None when the store already has a
    workspace that is not such a leftover."""
    if plain_key is not None:
        check_plain_key(plain_key)
    if ports.tenants.is_empty():
        ws, _ = create_workspace(ports, BOOTSTRAP_WORKSPACE)
    else:
        workspaces = ports.tenants.list_workspaces()
        if len(workspaces) != 1 or workspaces[0].name != BOOTSTRAP_WORKSPACE:
            return None
        ws = workspaces[0]
        if ports.tenants.list_keys(ws.id):
            return None
    return create_key(ports, ws.id, label=BOOTSTRAP_LABEL, scopes=[ADMIN], plain=plain_key)


def registered_key(ports: Ports, plain: str) -> ApiKey | None:
    """The stored key whose secret is ``plain`` (revoked or not), or None."""
    key = ports.tenants.get_key(keys.key_id_for(plain))
    if key is None or not keys.verify(plain, key.salt, key.secret_hash):
        return None
    return key


def without_admin_key(ports: Ports) -> list[Workspace] | None:
    """The store's workspaces when none of them has an active admin key (nobody can administer
    it over HTTP: the key was lost or revoked); None as soon as one has. Stops at the first."""
    workspaces = ports.tenants.list_workspaces()
    for ws in workspaces:
        if any(ADMIN in k.scopes and not k.revoked for k in ports.tenants.list_keys(ws.id)):
            return None
    return workspaces
