"""The admin operations served over HTTP under ``/v1/admin`` (key scope ``admin``).

Like the tool registry, this one table is read by the REST app, the OpenAPI generator and
``template.yaml``'s tests. Every operation acts on the calling key's own workspace only: no
argument names a workspace, and a key or project id of another workspace is ``404`` exactly
like one that does not exist. Creating workspaces and changing rate limits stay with the
operator's CLI (docs/operations.md says why).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mnemo.models import admin as m
from mnemo.models.records import RateLimits
from mnemo.ports import Ports, RateClass
from mnemo.service import tenancy
from mnemo.service.identity import Caller


@dataclass(frozen=True)
class AdminContext:
    ports: Ports
    caller: Caller
    #: the deployment's default rate limits
    default_limits: RateLimits
    #: path parameters, e.g. ``{"key_id": …}``
    params: Mapping[str, str]

    @property
    def workspace_id(self) -> str:
        return self.caller.workspace_id


@dataclass(frozen=True)
class AdminOperation:
    name: str  # the OpenAPI operationId
    method: str
    path: str  # template.yaml / OpenAPI form: /v1/admin/keys/{key_id}/revoke
    title: str
    description: str
    args_model: type[BaseModel] | None
    result_model: type[BaseModel]
    run: Callable[[AdminContext, Any], BaseModel]
    rate_class: RateClass
    status: int = 200


def _list_keys(ctx: AdminContext, _: None) -> m.KeyList:
    return m.KeyList(keys=[m.KeyInfo.of(k) for k in tenancy.list_keys(ctx.ports, ctx.workspace_id)])


def _create_key(ctx: AdminContext, args: m.CreateKeyArgs) -> m.CreatedKey:
    new = tenancy.create_key(
        ctx.ports,
        ctx.workspace_id,
        label=args.label,
        scopes=list(args.scopes),
        default_project=args.default_project,
        team_ids=list(args.team_ids),
    )
    return m.CreatedKey(key=m.KeyInfo.of(new.key), secret=new.plain)


def _revoke_key(ctx: AdminContext, _: None) -> m.KeyResult:
    return m.KeyResult(key=m.KeyInfo.of(tenancy.revoke_key(ctx.ports, ctx.workspace_id, ctx.params["key_id"])))


def _list_projects(ctx: AdminContext, _: None) -> m.ProjectList:
    ws = tenancy.workspace(ctx.ports, ctx.workspace_id)
    projects = ctx.ports.tenants.list_projects(ctx.workspace_id)
    return m.ProjectList(projects=[m.ProjectInfo.of(p, ws) for p in projects])


def _create_project(ctx: AdminContext, args: m.CreateProjectArgs) -> m.ProjectResult:
    project = tenancy.create_project(ctx.ports, ctx.workspace_id, args.slug, args.name)
    return m.ProjectResult(project=m.ProjectInfo.of(project, tenancy.workspace(ctx.ports, ctx.workspace_id)))


def _limits(ctx: AdminContext, _: None) -> m.LimitsInfo:
    limits, custom = tenancy.effective_limits(ctx.ports, ctx.workspace_id, ctx.default_limits)
    return m.LimitsInfo(workspace_id=ctx.workspace_id, search=limits.search, write=limits.write, custom=custom)


ADMIN_OPERATIONS: dict[str, AdminOperation] = {
    op.name: op
    for op in (
        AdminOperation(
            "admin_keys_list",
            "GET",
            "/v1/admin/keys",
            "List the workspace's API keys",
            "Every key of the calling key's workspace, revoked ones included, without secrets.",
            None,
            m.KeyList,
            _list_keys,
            "search",
        ),
        AdminOperation(
            "admin_key_create",
            "POST",
            "/v1/admin/keys",
            "Create an API key",
            "A new key in the calling key's workspace. The answer carries the plain key once; "
            "only a salted hash of it is stored.",
            m.CreateKeyArgs,
            m.CreatedKey,
            _create_key,
            "write",
            status=201,
        ),
        AdminOperation(
            "admin_key_revoke",
            "POST",
            "/v1/admin/keys/{key_id}/revoke",
            "Revoke an API key",
            "The key is refused (401) from its very next call. Revoking a revoked key changes nothing.",
            None,
            m.KeyResult,
            _revoke_key,
            "write",
        ),
        AdminOperation(
            "admin_projects_list",
            "GET",
            "/v1/admin/projects",
            "List the workspace's projects",
            "Every project of the calling key's workspace, by slug.",
            None,
            m.ProjectList,
            _list_projects,
            "search",
        ),
        AdminOperation(
            "admin_project_create",
            "POST",
            "/v1/admin/projects",
            "Create a project",
            "A new project in the calling key's workspace; the slug must be unique there.",
            m.CreateProjectArgs,
            m.ProjectResult,
            _create_project,
            "write",
            status=201,
        ),
        AdminOperation(
            "admin_limits_get",
            "GET",
            "/v1/admin/limits",
            "Show the workspace's rate limits",
            "Calls a minute for the search and write classes. Only the operator changes them (CLI).",
            None,
            m.LimitsInfo,
            _limits,
            "search",
        ),
    )
}
