"""Where a command acts: its settings (the environment's, its flags first), the service over the
chosen backend, the workspace and project it names."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.config import Settings
    from mnemo.models.records import Project
    from mnemo.service.pipeline import Service

from mnemo.local.cli.output import UsageError, command_prefix, missing_aws_extra, settings_error


def configure(args: argparse.Namespace) -> Settings:
    """The command's settings: the environment's, with its flags' values first, handed to the
    runtime (``runtime.use``) -- nothing is written to ``os.environ``. Each ``MNEMO_*`` variable
    that names no setting is one warning line on stderr."""
    from pydantic import ValidationError

    from mnemo import runtime
    from mnemo.config import Settings, unknown_variables

    flags = {name: getattr(args, name, None) for name in ("backend", "data_dir")}
    try:
        cfg = Settings(**{name: value for name, value in flags.items() if value})
    except ValidationError as exc:
        raise UsageError(settings_error(exc)) from None
    for line in unknown_variables():
        print(line, file=sys.stderr, flush=True)
    # ``MNEMO_EMBEDDER=auto`` (the default) made concrete once, so a server's workers and stream
    # follower, handed these settings, run the same embedder; a fallback to ``static`` is one line
    # on stderr (never stdout: ``mnemo mcp`` speaks the protocol there)
    cfg, fallback = runtime.resolve_embedder(cfg)
    if fallback:
        print(fallback, file=sys.stderr, flush=True)
    runtime.use(None, cfg)
    return cfg


def service(args: argparse.Namespace) -> Service:
    """The service over the chosen backend. Only ``serve`` (and ``mcp``) create a data folder: for
    every other command a folder that is not there is a mistyped path, refused before it exists."""
    cfg = configure(args)
    from mnemo import runtime
    from mnemo.errors import NotFound

    missing = missing_aws_extra() if cfg.backend == "aws" else None
    if missing is not None:
        raise UsageError(missing)
    if cfg.backend == "sqlite" and not cfg.data_dir.exists():  # a file there: the store cannot open (exit 3)
        raise NotFound(
            f"the data folder {cfg.data_dir} does not exist: check --data-dir (or MNEMO_DATA_DIR); "
            f"`{command_prefix(args)} serve` creates a new store there"
        )
    return runtime.service()


def workspace_of(svc: Service, args: argparse.Namespace) -> str:
    """--workspace, else $MNEMO_WORKSPACE, else the store's only workspace."""
    from mnemo import runtime

    chosen = args.workspace or runtime.settings().workspace
    if chosen:
        return str(chosen)
    workspaces = svc.ports.tenants.list_workspaces()
    if len(workspaces) == 1:
        return workspaces[0].id
    if not workspaces:
        from mnemo.errors import NotFound

        raise NotFound("the store has no workspace yet: run `mnemo workspace create NAME` (or `mnemo serve`)")
    raise UsageError(f"the store has {len(workspaces)} workspaces: pass --workspace (see `mnemo workspace list`)")


def project_of(svc: Service, args: argparse.Namespace) -> Project:
    from mnemo.service import tenancy

    return tenancy.project(svc.ports, workspace_of(svc, args), args.project)
