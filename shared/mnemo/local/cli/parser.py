"""The ``mnemo`` argument parser: every command and its options."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

from mnemo.hook.events import EVENTS as HOOK_EVENTS
from mnemo.importers import SOURCES
from mnemo.local.cli.admin import (
    cmd_key_create,
    cmd_key_list,
    cmd_key_revoke,
    cmd_limits_set,
    cmd_limits_show,
    cmd_principal_add,
    cmd_principal_list,
    cmd_principal_remove,
    cmd_privacy_set,
    cmd_privacy_show,
    cmd_project_create,
    cmd_project_list,
    cmd_workspace_create,
    cmd_workspace_list,
)
from mnemo.local.cli.hook import main as hook_main
from mnemo.local.cli.mcp import cmd_mcp
from mnemo.local.cli.moving import cmd_import_from
from mnemo.local.cli.output import run_admin
from mnemo.local.cli.server import cmd_cleanup, cmd_serve
from mnemo.local.cli.transfer import cmd_export, cmd_import


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


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _in_workspace() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "-w", "--workspace", help="workspace id (default: $MNEMO_WORKSPACE, or the store's only workspace)"
    )
    return parent


def cmd_import_any(args: argparse.Namespace, console: Any) -> int:
    """``mnemo import``: Mnemo's own export, or another tool's store with --from."""
    if args.source is not None:
        return cmd_import_from(args, console)
    if args.path is not None or args.map or args.dry_run:
        from mnemo.local.cli.output import UsageError

        raise UsageError("PATH, --map and --dry-run go with --from SOURCE (Mnemo's own export: --input FILE)")
    return cmd_import(args, console)


def build_parser() -> argparse.ArgumentParser:
    from mnemo.config import Settings  # here: pydantic only once a command is parsed

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
    serve.add_argument("--port", type=int, help=f"default: $MNEMO_PORT or {Settings.model_fields['port'].default}")
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request and its metrics (stderr)")
    serve.add_argument(
        "--workers",
        type=_positive_int,
        default=8,
        help="handler instances (processes) at most, as Lambda scales out (default: 8)",
    )
    serve.add_argument(
        "--timeout",
        type=_positive_float,
        default=10.0,
        help="seconds a request may run before its instance is stopped (default: 10, the functions' Timeout)",
    )
    serve.add_argument("--metrics", metavar="FILE", help="append each request's metrics (CloudWatch EMF lines) to FILE")
    serve.set_defaults(func=cmd_serve)

    mcp = sub.add_parser(
        "mcp",
        help="the tools over MCP's stdio transport, for hosts that start a server (Claude Desktop, Claude Code)",
        description="Serve every tool over MCP on stdin/stdout, on the embedded store, as the local user (no key). "
        "On an empty store it creates the default workspace and project first. Logs go to stderr.",
        parents=scoped,
    )
    mcp.add_argument("--project", help="slug or id (default: $MNEMO_PROJECT, else the workspace's default project)")
    mcp.set_defaults(func=run_admin(cmd_mcp))

    hook = sub.add_parser(
        "hook",
        help="answer one of Claude Code's hooks from a Mnemo server (the event's JSON on stdin)",
        description="Read a Claude Code hook's JSON on stdin and answer on stdout: SessionStart injects the "
        "project's memories, UserPromptSubmit the strong matches of the prompt, PreCompact and Stop ask once per "
        "session to save what was decided. Talks to $MNEMO_URL (default http://127.0.0.1:8787) with $MNEMO_KEY; "
        "fails open (always exit 0). See docs/agents.md.",
    )
    hook.add_argument("event", choices=list(HOOK_EVENTS))
    hook.set_defaults(func=lambda args: hook_main([args.event]))

    cleanup = sub.add_parser(
        "cleanup", help="remove expired memories, purge tombstones, repair index drift", parents=[common]
    )
    cleanup.add_argument("--max-items", type=int, help="items one run may examine (default: $MNEMO_CLEANUP_MAX_ITEMS)")
    cleanup.add_argument("--until-done", action="store_true", help="repeat bounded runs until no work remains")
    cleanup.set_defaults(func=run_admin(cmd_cleanup))

    def group(name: str, help_text: str) -> Any:
        parser_ = sub.add_parser(name, help=help_text)
        return parser_.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(actions: Any, name: str, func: Any, help_text: str, parents: list[Any]) -> argparse.ArgumentParser:
        parser_ = actions.add_parser(name, help=help_text, description=help_text, parents=parents)
        parser_.set_defaults(func=run_admin(func))
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

    principal = group("principal", "bind OAuth principals (token subjects, clients, groups) to a workspace")
    p = action(
        principal, "add", cmd_principal_add, "let an OAuth principal's access tokens act in the workspace", scoped
    )
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--subject", help="the tokens' `sub` claim (a user or a service account)")
    who.add_argument("--client", help="the tokens' `client_id` (else `azp`): every token issued to that client")
    who.add_argument("--group", help="a value of a group claim (MNEMO_OAUTH_GROUP_CLAIMS)")
    p.add_argument("--issuer", help="the authorization server (default: the first of MNEMO_OAUTH_ISSUERS)")
    p.add_argument("--label", help="the default source of its memories (default: KIND:VALUE)")
    p.add_argument(
        "--scope",
        action="append",
        required=True,
        help="the most its tokens may do: memory:read, memory:write, memory:delete or admin; repeat or use commas",
    )
    p.add_argument("--project", help="its default project (slug or id)")
    p.add_argument("--team", action="append", help="a team it belongs to; repeat or separate with commas")
    action(principal, "list", cmd_principal_list, "list the workspace's OAuth principals", scoped)
    p = action(principal, "remove", cmd_principal_remove, "unbind a principal: its tokens get 403 from now", scoped)
    p.add_argument("principal_id", help="prn_… as shown by `mnemo principal list`")

    limits = group("limits", "show or change a workspace's rate limits")
    action(limits, "show", cmd_limits_show, "the workspace's calls a minute per class", scoped)
    p = action(limits, "set", cmd_limits_set, "give the workspace its own calls a minute", scoped)
    p.add_argument("--search", type=int, help="read calls a minute (default figure: 120)")
    p.add_argument("--write", type=int, help="write calls a minute (default figure: 60)")
    p.add_argument("--default", action="store_true", help="back to the deployment's defaults")

    privacy = group("privacy", "show or change a workspace's secret check")
    action(privacy, "show", cmd_privacy_show, "whether writes holding a secret are refused", scoped)
    p = action(privacy, "set", cmd_privacy_set, "refuse writes holding a secret (on, the default) or not", scoped)
    p.add_argument(
        "--secret-check",
        dest="check",
        choices=["on", "off"],
        required=True,
        help="on: a write holding a secret is refused (400 secret_detected); off: stored as given",
    )

    p = sub.add_parser(
        "export",
        help="write a project's memories as JSON lines",
        description="Write every memory of a project, one JSON record a line, to stdout or --output.",
        parents=scoped,
    )
    p.add_argument("--project", help="slug or id (default: the workspace's default project)")
    p.add_argument("-o", "--output", help="a file instead of stdout")
    p.add_argument(
        "--format",
        choices=["jsonl", "markdown"],
        default="jsonl",
        help="jsonl: lossless JSON lines for `mnemo import` (default); markdown: a folder DIR of notes, one a "
        "memory, that `mnemo import --from markdown` (or basic-memory) reads",
    )
    p.add_argument("dir", nargs="?", metavar="DIR", help="with --format markdown: the folder to write")
    p.add_argument("--include-expired", action="store_true", help="also memories past their expires_at")
    p.set_defaults(func=run_admin(cmd_export))

    p = sub.add_parser(
        "import",
        help="read memories exported by `mnemo export`, or kept by another tool (--from), into a project",
        parents=scoped,
    )
    p.description = (
        "Read JSON lines from stdin or --input into a project, keeping ids, versions and timestamps. "
        "The whole input is checked before anything is written. With --from SOURCE PATH, read another "
        "tool's store instead: one memory per unit of the source, verbatim, under memory_add's rules "
        "(limits, secret check, <private> stripping, deduplication: a second run adds nothing); a line, "
        "note or row that cannot be read is reported by its position and skipped (docs/operations.md, "
        "'Moving to Mnemo')."
    )
    p.add_argument("--project", help="slug or id (default: the workspace's default project)")
    p.add_argument("-i", "--input", help="a file instead of stdin")
    p.add_argument("--from", dest="source", choices=list(SOURCES), help="the tool whose store PATH is")
    p.add_argument("path", nargs="?", metavar="PATH", help="with --from: the store, file or folder to read")
    p.add_argument(
        "--map",
        action="append",
        metavar="FIELD=NAME",
        help="jsonl and csv: the record's field (or column) of a memory field: content, kind, tags, path, "
        "created_at, updated_at (each defaults to its own name); repeat or separate with commas",
    )
    p.add_argument("--dry-run", action="store_true", help="with --from: print what would be added, skipped, refused")
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
    p.set_defaults(func=run_admin(cmd_import_any))
    return parser
