"""``mnemo serve`` (the local HTTP server) and ``mnemo cleanup`` (the scheduled job, run here)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from mnemo.local.cli.context import local_environment

DEFAULT_PORT = 8787


def cmd_serve(args: argparse.Namespace) -> int:
    local_environment(args.backend, args.data_dir)
    from mnemo import runtime
    from mnemo.local.server import LocalServer, ServeOptions, console_logging, serve
    from mnemo.service import tenancy

    console_logging(args.verbose)
    ports = runtime.service().ports
    created = tenancy.bootstrap(ports, plain_key=os.environ.get("MNEMO_BOOTSTRAP_KEY") or None)
    port = args.port if args.port is not None else int(os.environ.get("MNEMO_PORT", DEFAULT_PORT))
    cfg = runtime.settings()
    where = cfg.sqlite_path if cfg.backend == "sqlite" else "DynamoDB + OpenSearch"
    options = ServeOptions(
        host=args.host,
        port=port,
        max_instances=args.workers,
        budget_s=args.timeout,
        metrics_to=args.metrics or ("-" if args.verbose else None),
    )

    def announce(server: LocalServer) -> None:
        print(f"Mnemo listening on {server.url} (backend: {cfg.backend}, data: {where})", flush=True)
        print(f"  REST {server.url}/v1/tools/<tool>   MCP {server.url}/mcp   Ctrl-C stops", flush=True)
        if created is not None:
            print("Created the default workspace and project. Admin API key (shown once):", flush=True)
            print(f"  {created.plain}", flush=True)
            print(f'  export MNEMO_KEY="{created.plain}"', flush=True)

    try:
        serve(options, announce)
    except OSError as exc:
        print(f"mnemo: error: cannot listen on {args.host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    finally:
        ports.close()
    return 0


def cmd_cleanup(args: argparse.Namespace) -> int:
    """The scheduled cleanup job, run here on either backend; prints each run's summary (JSON)."""
    local_environment(args.backend, args.data_dir)
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
