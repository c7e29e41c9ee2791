"""``mnemo serve``'s background jobs, each in a child process of its own beside the handler
instances: the memories table's stream fed to the indexer (the AWS backend,
:func:`mnemo.local.stream.follow`) and the scheduled cleanup job (:func:`cleanup_schedule`, every
``MNEMO_LOCAL_CLEANUP_INTERVAL_S``, as the stack's schedule runs it on AWS).

A child is spawned (no state of the server's is inherited), ignores Ctrl-C and SIGTERM (the server
stops it once it stops serving) and dies with the server even when the server is killed. It is
stopped through a pipe, not a ``multiprocessing.Event``: an Event's ``set()`` waits for every
process asleep in ``wait()`` to wake, so a child killed in ``wait()`` (SIGTERM to the process
group, as systemd's ``KillMode=control-group`` sends; or the OOM killer) left the server blocked
in ``close()`` forever. A pipe's writer never waits for its reader."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemo.config import Settings

log = logging.getLogger("mnemo.local")


class PipeStop:
    """A child's end of its stop signal: set once the server sends on, or closes, the pipe."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._set = False

    def is_set(self) -> bool:
        return self._set or self.wait(0)

    def wait(self, timeout: float) -> bool:
        if not self._set and self._conn.poll(timeout):
            self._set = True
        return self._set


def _run_child(job: Callable[..., None], conn: Any, args: tuple[Any, ...]) -> None:
    import signal

    from mnemo.local.workers import _end_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if not _end_with_parent():
        return  # the server died before this child was set to follow it
    job(PipeStop(conn), *args)


class Child:
    """``job(stop, *args)`` in a spawned child process, started and stopped by the server."""

    def __init__(self, job: Callable[..., None], *args: Any, name: str) -> None:
        import multiprocessing

        self._job, self._args, self._name = job, args, name
        self._context = multiprocessing.get_context("spawn")
        self._stop: Any = None
        self._process: Any = None

    def start(self) -> None:
        child_end, self._stop = self._context.Pipe(duplex=False)
        self._process = self._context.Process(
            target=_run_child, args=(self._job, child_end, self._args), name=self._name, daemon=True
        )
        self._process.start()
        child_end.close()

    def close(self) -> None:
        if self._process is None:
            return
        with contextlib.suppress(OSError):  # the child is gone already: nothing to tell
            self._stop.send(None)
        self._stop.close()
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(5)


def cleanup_schedule(stop: PipeStop, settings: Settings | None = None) -> None:
    """The cleanup job (:func:`mnemo.service.cleanup.run_cleanup`, as ``mnemo cleanup`` runs it)
    at start and then every ``local_cleanup_interval_s``; a run that leaves work (``more``: a
    store to re-embed for a new embedder, a backlog of expired memories) is followed by the next
    at once, so a store made under another embedder is re-embedded without anyone running
    ``mnemo cleanup``. It runs at a lower CPU priority than the handler instances. A failing run is
    logged and tried again at the next interval."""
    import os

    from mnemo import runtime
    from mnemo.service.cleanup import CleanupOptions, run_cleanup

    with contextlib.suppress(OSError):
        os.nice(10)  # re-embedding a store takes CPU: the handler instances' calls come first
    if settings is not None:
        runtime.use(None, settings)
    cfg = runtime.settings()
    svc = runtime.service()
    try:
        while not stop.is_set():
            try:
                summary = run_cleanup(svc.ports, CleanupOptions.from_settings(cfg), embedder=svc.embedder)
                again = summary.more and not summary.index_unavailable
            except Exception:
                log.exception("the scheduled cleanup run failed")
                again = False
            if not again:
                stop.wait(cfg.local_cleanup_interval_s)
    finally:
        svc.ports.close()
