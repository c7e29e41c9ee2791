"""The workspace operations served over HTTP: under ``/v1/admin`` (key scope ``admin``) and
``GET /v1/whoami`` (any key: what the key itself is and may do).

Each acts on the calling key's own workspace only: no argument names a workspace, and a key or
project id of another workspace is ``404`` exactly like one that does not exist. Creating
workspaces and changing rate limits stay with the operator's CLI (docs/operations.md says why);
the workspace's secret check is the workspace admin's to turn off or on.
They run through the same pipeline as the tools (``Service.invoke``); ``service.catalog`` lists them.
"""

from __future__ import annotations

from mnemo.errors import InvalidRequest, NotFound
from mnemo.models import admin as m
from mnemo.models.tools import ProjectRef
from mnemo.ports import RateClass
from mnemo.service import principals, tenancy, transfer
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


def list_principals(ctx: CallContext, _: None) -> m.PrincipalList:
    found = principals.list_bound(ctx.ports, ctx.caller.workspace_id)
    return m.PrincipalList(principals=[m.PrincipalInfo.of(p) for p in found])


def bind_principal(ctx: CallContext, args: m.BindPrincipalArgs) -> m.PrincipalResult:
    issuer = args.issuer or (ctx.issuers[0] if ctx.issuers else None)
    if issuer is None or (ctx.issuers and issuer not in (*ctx.issuers, principals.IAM_ISSUER)):
        raise InvalidRequest(
            f"issuer must be one of this deployment's issuers: {list(ctx.issuers)}",
            details=[{"loc": ["issuer"], "type": "value_error"}],
        )
    bound = principals.bind(
        ctx.ports,
        ctx.caller.workspace_id,
        issuer=issuer,
        kind=args.kind,
        value=args.value,
        scopes=list(args.scopes),
        label=args.label,
        default_project=args.default_project,
        team_ids=list(args.team_ids),
    )
    return m.PrincipalResult(principal=m.PrincipalInfo.of(bound))


def remove_principal(ctx: CallContext, _: None) -> m.PrincipalList:
    """The workspace's principals after the removal."""
    principals.remove(ctx.ports, ctx.caller.workspace_id, ctx.params["principal_id"])
    return list_principals(ctx, None)


def list_projects(ctx: CallContext, _: None) -> m.ProjectList:
    ws = tenancy.workspace(ctx.ports, ctx.caller.workspace_id)
    projects = ctx.ports.tenants.list_projects(ctx.caller.workspace_id)
    return m.ProjectList(projects=[m.ProjectInfo.of(p, ws) for p in projects])


def create_project(ctx: CallContext, args: m.CreateProjectArgs) -> m.ProjectResult:
    project = tenancy.create_project(ctx.ports, ctx.caller.workspace_id, args.slug, args.name)
    return m.ProjectResult(project=m.ProjectInfo.of(project, tenancy.workspace(ctx.ports, ctx.caller.workspace_id)))


def limits(ctx: CallContext, _: None) -> m.LimitsInfo:
    ws = ctx.caller.workspace_id
    limits, custom = tenancy.effective_limits(ctx.ports, ws, ctx.default_limits)
    levels = {}
    classes: tuple[tuple[RateClass, int], ...] = (("search", limits.search), ("write", limits.write))
    for rate_class, limit in classes:
        level = ctx.ports.limiter.peek(ws, rate_class, limit)
        levels[rate_class] = m.BucketLevel(
            limit=limit, remaining=level.remaining, full_in_s=level.reset_s, retry_after_s=level.retry_after_s
        )
    return m.LimitsInfo(
        workspace_id=ws, search=limits.search, write=limits.write, custom=custom, levels=m.BucketLevels(**levels)
    )


def privacy(ctx: CallContext, _: None) -> m.PrivacyInfo:
    ws = tenancy.workspace(ctx.ports, ctx.caller.workspace_id)
    return m.PrivacyInfo(workspace_id=ws.id, secret_check=ws.secret_check)


def set_privacy(ctx: CallContext, args: m.PrivacyArgs) -> m.PrivacyInfo:
    ws = tenancy.set_secret_check(ctx.ports, ctx.caller.workspace_id, args.secret_check)
    return m.PrivacyInfo(workspace_id=ws.id, secret_check=ws.secret_check)


#: a page of the admin export stops growing past this many bytes of lines
EXPORT_PAGE_BYTES = 4 << 20


def export_page(ctx: CallContext, args: m.ExportArgs) -> m.ExportPage:
    """One page of a project's memories, each as a line of ``mnemo export`` would hold it. A page
    ends early, its cursor at its last memory, once its lines pass :data:`EXPORT_PAGE_BYTES`
    (histories make lines of up to ~100 KB, and a Lambda answer holds 6 MB)."""
    project = tenancy.project(ctx.ports, ctx.caller.workspace_id, args.project)
    page = transfer.export_page(ctx.ports, project, cursor=args.cursor, limit=args.limit, now=ctx.now)
    memories: list[m.ExportedMemory] = []
    size = 0
    cursor = page.cursor
    for n, entry in enumerate(transfer.with_history(ctx.ports, page.items)):
        if size > EXPORT_PAGE_BYTES:
            cursor = page.items[n - 1].id
            break
        line = m.ExportedMemory.of(entry.record, entry.versions, entry.dropped)
        memories.append(line)
        size += len(line.model_dump_json())
    return m.ExportPage(project=ProjectRef(id=project.id, slug=project.slug), memories=memories, cursor=cursor)


def whoami(ctx: CallContext, _: None) -> m.WhoAmI:
    """The calling key (never its secret), its workspace, the projects it can act in and the
    operations its scopes allow."""
    from mnemo.service.catalog import REGISTRY  # the catalog lists this very function

    caller = ctx.caller
    if caller.kind == "token":
        principal = ctx.ports.tenants.get_principal(caller.key_id)
        if principal is None:  # pragma: no cover - the pipeline authenticated this token a moment ago
            raise NotFound("this principal is no longer bound")
        # a token shows as a key would: its binding's id and label, and the scopes it has here
        info = m.KeyInfo(
            id=principal.id,
            label=principal.label,
            scopes=sorted(caller.scopes),
            default_project_id=caller.default_project_id,
            team_ids=sorted(caller.team_ids),
            created_at=principal.created_at,
        )
    else:
        key = ctx.ports.tenants.get_key(caller.key_id)
        if key is None:  # pragma: no cover - the pipeline authenticated this key a moment ago
            raise NotFound("this key no longer exists")
        info = m.KeyInfo.of(key)
    ws = tenancy.workspace(ctx.ports, caller.workspace_id)
    # the default project first, then by slug: the same order on every backend
    projects = sorted(ctx.ports.tenants.list_projects(ws.id), key=lambda p: (p.id != ws.default_project_id, p.slug))
    return m.WhoAmI(
        key=info,
        workspace=m.WorkspaceRef(id=ws.id, name=ws.name, default_project_id=ws.default_project_id),
        projects=[m.ProjectInfo.of(p, ws) for p in projects],
        operations=[op.name for op in REGISTRY if caller.may(op.scopes)],
    )
