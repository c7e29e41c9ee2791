"""``mnemo serve`` (the local HTTP server) and ``mnemo cleanup`` (the scheduled job, run here)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.ports import Ports

from mnemo.local.cli.context import configure, service
from mnemo.local.cli.output import EXIT_ERROR, EXIT_OK, EXIT_USAGE, Console, UsageError, command_prefix

__all__ = ["cmd_cleanup", "cmd_serve"]


def cmd_serve(args: argparse.Namespace) -> int:
    """Start in the order of ``mnemo.local.startup``: check, listen, open, bootstrap, print; any
    failure is one line and an exit code, never a traceback (``-v`` adds it for a bug)."""
    from mnemo.local import startup
    from mnemo.local.server import LocalServer, ServeOptions, console_logging, serve

    console = Console(args.json)
    console_logging(args.verbose)
    opened: list[Ports] = []
    try:
        try:
            cfg = configure(args)
        except UsageError as exc:
            raise startup.StartupError(str(exc), "usage", EXIT_USAGE) from None
        plan = startup.plan(cfg, args.host, args.port, command_prefix(args))
        options = ServeOptions(
            host=plan.host,
            port=plan.port,
            max_instances=args.workers,
            budget_s=args.timeout,
            metrics_to=args.metrics or ("-" if args.verbose else None),
            # the memories table's stream fed to the indexer, as Lambda's event source mapping does
            follow_stream=plan.cfg.backend == "aws",
            cleanup_every_s=plan.cfg.local_cleanup_interval_s,
            settings=plan.cfg,
        )

        def bound(server: LocalServer) -> None:
            """Bound, nothing else started: only now is anything created, and the key printed at once."""
            ports = startup.open_store(plan)
            opened.append(ports)
            first = startup.first_start(ports, plan)
            for line in startup.banner(server.url, plan, first):
                print(line, flush=True)
            for note in first.notes:
                print(note, file=sys.stderr, flush=True)

        try:
            serve(options, bound=bound)
        except OSError as exc:
            if opened:  # serving had begun: not a start-up failure
                raise
            raise startup.bind_error(plan.host, plan.port, exc) from None
        finally:
            for ports in opened:
                ports.close()
    except startup.StartupError as exc:
        console.error(exc.message, exc.code)
        return exc.exit_code
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # a bug: one line, the traceback only when asked for
        if args.verbose:
            logging.getLogger("mnemo.local").exception("mnemo serve failed")
        console.error(f"internal error: {type(exc).__name__}: {exc} (run with -v for the traceback)", "internal")
        return EXIT_ERROR
    return EXIT_OK


def cmd_cleanup(args: argparse.Namespace, console: Console) -> int:
    """The scheduled cleanup job, run here on either backend; prints each run's summary (JSON)."""
    svc = service(args)
    ports = svc.ports
    from mnemo import runtime
    from mnemo.service.cleanup import CleanupOptions, run_cleanup

    options = CleanupOptions.from_settings(runtime.settings(), max_items=args.max_items)
    try:
        while True:
            summary = run_cleanup(ports, options, embedder=svc.embedder)
            print(json.dumps(summary.as_dict()), flush=True)
            if not (args.until_done and summary.more) or summary.index_unavailable:
                return EXIT_ERROR if summary.index_unavailable else EXIT_OK
    finally:
        ports.close()
