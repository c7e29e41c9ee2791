"""``mnemo mcp``: every tool over MCP's stdio transport, on the embedded store, for the local user.

An MCP host (Claude Desktop, Claude Code, …) starts it as a subprocess and speaks newline-delimited
JSON-RPC on its stdin and stdout. No key: the user who can start the process owns the store
already. Stdout carries protocol messages only; everything else this process prints (logs, the
first start's admin key) goes to stderr, which hosts keep as the server's log.

It is safe beside ``mnemo serve`` on the same folder: two processes on one SQLite file in WAL
mode, writes serialised by the database, rate limits shared through it.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import IO

from mnemo.local.cli.context import configure, workspace_of
from mnemo.local.cli.output import Console

#: the ``source`` of memories saved through ``mnemo mcp`` without one
LOCAL_LABEL = "mnemo-mcp"


def protocol_channel() -> IO[bytes]:
    """The process's stdout, kept for protocol messages alone; fd 1 and ``sys.stdout`` then point
    at stderr, so no print, log handler or library can write anything else there."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return channel


def cmd_mcp(args: argparse.Namespace, console: Console) -> int:
    channel = protocol_channel()
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    cfg = configure(args)
    from mnemo import coldstart, runtime
    from mnemo.api.routers.mcp import serve_stdio
    from mnemo.service import tenancy
    from mnemo.service.identity import local_caller

    svc = runtime.warm()  # the model loads before the host's first call, not during it
    created = tenancy.bootstrap(
        svc.ports, plain_key=cfg.bootstrap_key.get_secret_value() if cfg.bootstrap_key else None
    )
    if created is not None:
        console.note("mnemo mcp: created the default workspace and project. Admin API key for HTTP (shown once):")
        console.note(f"  {created.plain}")
    workspace_id = workspace_of(svc, args)
    project = tenancy.project(svc.ports, workspace_id, args.project or cfg.project)
    caller = local_caller(workspace_id, project.id, LOCAL_LABEL)
    coldstart.freeze()  # what starting loaded stays out of the collector's walks (a p99 of recall)
    try:
        serve_stdio(svc, caller, sys.stdin.buffer, channel, max_message_bytes=cfg.max_body_bytes)
    except (KeyboardInterrupt, BrokenPipeError):  # the host went away
        pass
    finally:
        runtime.finish()
        svc.ports.close()
    return 0
