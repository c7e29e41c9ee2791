"""``mnemo serve``'s handler instances: worker processes, each serving one invocation at a time,
as a Lambda instance does.

Each worker runs one :class:`~mnemo.local.gateway.LocalGateway` (every HTTP function's handler,
imported once) over its own connection to the store. The pool keeps ``min_instances`` warm and one
spare: when a call takes the last idle instance it starts another, up to ``max_instances``, so
callers rarely wait for a cold start. Every invocation has the function's time budget: an
instance still busy when the budget runs out is killed, as Lambda ends a timed-out invocation,
and replaced; the request is answered 503. An invocation still running after a second runs at a
lower CPU priority, and its instance is replaced afterwards. One slow call therefore holds one
instance, never the others, and on a small machine it gives way to the quick ones.

Processes rather than threads because Powertools keeps per-invocation state on objects shared by
every function module (see ``LocalGateway``), and because two cores then run two invocations.
Workers are forked from a ``multiprocessing`` forkserver that imported the handlers once, so a new
instance imports nothing again and the server's own threads are never forked; it then loads its
embedder's model while it warms up, before it takes a request (``LocalGateway.warm``: the default
minilm's load is several times the static model's, bench/results/minilm_layer.json).

After each invocation a worker writes the metrics it recorded (one CloudWatch EMF line, as
Lambda would log them) to the pool's metrics sink, or drops them: nothing piles up in memory
and Powertools never prints its 100-value blobs on its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemo.config import Settings

from mnemo import coldstart
from mnemo.local.gateway import FUNCTION_TIMEOUT_S, Answer, spec_error
from mnemo.local.routes import HTTP_FUNCTIONS

log = logging.getLogger("mnemo.local")

#: how long a new instance may take to import, open the store and build the MCP catalog
START_TIMEOUT_S = 60.0
_READY = "ready"
#: the nice value of an instance whose invocation runs long
DEMOTED_NICE = 10
#: ``PR_SET_PDEATHSIG`` (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class PoolOptions:
    min_instances: int = 2
    max_instances: int = 8
    #: seconds one invocation may run (template.yaml's function Timeout)
    budget_s: float = FUNCTION_TIMEOUT_S
    #: where each invocation's metrics go: None drops them, "-" is stderr, anything else a file
    metrics_to: str | None = None
    #: seconds after which a running invocation loses CPU priority (None: never)
    demote_after_s: float | None = 1.0
    #: what each instance runs, as ``module:attribute`` (a class with LocalGateway's ``warm``,
    #: ``dispatch`` and ``close``); tests give instances a gateway of their own
    gateway: str = "mnemo.local.gateway:LocalGateway"
    #: the server's settings, handed to each instance (None: each reads the environment's)
    settings: Settings | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.min_instances <= self.max_instances:
            raise ValueError("instances: need 1 <= min <= max")
        if self.budget_s <= 0:
            raise ValueError("the time budget must be positive")


class _Instance:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        #: running at a lower CPU priority (a long invocation): given its priority back after the
        #: answer where this process may raise one (root, or RLIMIT_NICE), else replaced
        self.demoted = False
        self._priority = 0

    def demote(self) -> None:
        with contextlib.suppress(OSError):
            self._priority = os.getpriority(os.PRIO_PROCESS, self.pid)
            os.setpriority(os.PRIO_PROCESS, self.pid, DEMOTED_NICE)
            self.demoted = True

    def restore(self) -> bool:
        """The priority it had before :meth:`demote`, if this process may raise a priority again;
        False when it may not (an unprivileged process: the instance is then replaced). Replacing
        every demoted instance made a loaded machine churn: calls slowed past ``demote_after_s``
        by the load each cost a new instance's warm-up, which loaded it more (62 instances started
        for 60 calls through two servers on one moto, tests/hardening/test_concurrency.py)."""
        try:
            os.setpriority(os.PRIO_PROCESS, self.pid, self._priority)
        except OSError:
            return False
        self.demoted = False
        return True

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    def stop(self) -> None:
        """Ask an idle instance to exit; kill it if it does not."""
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.process.join(2)
        self.kill()

    def kill(self) -> None:
        if self.process.is_alive():
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        self.process.join(5)
        self.conn.close()


class WorkerPool:
    """Handler instances in worker processes; :meth:`dispatch` has :class:`LocalGateway`'s signature."""

    def __init__(self, options: PoolOptions | None = None) -> None:
        self.options = options or PoolOptions()
        self._context = multiprocessing.get_context("forkserver")
        # the forkserver imports these once; every instance is forked from it with them loaded
        self._context.set_forkserver_preload([*HTTP_FUNCTIONS.values(), __name__])
        self._cond = threading.Condition()
        self._idle: list[_Instance] = []
        self._all: set[_Instance] = set()
        self._running = 0  # started or starting, busy or idle
        self._failures = 0
        self._closed = False

    # -- life cycle --

    def start(self) -> None:
        """Start the warm instances (in parallel) and wait until each can serve."""
        with self._cond:
            self._running += self.options.min_instances
        starters = [threading.Thread(target=self._grow) for _ in range(self.options.min_instances)]
        for starter in starters:
            starter.start()
        for starter in starters:
            starter.join()
        with self._cond:
            if not self._idle:
                raise RuntimeError("no handler instance could start (see the errors above)")

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, busy = list(self._idle), self._all - set(self._idle)
            self._idle.clear()
            self._cond.notify_all()
        for instance in idle:
            instance.stop()
        for instance in busy:
            instance.kill()

    @property
    def instances(self) -> int:
        """Instances started or starting."""
        with self._cond:
            return self._running

    def pids(self) -> list[int]:
        with self._cond:
            return sorted(instance.pid for instance in self._all)

    # -- one request --

    def dispatch(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
        source_ip: str = "127.0.0.1",
    ) -> Answer:
        budget = self.options.budget_s
        instance = self._acquire(time.monotonic() + budget)
        if instance is None:
            return spec_error(
                503,
                "unavailable",
                f"every handler instance stayed busy for {budget:g} s; retry shortly",
                {"Retry-After": "1"},
            )
        try:
            instance.conn.send((method, target, headers, body, source_ip, budget))
            answer = self._wait(instance, budget)
        except (EOFError, OSError):
            self._discard(instance)
            log.error("%s %s: the handler instance (pid %d) died", method, target.split("?")[0], instance.pid)
            return spec_error(500, "internal", "internal error")
        if answer is None:
            self._discard(instance)
            log.warning(
                "%s %s ran past its %g s budget: its handler instance was stopped", method, target.split("?")[0], budget
            )
            return spec_error(
                503,
                "unavailable",
                f"the request did not finish within {budget:g} s and was stopped; retry shortly",
                {"Retry-After": "1"},
            )
        if instance.demoted and not instance.restore():
            self._discard(instance)  # a fresh instance at normal priority takes its place
        else:
            with self._cond:
                self._idle.append(instance)
                self._cond.notify()
        return answer

    def _wait(self, instance: _Instance, budget: float) -> Answer | None:
        """The instance's answer, or None when the budget ran out. An invocation still running
        after ``demote_after_s`` loses CPU priority (nice +10) for the rest of its run: on a
        machine with fewer cores than busy instances, quick calls then get the CPU first instead
        of sharing it evenly with the slow ones."""
        demote_after = self.options.demote_after_s
        if demote_after is not None and demote_after < budget:
            if instance.conn.poll(demote_after):
                return instance.conn.recv()  # type: ignore[no-any-return]
            instance.demote()
            budget -= demote_after
        return instance.conn.recv() if instance.conn.poll(budget) else None  # type: ignore[no-any-return]

    def _acquire(self, deadline: float) -> _Instance | None:
        with self._cond:
            failures = self._failures
            while not self._closed:
                if self._idle:
                    instance = self._idle.pop()  # the most recently used: the warmest
                    if not self._idle and self._running < self.options.max_instances:
                        # the last idle one is taken: warm a spare now, so the next caller finds
                        # one ready instead of waiting for a cold start
                        self._running += 1
                        threading.Thread(target=self._grow, daemon=True).start()
                    return instance
                if self._running < self.options.max_instances:
                    self._running += 1
                    threading.Thread(target=self._grow, daemon=True).start()
                elif self._failures > failures and self._running == 0:
                    return None  # instances cannot start: do not wait for the budget to pass
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
            return None

    def _grow(self) -> None:
        """Start one instance (already counted in ``_running``) and make it available."""
        try:
            instance = self._start_instance()
        except Exception as exc:  # noqa: BLE001 - reported, and counted so waiting requests stop waiting
            with self._cond:
                closing = self._closed
            # a spare still starting when the server stops is ended with it: no error to report
            (log.debug if closing else log.error)("a handler instance failed to start: %s", exc)
            with self._cond:
                self._running -= 1
                self._failures += 1
                self._cond.notify_all()
            return
        with self._cond:
            if self._closed:
                self._running -= 1
            else:
                self._all.add(instance)
                self._idle.append(instance)
                self._cond.notify()
                return
        instance.stop()

    def _discard(self, instance: _Instance) -> None:
        """An instance that timed out or died: kill it, and start a replacement when under the warm count."""
        instance.kill()
        with self._cond:
            self._all.discard(instance)
            self._running -= 1
            replace = not self._closed and self._running < self.options.min_instances
            if replace:
                self._running += 1
            self._cond.notify_all()
        if replace:
            threading.Thread(target=self._grow, daemon=True).start()

    def _start_instance(self) -> _Instance:
        parent_end, child_end = self._context.Pipe(duplex=True)
        process = self._context.Process(  # type: ignore[attr-defined]
            target=instance_main,
            args=(child_end, self.options.gateway, self.options.metrics_to, self.options.settings),
            name="mnemo-instance",
            daemon=True,
        )
        process.start()
        child_end.close()
        instance = _Instance(process, parent_end)
        try:
            ready = parent_end.poll(START_TIMEOUT_S) and parent_end.recv() == _READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            instance.kill()
            raise RuntimeError(f"the worker process exited with {process.exitcode} before it was ready")
        return instance


# -- inside a worker process --


def instance_main(
    conn: Connection, gateway_path: str, metrics_to: str | None, settings: Settings | None = None
) -> None:
    """A worker's life: warm up, then serve one invocation at a time until told to stop."""
    # Ctrl-C reaches the whole process group: the server stops its instances itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not _end_with_parent():
        return  # the forkserver (so the server) died before this instance was set to follow it
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    if settings is not None:
        from mnemo import runtime

        runtime.use(None, settings)
    module, _, attribute = gateway_path.partition(":")
    gateway = getattr(importlib.import_module(module), attribute)()
    gateway.warm()
    coldstart.freeze()  # what warming loaded stays out of the collector's walks (a p99 of recall)
    sink = _metrics_sink(metrics_to)
    try:
        conn.send(_READY)
    except OSError:  # the server went away while this instance warmed up
        gateway.close()
        return
    between = _Between()
    try:
        while True:
            # the server went away (killed, even with -9): EOF, or a reset when it left an answer
            # unread, or a broken pipe for the answer it will never read; the instance ends
            # quietly, as one Lambda never hears of again
            try:
                between.until_readable(conn)
                request = conn.recv()
            except (EOFError, OSError):
                return
            if request is None:
                return
            method, target, headers, body, source_ip, budget = request
            answer = gateway.dispatch(method, target, headers, body, source_ip, budget)
            _drain_metrics(sink)
            try:
                conn.send(answer)
            except OSError:
                return
            between.work()
    finally:
        between.close()
        gateway.close()


class _Between:
    """What this instance does between invocations (``service.between.Between``), on the thread that
    serves them: the vectors made after an answer (``service.vectors.EmbedAfter``) stored through
    the connection its invocations read with, so its next read finds no other connection's write of
    its own (on SQLite such a write drops the reading connection's page cache and memory map:
    docs/performance.md), woken through a pipe while it waits for the next invocation; and, while
    no invocation waits, the backend's work when due (SQLite: a checkpoint of its log)."""

    def __init__(self) -> None:
        from mnemo import runtime

        self.between = runtime.service().between
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self.between.hand_over(self._wake)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: a wake is pending already
            os.write(self._wake_w, b"\0")

    def until_readable(self, conn: Connection) -> None:
        """Wait for the next invocation, storing the vectors made meanwhile and, while none waits,
        doing the backend's work when due."""
        while not conn.poll():
            self.between.idle()
            if conn in multiprocessing.connection.wait([conn, self._wake_r]):
                return
            os.read(self._wake_r, 4096)
            self.between.write_ready()

    def work(self) -> None:
        self.between.write_ready()

    def close(self) -> None:
        self.between.hand_back()
        os.close(self._wake_r)
        os.close(self._wake_w)


def _end_with_parent() -> bool:
    """Die with the forkserver (which ends with the server), even when the server was killed;
    False when the parent is already gone (it died before the request took effect: the instance
    was handed to init and no signal will come)."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    return os.getppid() == parent


def _metrics_sink(metrics_to: str | None) -> IO[str] | None:
    if metrics_to is None:
        return None
    if metrics_to == "-":
        return sys.stderr
    return open(metrics_to, "a", encoding="utf-8")  # kept open for the worker's lifetime


def _drain_metrics(sink: IO[str] | None) -> None:
    """The invocation's metrics as one EMF line to ``sink`` (or nowhere); the metric set is then empty."""
    from mnemo.observability import metrics

    if not metrics.metric_set:
        return
    if sink is not None:
        sink.write(json.dumps(metrics.serialize_metric_set(), separators=(",", ":")) + "\n")
        sink.flush()
    metrics.clear_metrics()
