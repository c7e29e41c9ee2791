"""The admin operations served over HTTP under ``/v1/admin`` (key scope ``admin``).

Each acts on the calling key's own workspace only: no argument names a workspace, and a key or
project id of another workspace is ``404`` exactly like one that does not exist. Creating
workspaces and changing rate limits stay with the operator's CLI (docs/operations.md says why).
They run through the same pipeline as the tools (``Service.invoke``); ``service.catalog`` lists them.
"""

from __future__ import annotations

from mnemo.models import admin as m
from mnemo.service import tenancy
from mnemo.service.context import CallContext


def list_keys(ctx: CallContext, _: None) -> m.KeyList:
    return m.KeyList(keys=[m.KeyInfo.of(k) for k in tenancy.list_keys(ctx.ports, ctx.caller.workspace_id)])


def create_key(ctx: CallContext, args: m.CreateKeyArgs) -> m.CreatedKey:
    new = tenancy.create_key(
        ctx.ports,
        ctx.caller.workspace_id,
        label=args.label,
        scopes=list(args.scopes),
        default_project=args.default_project,
        team_ids=list(args.team_ids),
    )
    return m.CreatedKey(key=m.KeyInfo.of(new.key), secret=new.plain)


def revoke_key(ctx: CallContext, _: None) -> m.KeyResult:
    return m.KeyResult(key=m.KeyInfo.of(tenancy.revoke_key(ctx.ports, ctx.caller.workspace_id, ctx.params["key_id"])))


def list_projects(ctx: CallContext, _: None) -> m.ProjectList:
    ws = tenancy.workspace(ctx.ports, ctx.caller.workspace_id)
    projects = ctx.ports.tenants.list_projects(ctx.caller.workspace_id)
    return m.ProjectList(projects=[m.ProjectInfo.of(p, ws) for p in projects])


def create_project(ctx: CallContext, args: m.CreateProjectArgs) -> m.ProjectResult:
    project = tenancy.create_project(ctx.ports, ctx.caller.workspace_id, args.slug, args.name)
    return m.ProjectResult(project=m.ProjectInfo.of(project, tenancy.workspace(ctx.ports, ctx.caller.workspace_id)))


def limits(ctx: CallContext, _: None) -> m.LimitsInfo:
    limits, custom = tenancy.effective_limits(ctx.ports, ctx.caller.workspace_id, ctx.default_limits)
    return m.LimitsInfo(workspace_id=ctx.caller.workspace_id, search=limits.search, write=limits.write, custom=custom)
