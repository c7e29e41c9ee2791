"""Workspace, project and key administration (used by the CLI, bootstrap and admin tools)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.errors import Conflict, InvalidRequest, NotFound
from mnemo.ids import new_id
from mnemo.models.common import utc_now
from mnemo.models.records import ApiKey, Project, Workspace
from mnemo.ports import Ports, VersionConflict
from mnemo.service import keys
from mnemo.service.context import ADMIN, ALL_SCOPES

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


@dataclass(frozen=True)
class NewKey:
    key: ApiKey
    plain: str  # shown once, never stored


def create_workspace(ports: Ports, name: str, *, project_slug: str = "default") -> tuple[Workspace, Project]:
    now = utc_now()
    workspace_id = new_id("ws")
    project = Project(id=new_id("prj"), workspace_id=workspace_id, slug=project_slug, name=project_slug, created_at=now)
    workspace = Workspace(id=workspace_id, name=name, default_project_id=project.id, created_at=now)
    ports.tenants.create_workspace(workspace, project)
    return workspace, project


def create_project(ports: Ports, workspace_id: str, slug: str, name: str | None = None) -> Project:
    if not SLUG_RE.match(slug):
        raise InvalidRequest("a slug is 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit")
    if ports.tenants.get_workspace(workspace_id) is None:
        raise NotFound("no such workspace")
    project = Project(id=new_id("prj"), workspace_id=workspace_id, slug=slug, name=name or slug, created_at=utc_now())
    try:
        ports.tenants.create_project(project)
    except VersionConflict:
        raise Conflict(f"a project with slug {slug!r} exists in this workspace") from None
    return project


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
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown or not scopes:
        raise InvalidRequest(f"scopes must be among {list(ALL_SCOPES)}; got {unknown or 'none'}")
    if ports.tenants.get_workspace(workspace_id) is None:
        raise NotFound("no such workspace")
    project_id = None
    if default_project:
        project = ports.tenants.get_project(workspace_id, default_project)
        if project is None:
            raise NotFound(f"no project {default_project!r} in this workspace")
        project_id = project.id
    plain = plain or keys.new_plain_key()
    if len(plain) < keys.MIN_KEY_LENGTH:
        raise InvalidRequest(f"a key must be at least {keys.MIN_KEY_LENGTH} characters")
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
    ports.tenants.create_key(key)
    return NewKey(key, plain)


def bootstrap(ports: Ports, *, plain_key: str | None = None) -> NewKey | None:
    """On an empty store: a default workspace and project, and an admin key (SPEC §7).
    Returns None when the store already has a workspace."""
    if not ports.tenants.is_empty():
        return None
    workspace, _ = create_workspace(ports, "default")
    return create_key(ports, workspace.id, label="admin", scopes=[ADMIN], plain=plain_key)
