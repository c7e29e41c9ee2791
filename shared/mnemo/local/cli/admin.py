"""Workspaces, projects, keys, rate limits and the secret check, straight on the store (the operator needs no key)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemo.service.pipeline import Service

from mnemo.local.cli.context import service, workspace_of
from mnemo.local.cli.output import EXIT_OK, Console, UsageError, explained, table


def cmd_workspace_create(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import KeyInfo, WorkspaceInfo
    from mnemo.service import tenancy
    from mnemo.service.identity import ADMIN

    svc = service(args)
    if not tenancy.SLUG_RE.match(args.project_slug):
        raise UsageError("--project-slug: 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit")
    workspace, project = tenancy.create_workspace(svc.ports, args.name, project_slug=args.project_slug)
    payload: dict[str, Any] = {
        "workspace": WorkspaceInfo.of(workspace).model_dump(mode="json"),
        "default_project": {"id": project.id, "slug": project.slug},
    }
    text = f"{workspace.id}"
    console.note(f"Created workspace {workspace.name!r} ({workspace.id}) with default project {project.slug!r}.")
    if args.admin_key:
        new = tenancy.create_key(svc.ports, workspace.id, label=args.admin_key_label, scopes=[ADMIN])
        payload["admin_key"] = {"key": KeyInfo.of(new.key).model_dump(mode="json"), "secret": new.plain}
        console.note("Its admin API key, shown once (only a hash is stored):")
        text = new.plain
    console.result(payload, text)
    return EXIT_OK


def cmd_workspace_list(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import WorkspaceInfo

    svc = service(args)
    workspaces = svc.ports.tenants.list_workspaces()
    rows = []
    for ws in workspaces:
        limits = ws.limits or svc.default_limits
        figures = f"{limits.search}/{limits.write}" + ("" if ws.limits else " (default)")
        rows.append([ws.id, ws.name, ws.default_project_id, figures])
    console.result(
        {"workspaces": [WorkspaceInfo.of(ws).model_dump(mode="json") for ws in workspaces]},
        table(rows, ["ID", "NAME", "DEFAULT PROJECT", "LIMITS SEARCH/WRITE"]) if rows else "no workspaces",
    )
    return EXIT_OK


def cmd_project_create(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import ProjectInfo
    from mnemo.service import tenancy

    svc = service(args)
    workspace_id = workspace_of(svc, args)
    project = tenancy.create_project(svc.ports, workspace_id, args.slug, args.name)
    info = ProjectInfo.of(project, tenancy.workspace(svc.ports, workspace_id))
    console.note(f"Created project {project.slug!r} in {workspace_id}.")
    console.result({"project": info.model_dump(mode="json")}, project.id)
    return EXIT_OK


def cmd_project_list(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import ProjectInfo
    from mnemo.service import tenancy

    svc = service(args)
    workspace_id = workspace_of(svc, args)
    ws = tenancy.workspace(svc.ports, workspace_id)
    infos = [ProjectInfo.of(p, ws) for p in svc.ports.tenants.list_projects(workspace_id)]
    rows = [[p.id, p.slug, p.name, "yes" if p.default else ""] for p in infos]
    console.result(
        {"workspace_id": workspace_id, "projects": [p.model_dump(mode="json") for p in infos]},
        table(rows, ["ID", "SLUG", "NAME", "DEFAULT"]),
    )
    return EXIT_OK


def split_values(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def cmd_key_create(args: argparse.Namespace, console: Console) -> int:
    from pydantic import ValidationError

    from mnemo.models.admin import CreateKeyArgs, KeyInfo
    from mnemo.service import tenancy
    from mnemo.service.pipeline import validation_error

    svc = service(args)
    workspace_id = workspace_of(svc, args)
    try:
        spec = CreateKeyArgs(
            label=args.label,
            scopes=split_values(args.scope),  # type: ignore[arg-type]
            default_project=args.project,
            team_ids=split_values(args.team),
        )
    except ValidationError as exc:
        raise explained(validation_error(exc)) from None
    new = tenancy.create_key(
        svc.ports,
        workspace_id,
        label=spec.label,
        scopes=list(spec.scopes),
        default_project=spec.default_project,
        team_ids=list(spec.team_ids),
    )
    console.note(
        f"Created key {new.key.id} ({new.key.label!r}: {', '.join(new.key.scopes)}) in {workspace_id}. "
        "The key is shown once, here; only a salted hash is stored:"
    )
    console.result({"key": KeyInfo.of(new.key).model_dump(mode="json"), "secret": new.plain}, new.plain)
    return EXIT_OK


def cmd_key_list(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import KeyInfo
    from mnemo.service import tenancy

    svc = service(args)
    workspace_id = workspace_of(svc, args)
    infos = [KeyInfo.of(k) for k in tenancy.list_keys(svc.ports, workspace_id)]
    rows = [
        [
            k.id,
            k.label,
            ",".join(k.scopes),
            k.default_project_id or "",
            ",".join(k.team_ids),
            "revoked" if k.revoked else "active",
        ]
        for k in infos
    ]
    console.result(
        {"workspace_id": workspace_id, "keys": [k.model_dump(mode="json") for k in infos]},
        table(rows, ["ID", "LABEL", "SCOPES", "DEFAULT PROJECT", "TEAMS", "STATE"]),
    )
    return EXIT_OK


def cmd_key_revoke(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import KeyInfo
    from mnemo.service import tenancy

    svc = service(args)
    key = tenancy.revoke_key(svc.ports, workspace_of(svc, args), args.key_id)
    console.note(f"Revoked {key.id} ({key.label!r}); it is refused from its next call.")
    console.result({"key": KeyInfo.of(key).model_dump(mode="json")}, key.id)
    return EXIT_OK


def _limits_payload(svc: Service, workspace_id: str) -> tuple[dict[str, Any], str]:
    from mnemo.service import tenancy

    limits, custom = tenancy.effective_limits(svc.ports, workspace_id, svc.default_limits)
    payload = {"workspace_id": workspace_id, "search": limits.search, "write": limits.write, "custom": custom}
    text = f"search {limits.search}/min  write {limits.write}/min  ({_limits_origin(custom)})"
    return payload, text


def _limits_origin(custom: bool) -> str:
    """Where the figures come from. A workspace's own limits are stored: every server applies
    them. The defaults are this command's: a server started with other ``MNEMO_*_PER_MINUTE``
    values applies those, which this command cannot see."""
    from mnemo.config import environment

    if custom:
        return "this workspace's own; every server applies them"
    names = [f"MNEMO_{n.upper()}" for n in ("search_per_minute", "write_per_minute") if n in environment()]
    where = f"from {' and '.join(names)} here" if names else "built in"
    return (
        f"the defaults, {where}; a server started with other MNEMO_SEARCH_PER_MINUTE / "
        "MNEMO_WRITE_PER_MINUTE values applies its own"
    )


def cmd_limits_show(args: argparse.Namespace, console: Console) -> int:
    svc = service(args)
    payload, text = _limits_payload(svc, workspace_of(svc, args))
    console.result(payload, text)
    return EXIT_OK


def cmd_limits_set(args: argparse.Namespace, console: Console) -> int:
    from pydantic import ValidationError

    from mnemo.models.records import RateLimits
    from mnemo.service import tenancy
    from mnemo.service.pipeline import validation_error

    if args.default and (args.search is not None or args.write is not None):
        raise UsageError("--default cannot be combined with --search or --write")
    if not args.default and args.search is None and args.write is None:
        raise UsageError("give --search N and/or --write N (calls a minute), or --default")
    svc = service(args)
    workspace_id = workspace_of(svc, args)
    if args.default:
        tenancy.set_limits(svc.ports, workspace_id, None)
    else:
        current, _ = tenancy.effective_limits(svc.ports, workspace_id, svc.default_limits)
        try:
            limits = RateLimits(
                search=args.search if args.search is not None else current.search,
                write=args.write if args.write is not None else current.write,
            )
        except ValidationError as exc:
            raise explained(validation_error(exc)) from None
        tenancy.set_limits(svc.ports, workspace_id, limits)
    payload, text = _limits_payload(svc, workspace_id)
    console.result(payload, text)
    return EXIT_OK


def cmd_principal_add(args: argparse.Namespace, console: Console) -> int:
    from pydantic import ValidationError

    from mnemo import runtime
    from mnemo.config import split_list
    from mnemo.models.admin import BindPrincipalArgs, PrincipalInfo
    from mnemo.service import principals
    from mnemo.service.pipeline import validation_error

    svc = service(args)
    workspace_id = workspace_of(svc, args)
    kinds = [(k, v) for k, v in (("sub", args.subject), ("client", args.client), ("group", args.group)) if v]
    if len(kinds) != 1:
        raise UsageError("name the principal with exactly one of --subject, --client or --group")
    (kind, value), issuers = kinds[0], split_list(runtime.settings().oauth_issuers)
    issuer = args.issuer or (issuers[0] if issuers else None)
    if issuer is None:
        raise UsageError("pass --issuer URL (or set MNEMO_OAUTH_ISSUERS): the authorization server of its tokens")
    try:
        spec = BindPrincipalArgs(
            issuer=issuer,
            kind=kind,
            value=value,
            label=args.label,
            scopes=split_values(args.scope),  # type: ignore[arg-type]
            default_project=args.project,
            team_ids=split_values(args.team),
        )
    except ValidationError as exc:
        raise explained(validation_error(exc)) from None
    bound = principals.bind(
        svc.ports,
        workspace_id,
        issuer=issuer,
        kind=spec.kind,
        value=spec.value,
        scopes=list(spec.scopes),
        label=spec.label,
        default_project=spec.default_project,
        team_ids=list(spec.team_ids),
    )
    if issuers and issuer not in (*issuers, principals.IAM_ISSUER):
        console.note(f"Note: {issuer} is not among MNEMO_OAUTH_ISSUERS; its tokens are refused until it is.")
    console.note(f"Bound {kind} {value!r} of {issuer} to {workspace_id} ({', '.join(bound.scopes)}).")
    console.result({"principal": PrincipalInfo.of(bound).model_dump(mode="json")}, bound.id)
    return EXIT_OK


def cmd_principal_list(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import PrincipalInfo
    from mnemo.service import principals

    svc = service(args)
    workspace_id = workspace_of(svc, args)
    infos = [PrincipalInfo.of(p) for p in principals.list_bound(svc.ports, workspace_id)]
    rows = [
        [p.id, p.kind, p.value, p.issuer, ",".join(p.scopes), p.default_project_id or "", ",".join(p.team_ids)]
        for p in infos
    ]
    console.result(
        {"workspace_id": workspace_id, "principals": [p.model_dump(mode="json") for p in infos]},
        table(rows, ["ID", "KIND", "VALUE", "ISSUER", "SCOPES", "DEFAULT PROJECT", "TEAMS"]),
    )
    return EXIT_OK


def cmd_principal_remove(args: argparse.Namespace, console: Console) -> int:
    from mnemo.service import principals

    svc = service(args)
    workspace_id = workspace_of(svc, args)
    principals.remove(svc.ports, workspace_id, args.principal_id)
    console.note(f"Removed {args.principal_id}; its tokens are refused (403) from their next call.")
    console.result({"removed": args.principal_id, "workspace_id": workspace_id}, args.principal_id)
    return EXIT_OK


def _privacy_payload(workspace_id: str, secret_check: bool) -> tuple[dict[str, Any], str]:
    payload = {"workspace_id": workspace_id, "secret_check": secret_check}
    text = (
        "secret check on: writes holding a secret are refused"
        if secret_check
        else "secret check off: writes holding a secret are stored as given"
    ) + " (<private> spans are removed either way)"
    return payload, text


def cmd_privacy_show(args: argparse.Namespace, console: Console) -> int:
    from mnemo.service import tenancy

    svc = service(args)
    workspace = tenancy.workspace(svc.ports, workspace_of(svc, args))
    console.result(*_privacy_payload(workspace.id, workspace.secret_check))
    return EXIT_OK


def cmd_privacy_set(args: argparse.Namespace, console: Console) -> int:
    from mnemo.service import tenancy

    svc = service(args)
    workspace = tenancy.set_secret_check(svc.ports, workspace_of(svc, args), args.check == "on")
    console.result(*_privacy_payload(workspace.id, workspace.secret_check))
    return EXIT_OK
