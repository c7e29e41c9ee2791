"""The timers of ``bench.callsplit``, installed in the server process it measures (``mnemo mcp``, or
each handler instance of ``mnemo serve``): each wraps one function and adds its own time (wall and
the thread's CPU time, what wrapped callees took excluded) to its stage, for the call being served.

A call's record starts with the first timed function of a message (stdio) or with the handler
instance's ``dispatch`` (HTTP), and is written, one JSON line, when the next one starts and at
exit. Nothing here changes what the code does: a wrapper calls the function and returns its
result. A target that no longer exists is skipped (and listed in the records' ``missing``)."""

from __future__ import annotations

import atexit
import functools
import importlib
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

try:
    from mnemo.local.gateway import LocalGateway
except ImportError:  # a built function's layer: no local server there
    LocalGateway = object  # type: ignore[assignment,misc]

OUT_ENV = "MNEMO_CALLSPLIT_OUT"

#: (module, attribute path, stage): functions and methods, by where they are looked up at call time
TARGETS: list[tuple[str, str, str]] = [
    ("mnemo.api.mcp.endpoint", "McpEndpoint.handle", "jsonrpc"),
    ("mnemo.api.mcp.endpoint", "McpEndpoint.handle_message", "jsonrpc"),
    ("mnemo.api.mcp.stdio", "parse_json", "jsonrpc"),
    ("mnemo.api.mcp.endpoint", "parse_json", "jsonrpc"),
    ("mnemo.api.mcp.stdio", "encode_line", "serialisation"),
    ("mnemo.api.mcp.endpoint", "json_reply", "serialisation"),
    ("mnemo.api.mcp.jsonrpc", "json_reply", "serialisation"),
    ("pydantic", "BaseModel.model_dump", "serialisation"),
    ("pydantic", "BaseModel.model_dump_json", "serialisation"),
    ("mnemo.service.pipeline", "Service.authenticate", "auth"),
    ("mnemo.service.pipeline", "Service.resolve_project", "tenancy"),
    ("mnemo.backends.sqlite.tenants", "SqliteTenantStore.get_workspace", "tenancy"),
    ("mnemo.backends.sqlite.tenants", "SqliteTenantStore.get_project", "tenancy"),
    ("mnemo.service.pipeline", "Service.admit", "rate_limit"),
    ("mnemo.service.pipeline", "validate", "validation"),
    ("mnemo.text", "query_terms", "query"),
    ("mnemo.timewords", "read", "query"),
    ("mnemo.timewords", "zone", "query"),
    ("mnemo.embedding.transformer", "TransformerEmbedder.embed", "embedding"),
    ("mnemo.embedding.transformer", "TransformerEmbedder.embed_queries", "embedding"),
    ("mnemo.embedding.static", "StaticEmbedder.embed", "embedding"),
    # a query's vector made on the query thread (``vectors.embed_query_aside``): the serving thread's
    # wait for it is its wall time; the thread's own CPU is added by ``_carrying`` (below)
    ("mnemo.service.vectors", "PendingVector.result", "embedding"),
    ("mnemo.backends.sqlite.index", "SqliteSearchIndex.search", "index"),
    ("mnemo.backends.sqlite.index", "SqliteSearchIndex.similar", "index"),
    ("mnemo.backends.sqlite.index", "SqliteSearchIndex.upsert", "index"),
    ("mnemo.backends.sqlite.index", "SqliteSearchIndex._hits", "records"),
    ("mnemo.backends.sqlite.vectors", "_take", "records"),
    ("mnemo.backends.sqlite.store", "SqliteMemoryStore.create", "records"),
    ("mnemo.backends.sqlite.store", "SqliteMemoryStore.get", "records"),
    ("mnemo.backends.sqlite.store", "SqliteMemoryStore.recent", "records"),
    ("mnemo.backends.sqlite.store", "SqliteMemoryStore.neighbours", "records"),
    ("mnemo.backends.sqlite.store", "SqliteMemoryStore.replace", "records"),
    ("mnemo.service.pipeline", "Service.invoke", "service"),
    # the AWS backend (the built Lambda function: bench.lambda_calls --split)
    ("mnemo.backends.aws.tenants", "DynamoTenantStore.get_workspace", "tenancy"),
    ("mnemo.backends.aws.tenants", "DynamoTenantStore.get_project", "tenancy"),
    ("mnemo.backends.aws.limiter", "DynamoRateLimiter.acquire", "rate_limit"),
    ("mnemo.backends.aws.index", "OpenSearchIndex.search", "index"),
    ("mnemo.backends.aws.index", "OpenSearchIndex.similar", "index"),
    ("mnemo.backends.aws.store", "DynamoMemoryStore.get", "records"),
    ("mnemo.backends.aws.store", "DynamoMemoryStore.recent", "records"),
    ("mnemo.backends.aws.store", "DynamoMemoryStore.create", "records"),
]


class _State(threading.local):
    """Per thread (``mnemo serve``'s front end serves each connection on a thread of its own); the
    sink is shared."""

    sink: Any = None
    #: whether any timed call at the top starts a record when none is open (stdio), or only those
    #: made with ``starts`` (a handler instance: what it does between invocations is not a call's)
    implicit = True
    missing: list[str] = []  # one list for every thread

    def __init__(self) -> None:
        self.stack: list[list[float]] = []
        self.record: dict[str, Any] | None = None
        #: a thread working for a call served on another (``_carrying``): its timers add CPU time
        #: only, the serving thread's wall time being the call's
        self.aside = False


STATE = _State()


def _new_record() -> dict[str, Any]:
    _flush()
    STATE.record = {"t": time.time(), "tool": None, "args": None, "wall": {}, "cpu": {}}
    return STATE.record


_sink_lock = threading.Lock()


def _flush() -> None:
    record = STATE.record
    if record is not None and _State.sink is not None:
        with _sink_lock:
            _State.sink.write(json.dumps(record) + "\n")
            _State.sink.flush()
    STATE.record = None


def timed(fn: Callable[..., Any], stage: str, *, starts: bool = False, ends: bool = False) -> Callable[..., Any]:
    """``fn`` with its own time added to ``stage``; ``starts``: a call at the top starts a record
    (else the first timed call does); ``ends``: its return at the top writes the record."""
    perf, cpu_clock = time.perf_counter, time.thread_time
    state = STATE

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        stack = state.stack
        if not stack and (starts or (state.record is None and _State.implicit)):
            _new_record()
        t0, c0 = perf(), cpu_clock()
        stack.append([0.0, 0.0])
        try:
            return fn(*args, **kwargs)
        finally:
            wall, cpu = perf() - t0, cpu_clock() - c0
            inner_wall, inner_cpu = stack.pop()
            record = state.record
            if record is not None:
                if not state.aside:
                    record["wall"][stage] = record["wall"].get(stage, 0.0) + wall - inner_wall
                record["cpu"][stage] = record["cpu"].get(stage, 0.0) + cpu - inner_cpu
            if stack:
                stack[-1][0] += wall
                stack[-1][1] += cpu
            elif ends:
                _flush()

    return wrapper


def _tagging_invoke(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``Service.invoke`` names the call's tool in its record (before its timer starts)."""

    @functools.wraps(fn)
    def wrapper(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        if STATE.record is not None and STATE.record["tool"] is None:
            STATE.record["tool"] = name
        return fn(self, name, *args, **kwargs)

    return wrapper


def _carrying(submit: Callable[..., Any]) -> Callable[..., Any]:
    """``vectors._submit`` whose work, on the query thread, adds its timers' CPU time to the record
    of the call that submitted it (``_State.aside``: not its wall time, which overlaps the call's)."""

    @functools.wraps(submit)
    def wrapper(fn: Callable[..., Any], *args: Any) -> Any:
        record = STATE.record

        def carried(*inner: Any) -> Any:
            STATE.record, STATE.aside, STATE.stack = record, True, []
            try:
                return fn(*inner)
            finally:
                STATE.record, STATE.aside = None, False

        return submit(carried, *args)

    return wrapper


def _wrap_operations() -> None:
    """Each registered operation's ``run``: the tool's own code."""
    from mnemo.service.catalog import TOOLS

    for op in TOOLS.values():
        if not getattr(op.run, "__callsplit__", False):
            run = timed(op.run, "tool")
            run.__callsplit__ = True  # type: ignore[attr-defined]
            object.__setattr__(op, "run", run)


def _wrap_logging() -> None:
    from mnemo.observability import logger, metrics

    for obj, name in ((logger, "info"), (logger, "debug"), (metrics, "add_metric"), (metrics, "clear_metrics")):
        setattr(obj, name, timed(getattr(obj, name), "logging"))


def install(sink_path: str | None, *, stdio: bool) -> None:
    """Every timer; records go to ``sink_path`` (one JSON line per message or invocation)."""
    _State.implicit = stdio
    if _State.sink is None and sink_path:
        _State.sink = open(sink_path, "a", encoding="utf-8")  # noqa: SIM115 - closed at exit
        atexit.register(_flush)
    for module_name, path, stage in TARGETS:
        try:
            owner: Any = importlib.import_module(module_name)
            *parents, attr = path.split(".")
            for parent in parents:
                owner = getattr(owner, parent)
            fn = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
        except Exception:  # noqa: BLE001 - not there (renamed, or this backend's package not installed)
            STATE.missing.append(f"{module_name}:{path}")
            continue
        wrapped = timed(fn, stage, starts=stdio and attr == "parse_json")
        if path == "Service.invoke":
            wrapped = _tagging_invoke(wrapped)
        setattr(owner, attr, wrapped)
    try:
        from mnemo.service import vectors
    except ImportError:
        pass
    else:
        if hasattr(vectors, "_submit"):
            vectors._submit = _carrying(vectors._submit)  # type: ignore[attr-defined]
    _wrap_operations()
    _wrap_logging()


class ProfiledGateway(LocalGateway):
    """A handler instance of ``mnemo serve`` with the timers on; each invocation is one record."""

    def warm(self) -> None:
        install(os.environ.get(OUT_ENV, "") + f".{os.getpid()}.jsonl", stdio=False)
        super().warm()
        self._dispatch = timed(super().dispatch, "handler", starts=True, ends=True)
        STATE.record = None  # the warm-up's calls are not counted

    def dispatch(self, *args: Any, **kwargs: Any) -> Any:
        return self._dispatch(*args, **kwargs)


def install_lambda(sink_path: str) -> None:
    """The timers in a built function's process (``lambda_harness.py``'s ``init``): each invocation
    of ``handler.lambda_handler`` is one record, its own time the ``handler`` stage."""
    import sys

    install(sink_path, stdio=False)
    handler = sys.modules["handler"]
    handler.lambda_handler = timed(handler.lambda_handler, "handler", starts=True, ends=True)
