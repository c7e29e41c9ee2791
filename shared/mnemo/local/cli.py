"""The ``mnemo`` command line: the local server, and administration straight on a backend.

Administration commands act as the operator (they open the backend itself, no API key), so they
can manage every workspace; docs/operations.md describes them. Exit codes:

* 0 -- done;
* 1 -- refused or failed (not found, conflict, invalid value, import refused, internal error);
* 2 -- usage: unknown command or option, missing argument, ambiguous workspace;
* 3 -- the backend is unavailable (cannot open or reach it); retrying later may work.

Results go to stdout (``--json``: one JSON document; ``export``: JSON lines), messages and
errors to stderr (``--json``: ``{"message", "code"}``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemo.models.records import Project
    from mnemo.service.pipeline import Service

DEFAULT_PORT = 8787

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNAVAILABLE = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that cannot run as given (exit 2)."""


def _local_environment(backend: str | None, data_dir: str | None) -> None:
    """Settings are environment-driven (read once); the CLI's flags just set them first."""
    if backend:
        os.environ["MNEMO_BACKEND"] = backend
    if data_dir:
        os.environ["MNEMO_DATA_DIR"] = data_dir
    # Outside Lambda: no X-Ray daemon, and metrics would only print EMF blobs to the console.
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Mnemo")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")


def cmd_serve(args: argparse.Namespace) -> int:
    _local_environment(args.backend, args.data_dir)
    from mnemo import runtime
    from mnemo.local.server import LocalServer
    from mnemo.service import tenancy

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    ports = runtime.service().ports
    created = tenancy.bootstrap(ports, plain_key=os.environ.get("MNEMO_BOOTSTRAP_KEY") or None)
    port = args.port if args.port is not None else int(os.environ.get("MNEMO_PORT", DEFAULT_PORT))
    server = LocalServer(args.host, port)
    server.gateway.warm()
    cfg = runtime.settings()
    where = cfg.sqlite_path if cfg.backend == "sqlite" else "DynamoDB + OpenSearch"
    print(f"Mnemo listening on {server.url} (backend: {cfg.backend}, data: {where})", flush=True)
    if created is not None:
        print("Created the default workspace and project. Admin API key (shown once):", flush=True)
        print(f"  {created.plain}", flush=True)
        print(f'  export MNEMO_KEY="{created.plain}"', flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        ports.close()
    return 0


def cmd_cleanup(args: argparse.Namespace) -> int:
    """The scheduled cleanup job, run here on either backend; prints each run's summary (JSON)."""
    _local_environment(args.backend, args.data_dir)
    from mnemo import runtime
    from mnemo.service.cleanup import CleanupOptions, run_cleanup

    ports = runtime.service().ports
    options = CleanupOptions.from_settings(runtime.settings(), max_items=args.max_items)
    try:
        while True:
            summary = run_cleanup(ports, options)
            print(json.dumps(summary.as_dict()), flush=True)
            if not (args.until_done and summary.more) or summary.index_unavailable:
                return 1 if summary.index_unavailable else 0
    finally:
        ports.close()


# ---- administration -------------------------------------------------------------------------


class Console:
    """Where a command's output goes: plain text for people, or JSON for scripts."""

    def __init__(self, as_json: bool, out: IO[str] | None = None, err: IO[str] | None = None) -> None:
        self.as_json = as_json
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def result(self, payload: Any, text: str) -> None:
        if self.as_json:
            self.out.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        else:
            self.out.write(text + ("\n" if text and not text.endswith("\n") else ""))

    def note(self, text: str) -> None:
        """A message for people (stderr); silent with --json."""
        if not self.as_json:
            self.err.write(text + "\n")

    def error(self, message: str, code: str) -> None:
        if self.as_json:
            self.err.write(json.dumps({"message": message, "code": code}, ensure_ascii=False) + "\n")
        else:
            self.err.write(f"mnemo: error: {message}\n")


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]
    return "\n".join(lines)


def _service(args: argparse.Namespace) -> Service:
    _local_environment(args.backend, args.data_dir)
    from mnemo import runtime

    return runtime.service()


def _workspace_id(svc: Service, args: argparse.Namespace) -> str:
    """--workspace, else $MNEMO_WORKSPACE, else the store's only workspace."""
    chosen = args.workspace or os.environ.get("MNEMO_WORKSPACE")
    if chosen:
        return str(chosen)
    workspaces = svc.ports.tenants.list_workspaces()
    if len(workspaces) == 1:
        return workspaces[0].id
    if not workspaces:
        from mnemo.errors import NotFound

        raise NotFound("the store has no workspace yet: run `mnemo workspace create NAME` (or `mnemo serve`)")
    raise UsageError(f"the store has {len(workspaces)} workspaces: pass --workspace (see `mnemo workspace list`)")


def _project(svc: Service, args: argparse.Namespace) -> Project:
    from mnemo.service import tenancy

    return tenancy.project(svc.ports, _workspace_id(svc, args), args.project)


def cmd_workspace_create(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import KeyInfo, WorkspaceInfo
    from mnemo.service import tenancy
    from mnemo.service.identity import ADMIN

    svc = _service(args)
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

    svc = _service(args)
    workspaces = svc.ports.tenants.list_workspaces()
    rows = []
    for ws in workspaces:
        limits = ws.limits or svc.default_limits
        figures = f"{limits.search}/{limits.write}" + ("" if ws.limits else " (default)")
        rows.append([ws.id, ws.name, ws.default_project_id, figures])
    console.result(
        {"workspaces": [WorkspaceInfo.of(ws).model_dump(mode="json") for ws in workspaces]},
        _table(rows, ["ID", "NAME", "DEFAULT PROJECT", "LIMITS SEARCH/WRITE"]) if rows else "no workspaces",
    )
    return EXIT_OK


def cmd_project_create(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import ProjectInfo
    from mnemo.service import tenancy

    svc = _service(args)
    workspace_id = _workspace_id(svc, args)
    project = tenancy.create_project(svc.ports, workspace_id, args.slug, args.name)
    info = ProjectInfo.of(project, tenancy.workspace(svc.ports, workspace_id))
    console.note(f"Created project {project.slug!r} in {workspace_id}.")
    console.result({"project": info.model_dump(mode="json")}, project.id)
    return EXIT_OK


def cmd_project_list(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import ProjectInfo
    from mnemo.service import tenancy

    svc = _service(args)
    workspace_id = _workspace_id(svc, args)
    ws = tenancy.workspace(svc.ports, workspace_id)
    infos = [ProjectInfo.of(p, ws) for p in svc.ports.tenants.list_projects(workspace_id)]
    rows = [[p.id, p.slug, p.name, "yes" if p.default else ""] for p in infos]
    console.result(
        {"workspace_id": workspace_id, "projects": [p.model_dump(mode="json") for p in infos]},
        _table(rows, ["ID", "SLUG", "NAME", "DEFAULT"]),
    )
    return EXIT_OK


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def cmd_key_create(args: argparse.Namespace, console: Console) -> int:
    from pydantic import ValidationError

    from mnemo.models.admin import CreateKeyArgs, KeyInfo
    from mnemo.service import tenancy
    from mnemo.service.pipeline import validation_error

    svc = _service(args)
    workspace_id = _workspace_id(svc, args)
    try:
        spec = CreateKeyArgs(
            label=args.label,
            scopes=_split(args.scope),  # type: ignore[arg-type]
            default_project=args.project,
            team_ids=_split(args.team),
        )
    except ValidationError as exc:
        raise _explained(validation_error(exc)) from None
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

    svc = _service(args)
    workspace_id = _workspace_id(svc, args)
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
        _table(rows, ["ID", "LABEL", "SCOPES", "DEFAULT PROJECT", "TEAMS", "STATE"]),
    )
    return EXIT_OK


def cmd_key_revoke(args: argparse.Namespace, console: Console) -> int:
    from mnemo.models.admin import KeyInfo
    from mnemo.service import tenancy

    svc = _service(args)
    key = tenancy.revoke_key(svc.ports, _workspace_id(svc, args), args.key_id)
    console.note(f"Revoked {key.id} ({key.label!r}); it is refused from its next call.")
    console.result({"key": KeyInfo.of(key).model_dump(mode="json")}, key.id)
    return EXIT_OK


def _limits_payload(svc: Service, workspace_id: str) -> tuple[dict[str, Any], str]:
    from mnemo.service import tenancy

    limits, custom = tenancy.effective_limits(svc.ports, workspace_id, svc.default_limits)
    payload = {"workspace_id": workspace_id, "search": limits.search, "write": limits.write, "custom": custom}
    origin = "this workspace's own" if custom else "the deployment's defaults"
    text = f"search {limits.search}/min  write {limits.write}/min  ({origin})"
    return payload, text


def cmd_limits_show(args: argparse.Namespace, console: Console) -> int:
    svc = _service(args)
    payload, text = _limits_payload(svc, _workspace_id(svc, args))
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
    svc = _service(args)
    workspace_id = _workspace_id(svc, args)
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
            raise _explained(validation_error(exc)) from None
        tenancy.set_limits(svc.ports, workspace_id, limits)
    payload, text = _limits_payload(svc, workspace_id)
    console.result(payload, text)
    return EXIT_OK


def cmd_export(args: argparse.Namespace, console: Console) -> int:
    from mnemo.service import transfer

    svc = _service(args)
    project = _project(svc, args)
    count = 0
    with _open_output(args.output) as out:
        for record in transfer.export_project(svc.ports, project, include_expired=args.include_expired):
            out.write(record.model_dump_json() + "\n")
            count += 1
    summary = {"exported": count, "project": {"id": project.id, "slug": project.slug}}
    if console.as_json:
        console.err.write(json.dumps(summary) + "\n")
    else:
        console.note(f"Exported {count} memories of project {project.slug!r} ({project.id}).")
    return EXIT_OK


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    from mnemo.service import transfer

    svc = _service(args)
    project = _project(svc, args)
    with _open_input(args.input) as raw, tempfile.SpooledTemporaryFile(max_size=16 << 20, mode="w+b") as spool:
        lines = 0
        for number, line in enumerate(raw, 1):
            if line.strip():
                _parse_line(line, number)  # refuse a bad file before anything is written
                spool.write(line.encode("utf-8"))
                lines += 1

        def records() -> Iterator[Any]:
            spool.seek(0)
            for number, line in enumerate(spool, 1):
                yield _parse_line(line.decode("utf-8"), number)

        report = transfer.import_records(
            svc.ports, project, records, force_workspace=args.force_workspace, on_existing=args.on_existing
        )
    payload = {
        "project": {"id": project.id, "slug": project.slug},
        "imported": len(report.imported),
        "skipped": report.skipped,
    }
    text = f"Imported {len(report.imported)} memories into project {project.slug!r} ({project.id})"
    text += f"; skipped {len(report.skipped)} that already existed." if report.skipped else "."
    console.result(payload, text)
    return EXIT_OK


def _parse_line(line: str, number: int) -> Any:
    from pydantic import ValidationError

    from mnemo.errors import InvalidRequest
    from mnemo.models.admin import ExportedMemory

    try:
        return ExportedMemory.model_validate_json(line).record()
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise InvalidRequest(f"input line {number}: {where}: {first['msg']}; nothing was imported") from None


@contextlib.contextmanager
def _open_output(path: str | None) -> Iterator[IO[str]]:
    if path in (None, "-"):
        yield sys.stdout
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8") as fh:  # type: ignore[arg-type]
        yield fh


@contextlib.contextmanager
def _open_input(path: str | None) -> Iterator[IO[str]]:
    if path in (None, "-"):
        yield sys.stdin
        return
    with open(path, encoding="utf-8") as fh:  # type: ignore[arg-type]
        yield fh


def _explained(error: Any) -> Any:
    """A validation error with its first detail in the message (the CLI shows no details)."""
    from mnemo.errors import InvalidRequest

    details = error.details or []
    if details:
        first = details[0]
        where = ".".join(str(p) for p in first["loc"]) or "value"
        return InvalidRequest(f"{where}: {first['msg']}")
    return error


def _run_admin(func: Callable[[argparse.Namespace, Console], int]) -> Callable[[argparse.Namespace], int]:
    """Runs one administration command; every failure becomes a message and an exit code."""

    def run(args: argparse.Namespace) -> int:
        from mnemo.errors import MnemoError, Unavailable

        console = Console(args.json)
        try:
            return func(args, console)
        except UsageError as exc:
            console.error(str(exc), "usage")
            return EXIT_USAGE
        except Unavailable as exc:  # the operator may see the cause; API callers never do
            console.error(f"{exc.message} ({exc.cause})" if exc.cause else exc.message, exc.code)
            return EXIT_UNAVAILABLE
        except MnemoError as exc:
            console.error(exc.message, exc.code)
            return EXIT_ERROR
        except OSError as exc:  # an input or output file
            console.error(f"{exc.filename or 'file'}: {exc.strerror or exc}", "io_error")
            return EXIT_ERROR
        except Exception as exc:  # noqa: BLE001 - the operator's own tool: say what broke, no traceback
            console.error(f"internal error: {type(exc).__name__}: {exc}", "internal")
            return EXIT_ERROR

    return run


# ---- the parser -----------------------------------------------------------------------------


def _common(*, suppress: bool) -> argparse.ArgumentParser:
    """--backend, --data-dir and --json, accepted before the command and after it."""
    default: Any = argparse.SUPPRESS if suppress else None
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--backend", choices=["sqlite", "aws"], default=default, help="default: $MNEMO_BACKEND or sqlite"
    )
    common.add_argument(
        "--data-dir", default=default, help="embedded backend folder (default: $MNEMO_DATA_DIR or ./.mnemo)"
    )
    common.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="print results (and errors, on stderr) as JSON",
    )
    return common


def _in_workspace() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "-w", "--workspace", help="workspace id (default: $MNEMO_WORKSPACE, or the store's only workspace)"
    )
    return parent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mnemo",
        description="Mnemo, memory for AI agents: the local server and administration.",
        epilog="Exit codes: 0 done, 1 refused or failed, 2 usage error, 3 backend unavailable.",
        parents=[_common(suppress=False)],
    )
    common = _common(suppress=True)
    scoped = [common, _in_workspace()]
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the local HTTP server (REST and MCP)", parents=[common])
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, help=f"default: $MNEMO_PORT or {DEFAULT_PORT}")
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    serve.set_defaults(func=cmd_serve)

    cleanup = sub.add_parser(
        "cleanup", help="remove expired memories, purge tombstones, repair index drift", parents=[common]
    )
    cleanup.add_argument("--max-items", type=int, help="items one run may examine (default: $MNEMO_CLEANUP_MAX_ITEMS)")
    cleanup.add_argument("--until-done", action="store_true", help="repeat bounded runs until no work remains")
    cleanup.set_defaults(func=cmd_cleanup)

    def group(name: str, help_text: str) -> Any:
        parser_ = sub.add_parser(name, help=help_text)
        return parser_.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(actions: Any, name: str, func: Any, help_text: str, parents: list[Any]) -> argparse.ArgumentParser:
        parser_ = actions.add_parser(name, help=help_text, description=help_text, parents=parents)
        parser_.set_defaults(func=_run_admin(func))
        return parser_

    workspace = group("workspace", "create and list workspaces (tenants)")
    p = action(workspace, "create", cmd_workspace_create, "create a workspace and its default project", [common])
    p.add_argument("name")
    p.add_argument("--project-slug", default="default", help="slug of its default project (default: default)")
    p.add_argument("--admin-key", action="store_true", help="also create an admin key and print it once")
    p.add_argument("--admin-key-label", default="admin", help="label of that key (default: admin)")
    action(workspace, "list", cmd_workspace_list, "list every workspace with its limits", [common])

    project = group("project", "create and list a workspace's projects")
    p = action(project, "create", cmd_project_create, "create a project", scoped)
    p.add_argument("slug", help="unique in the workspace: a-z, 0-9 and '-'")
    p.add_argument("--name", help="display name (default: the slug)")
    action(project, "list", cmd_project_list, "list the workspace's projects", scoped)

    key = group("key", "create, list and revoke API keys")
    p = action(key, "create", cmd_key_create, "create an API key and print it once", scoped)
    p.add_argument("--label", required=True, help="who uses it; the default source of its memories")
    p.add_argument(
        "--scope",
        action="append",
        required=True,
        help="memory:read, memory:write, memory:delete or admin; repeat or separate with commas",
    )
    p.add_argument("--project", help="the key's default project (slug or id)")
    p.add_argument("--team", action="append", help="a team the key belongs to; repeat or separate with commas")
    action(key, "list", cmd_key_list, "list the workspace's keys (never their secrets)", scoped)
    p = action(key, "revoke", cmd_key_revoke, "revoke a key: refused from its next call", scoped)
    p.add_argument("key_id", help="key_… as shown by `mnemo key list`")

    limits = group("limits", "show or change a workspace's rate limits")
    action(limits, "show", cmd_limits_show, "the workspace's calls a minute per class", scoped)
    p = action(limits, "set", cmd_limits_set, "give the workspace its own calls a minute", scoped)
    p.add_argument("--search", type=int, help="read calls a minute (default figure: 120)")
    p.add_argument("--write", type=int, help="write calls a minute (default figure: 60)")
    p.add_argument("--default", action="store_true", help="back to the deployment's defaults")

    p = sub.add_parser(
        "export",
        help="write a project's memories as JSON lines",
        description="Write every memory of a project, one JSON record a line, to stdout or --output.",
        parents=scoped,
    )
    p.add_argument("--project", help="slug or id (default: the workspace's default project)")
    p.add_argument("-o", "--output", help="a file instead of stdout")
    p.add_argument("--include-expired", action="store_true", help="also memories past their expires_at")
    p.set_defaults(func=_run_admin(cmd_export))

    p = sub.add_parser("import", help="read memories exported by `mnemo export` into a project", parents=scoped)
    p.description = (
        "Read JSON lines from stdin or --input into a project, keeping ids, versions and timestamps. "
        "The whole input is checked before anything is written."
    )
    p.add_argument("--project", help="slug or id (default: the workspace's default project)")
    p.add_argument("-i", "--input", help="a file instead of stdin")
    p.add_argument(
        "--force-workspace",
        action="store_true",
        help="allow records exported from another workspace (they are re-homed in this one)",
    )
    p.add_argument(
        "--on-existing",
        choices=["fail", "skip"],
        default="fail",
        help="a memory id already in the project: fail before writing anything (default), or skip it",
    )
    p.set_defaults(func=_run_admin(cmd_import))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
