"""The ``mnemo`` command line."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

DEFAULT_PORT = 8787


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
    from mnemo.service import admin

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    ports = runtime.service().ports
    created = admin.bootstrap(ports, plain_key=os.environ.get("MNEMO_BOOTSTRAP_KEY") or None)
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
    import json

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mnemo", description="Mnemo, memory for AI agents.")
    parser.add_argument("--backend", choices=["sqlite", "aws"], help="default: $MNEMO_BACKEND or sqlite")
    parser.add_argument("--data-dir", help="embedded backend folder (default: $MNEMO_DATA_DIR or ./.mnemo)")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the local HTTP server (REST and MCP)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, help=f"default: $MNEMO_PORT or {DEFAULT_PORT}")
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    serve.set_defaults(func=cmd_serve)

    cleanup = sub.add_parser("cleanup", help="remove expired memories, purge tombstones, repair index drift")
    cleanup.add_argument("--max-items", type=int, help="items one run may examine (default: $MNEMO_CLEANUP_MAX_ITEMS)")
    cleanup.add_argument("--until-done", action="store_true", help="repeat bounded runs until no work remains")
    cleanup.set_defaults(func=cmd_cleanup)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
