"""Where a command acts: the settings its flags set, the service over the chosen backend, the
workspace and project it names."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.models.records import Project
    from mnemo.service.pipeline import Service

from mnemo.local.cli.output import UsageError, command_prefix, missing_aws_extra, settings_error


def local_environment(backend: str | None, data_dir: str | None) -> None:
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
    resolve_embedder()


def resolve_embedder() -> None:
    """``MNEMO_EMBEDDER=auto`` (the default) made concrete once, in this process's environment, so a
    server's workers and stream follower inherit the same embedder; a fallback to ``static`` is one
    line on stderr (never stdout: ``mnemo mcp`` speaks the protocol there)."""
    from mnemo import runtime

    fallback = runtime.resolve_embedder_env(os.environ)
    if fallback:
        print(fallback, file=sys.stderr, flush=True)


def service(args: argparse.Namespace) -> Service:
    """The service over the chosen backend. Only ``serve`` (and ``mcp``) create a data folder: for
    every other command a folder that is not there is a mistyped path, refused before it exists."""
    local_environment(args.backend, args.data_dir)
    from pydantic import ValidationError

    from mnemo import runtime
    from mnemo.errors import NotFound

    try:
        cfg = runtime.settings()
    except ValidationError as exc:
        raise UsageError(settings_error(exc)) from None
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


def project_of(svc: Service, args: argparse.Namespace) -> Project:
    from mnemo.service import tenancy

    return tenancy.project(svc.ports, workspace_of(svc, args), args.project)
