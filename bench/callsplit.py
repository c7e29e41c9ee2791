"""Where one tool call's time goes, stage by stage, as agents call Mnemo: the official MCP Python SDK
(``mcp``, pinned in the ``dev`` extra) over stdio (spawning ``mnemo mcp``) and over Streamable HTTP
(``mnemo serve``), at ``size`` memories of the bench corpus (``bench.corpus``: English, Chinese and
mixed memories; the query mix), with the embedder ``MNEMO_EMBEDDER`` names (default here: minilm).

    python -m bench.callsplit [--size 10000] [--calls 200] [--label NAME] [--transports stdio,http]

The server runs with the real code and a few timers around it (``bench.callsplit_hooks``): each
timer wraps one function of a stage and counts its *own* time (wall and the thread's CPU time, a
wrapped callee's time taken out), so the stages of one call add up to the server's time for it:

==============  ==========================================================================
stage           what is timed
==============  ==========================================================================
client_schema   the SDK client's check of the result against the tool's outputSchema
transport       the client's round trip minus that and everything the server's timers saw: the
                SDK's own code, the pipe or the socket, the stdio loop's reads and writes
frontend        HTTP only: ``mnemo serve``'s own thread for the request (parsing it, answering)
handoff         HTTP only: from the front end handing the request to a handler instance until it
                has the answer, minus the instance's own time (the pipes, the process switches)
handler         HTTP only: the Lambda handler around the MCP endpoint (the API Gateway event,
                Powertools' resolver, Logger and Metrics decorators, the route's own code)
jsonrpc         the MCP endpoint: parsing, envelope and header checks, dispatch, the reply
auth            the Bearer key (HTTP; stdio has no key)
tenancy         the workspace and project reads (admission, project resolution)
rate_limit      the rate limiter (``Service.admit``)
validation      the arguments' pydantic model
query           the query's words and time words (``text.query_terms``, ``timewords``)
embedding       the embedder (the query's vector; a memory_add's content)
index           the word index and the vector search, without the records they return
records         reading (and, for memory_add, writing) the records and decoding them
tool            the tool's own code: ranking, fusion, explanations, packing
service         ``Service.invoke`` around it (the operation, the call's context)
logging         the structured log line and the metrics of each call
serialisation   the result model to JSON (``model_dump``), the JSON-RPC reply's bytes
==============  ==========================================================================

Per tool it reports the client's round trip (p50/p99 wall), and the median of each stage over the
calls; with 2 cores shared with other work, the stage medians are given both in wall and in CPU
time (the CPU time is what a busy neighbour does not inflate). Each call's answer (its
``structuredContent``) is hashed: ``digests`` per tool and transport say whether a change to the
code changed any answer. Writes ``bench/results/<date>-callsplit-<label>.{json,md}``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus, resultfiles
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
#: the stages timed in the client (wall time only)
CLIENT_SIDE = ("client_schema", "transport", "handoff")
STAGES = (
    "client_schema",
    "transport",
    "frontend",
    "handoff",
    "handler",
    "jsonrpc",
    "auth",
    "tenancy",
    "rate_limit",
    "validation",
    "query",
    "embedding",
    "index",
    "records",
    "tool",
    "service",
    "logging",
    "serialisation",
)
#: the project that holds nothing: the floor is search_memory there
EMPTY = "empty"


# -- the corpus, with the vectors of the embedder under test --


#: this bench's corpora and vectors (bench.corpus replaces its own files when their code changes)
CACHE = corpus.CACHE_DIR / "callsplit"


def prepared_corpus(size: int, embedder_name: str, seed: int = 7) -> Path:
    """The bench corpus at ``size`` with every memory's vector made by ``embedder_name`` (the cached
    corpus carries the packaged default's) and an empty project ``empty``; the cached file, to be
    copied before use. Another model's vectors are made once per corpus *content* and kept in
    ``CACHE`` (``vectors-<model>-<digest of the contents>.f32``), so a change to the schema or the
    index (a new corpus file) does not embed 10,000 memories again."""
    db = corpus.build_db(corpus.CorpusParams(size, seed))
    from mnemo.embedding import build_embedder

    embedder = build_embedder(embedder_name)
    model = (embedder.model if embedder is not None else "none").replace("/", "_")
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{db.path.stem}-{model}.db"
    if path.exists():
        return path
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
        leftover.unlink(missing_ok=True)
    shutil.copy(db.path, tmp)
    from array import array

    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.models.records import Embedding
    from mnemo.ports import Scope
    from mnemo.service import tenancy

    backend = SqliteBackend(tmp)
    tenancy.create_project(backend, db.workspace_id, EMPTY)
    held = backend.db.conn().execute("SELECT DISTINCT vec_model FROM memories").fetchall()
    if embedder is not None and [tuple(row) for row in held] != [(embedder.model,)]:
        scope = Scope(db.workspace_id, db.project_id)
        records, cursor = [], None
        while True:
            page = backend.store.scan_project(scope, cursor=cursor, limit=1000)
            records += page.items
            cursor = page.cursor
            if not cursor:
                break
        contents = hashlib.sha256("\x00".join(r.content for r in records).encode()).hexdigest()[:16]
        kept = CACHE / f"vectors-{model}-{contents}.f32"
        flat = array("f")
        if kept.exists():
            flat.frombytes(kept.read_bytes())
        else:
            print(f"[bench] callsplit: embedding {len(records)} memories with {embedder.model} …", file=sys.stderr)
            for start in range(0, len(records), 256):
                for vector in embedder.embed([r.content for r in records[start : start + 256]]):
                    flat.extend(vector)
            kept.with_suffix(f".{os.getpid()}.tmp").write_bytes(flat.tobytes())
            kept.with_suffix(f".{os.getpid()}.tmp").replace(kept)
        dim = len(flat) // len(records)
        for i, record in enumerate(records):
            vector = flat[i * dim : (i + 1) * dim]
            backend.store.set_embedding(record.model_copy(update={"embedding": Embedding.of(embedder.model, vector)}))
    backend.db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    backend.close()
    shutil.move(tmp, path)
    return path


def working_copy(path: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / "mnemo.db"
    with sqlite3.connect(path) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    return target


# -- the calls --


def calls_for(seed: int, n: int, memory_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """``n`` calls of each tool: the query mix for the searches (each tool at its default limit:
    search_memory and recall top 5, memory_search top 50), memories of the corpus for memory_get,
    new memories for memory_add, and the floor (search_memory on the empty project)."""
    qs = [q for _, q in corpus.queries(seed, n)]
    docs = corpus.generate(corpus.CorpusParams(n + 50, seed + 3))
    return {
        "floor": [{"query": q, "project": EMPTY} for q in qs],
        "search_memory": [{"query": q} for q in qs],
        "memory_search": [{"q": q} for q in qs],
        "recall": [{"query": q} for q in qs],
        "recall_context": [{"query": q} for q in qs],
        "memory_get": [{"id": memory_ids[i * 37 % len(memory_ids)]} for i in range(n)],
        "memory_add": [{"content": d.content, "kind": d.kind, "tags": d.tags} for d in docs[:n]],
    }


def tool_of(name: str) -> str:
    return "search_memory" if name == "floor" else name


def digest(structured: Any) -> str:
    return hashlib.sha256(json.dumps(structured, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


async def _drive(client: Any, calls: dict[str, list[dict]], warmup: int) -> dict[str, Any]:
    """Every call in turn; the client's wall time of each, and a digest of every read's answers."""
    out: dict[str, Any] = {"protocol_version": client.protocol_version, "tools": {}}
    checked = _time_output_checks()
    await client.list_tools()  # as hosts do: it also arms the client's outputSchema checks
    names = list(calls)
    n = len(calls[names[0]])
    wall: dict[str, list[float]] = {name: [] for name in names}
    schema_s: dict[str, list[float]] = {name: [] for name in names}
    digests: dict[str, Any] = {name: hashlib.sha256() for name in names}
    order: list[str] = []
    reads = [name for name in names if name != "memory_add"]
    # the reads interleaved call by call (load drift hits every tool alike), then the writes: the
    # reads' answers are the same on every run
    steps = [(i, name) for i in range(n) for name in reads]
    steps += [(i, name) for name in names if name not in reads for i in range(n)]
    for i, name in steps:
        checked[0] = 0.0
        t0 = time.perf_counter()
        result = await client.call_tool(tool_of(name), calls[name][i])
        elapsed = time.perf_counter() - t0
        schema_s[name].append(checked[0])
        if result.is_error:
            raise RuntimeError(f"{name}: {result.content}")
        order.append(name)
        if name != "memory_add":  # a new memory's id and times are new on every run
            digests[name].update(digest(result.structured_content).encode())
        wall[name].append(elapsed if i >= warmup else -1.0)
    for name in names:
        out["tools"][name] = {
            "wall_s": wall[name],
            "schema_s": schema_s[name],
            "digest": digests[name].hexdigest()[:16],
        }
    out["order"] = order
    return out


def _time_output_checks() -> list[float]:
    """The SDK client's check of each result against the tool's outputSchema (``jsonschema``), timed:
    the client's share of the round trip that the tool's schema and the result's size decide."""
    from mcp.client.session import ClientSession

    spent = [0.0]
    check = ClientSession.validate_tool_result
    check = getattr(check, "__wrapped__", check)

    @functools.wraps(check)
    async def timed_check(self: Any, name: str, result: Any) -> None:
        t0 = time.perf_counter()
        try:
            await check(self, name, result)
        finally:
            spent[0] += time.perf_counter() - t0

    ClientSession.validate_tool_result = timed_check  # type: ignore[method-assign]
    return spent


def _mnemo() -> str:
    return str(Path(sys.executable).with_name("mnemo"))


def _server_env(data_dir: Path, out: Path) -> dict[str, str]:
    return {
        **os.environ,
        "MNEMO_DATA_DIR": str(data_dir),
        "MNEMO_BACKEND": "sqlite",
        "MNEMO_EMBEDDER": os.environ.get("MNEMO_EMBEDDER", "minilm"),
        "MNEMO_CALLSPLIT_OUT": str(out),
        # the server runs the code of the tree this bench is in (a second worktree: a paired run)
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "shared")]),
    }


async def _stdio(data_dir: Path, out: Path, calls: dict[str, list[dict]], warmup: int, hooks: bool) -> dict:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = _server_env(data_dir, out)
    if hooks:
        command, args = sys.executable, ["-m", "bench.callsplit", "stdio-server", str(out), "--data-dir", str(data_dir)]
    else:
        command, args = _mnemo(), ["--data-dir", str(data_dir), "mcp"]
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(ROOT))
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), mode="auto") as client:
            return await _drive(client, calls, warmup)


async def _http(port: int, calls: dict[str, list[dict]], warmup: int) -> dict:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {corpus.BENCH_KEY}"}, timeout=60)
    url = f"http://127.0.0.1:{port}/mcp"
    async with http, Client(streamable_http_client(url, http_client=http), mode="auto") as client:
        return await _drive(client, calls, warmup)


# -- the servers --


def stdio_server(argv: list[str]) -> None:
    """``mnemo mcp`` with the timers on (``python -m bench.callsplit stdio-server OUT MNEMO-ARGS…``)."""
    out, *mnemo_args = argv
    from mnemo.local.cli import apply_library_defaults

    apply_library_defaults()  # what Powertools reads on import, before any import
    from bench import callsplit_hooks

    callsplit_hooks.install(out + ".stdio.jsonl", stdio=True)
    from mnemo.local.cli import main as mnemo_main

    sys.exit(mnemo_main([*mnemo_args, "mcp"]))


def http_server(argv: list[str]) -> None:
    """``mnemo serve`` whose handler instances have the timers on (``… http-server MNEMO-ARGS…``)."""
    from mnemo.local.cli import apply_library_defaults

    apply_library_defaults()
    import functools

    from mnemo.local import server, workers

    server.PoolOptions = functools.partial(  # type: ignore[misc]
        workers.PoolOptions, gateway="bench.callsplit_hooks:ProfiledGateway"
    )
    import atexit

    from bench import callsplit_hooks as hooks

    hooks._State.implicit = False
    hooks._State.sink = open(os.environ[hooks.OUT_ENV] + ".frontend.log", "a", encoding="utf-8")  # noqa: SIM115
    atexit.register(hooks._flush)
    server._Handler._serve = hooks.timed(server._Handler._serve, "frontend", starts=True, ends=True)  # type: ignore[method-assign]
    workers.WorkerPool.dispatch = hooks.timed(workers.WorkerPool.dispatch, "handoff")  # type: ignore[method-assign]
    from mnemo.local.cli import main as mnemo_main

    sys.exit(mnemo_main(argv))


def _served(data_dir: Path, out: Path, hooks: bool, log: Path) -> Any:
    from contextlib import contextmanager

    from bench.processes import free_port, stop_group, wait_healthy

    @contextmanager
    def running() -> Any:
        import subprocess

        port = free_port()
        args = ["--data-dir", str(data_dir), "serve", "--port", str(port)]
        command = [sys.executable, "-m", "bench.callsplit", "http-server", *args] if hooks else [_mnemo(), *args]
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                command,
                cwd=ROOT,
                env=_server_env(data_dir, out),
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            wait_healthy(port, proc, 120, f"mnemo serve (log: {log})")
            yield port
        finally:
            stop_group(proc)

    return running()


# -- one run --


def _records(out: Path) -> list[dict[str, Any]]:
    """The handler's records of the tool calls, in order; on HTTP each with the front end's record
    of its request (``frontend``: the two files list the same requests in the same order)."""
    rows = []
    for path in sorted(out.parent.glob(out.name + ".*jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: r["t"])
    front = out.with_name(out.name + ".frontend.log")
    if front.exists():
        fronts = [json.loads(line) for line in front.read_text().splitlines() if line.strip()]
        if len(fronts) == len(rows):
            for row, one in zip(rows, fronts, strict=True):
                row["frontend"] = one
    return [r for r in rows if r["tool"] is not None]


def _split(client: dict[str, Any], records: list[dict[str, Any]], warmup: int) -> dict[str, Any]:
    """Each tool's stages over its counted calls: the median (and mean) of each, wall and CPU."""
    order = client["order"]
    if len(records) != len(order) or any(r["tool"] != tool_of(n) for r, n in zip(records, order, strict=True)):
        raise RuntimeError(f"{len(records)} server records for {len(order)} calls, or out of order")
    seen: dict[str, int] = {}
    per_tool: dict[str, list[dict[str, Any]]] = {}
    for record, name in zip(records, order, strict=True):
        i = seen[name] = seen.get(name, -1) + 1
        if i < warmup:
            continue
        rtt = client["tools"][name]["wall_s"][i]
        schema = client["tools"][name]["schema_s"][i]
        server_wall = sum(record["wall"].values())
        front: dict[str, Any] = {"wall": {}, "cpu": {}}
        if "frontend" in record:  # mnemo serve's own thread, and its hand-off to the instance
            fe = record["frontend"]
            handoff = fe["wall"].get("handoff", 0.0)
            front["wall"] = {"frontend": fe["wall"].get("frontend", 0.0), "handoff": handoff - server_wall}
            front["cpu"] = {"frontend": fe["cpu"].get("frontend", 0.0)}
        outside = rtt - schema - server_wall - sum(front["wall"].values())
        per_tool.setdefault(name, []).append(
            {
                "wall": {**record["wall"], **front["wall"], "client_schema": schema, "transport": outside},
                "front_cpu": front["cpu"],
                "cpu": record["cpu"],
                "rtt": rtt,
                "server_wall": server_wall,
                "server_cpu": sum(record["cpu"].values()),
            }
        )
    out: dict[str, Any] = {}
    for name, rows in per_tool.items():
        stages: dict[str, Any] = {}
        for stage in STAGES:
            walls = [r["wall"].get(stage, 0.0) for r in rows]
            cpus = [{**r["cpu"], **r["front_cpu"]}.get(stage, 0.0) for r in rows] if stage not in CLIENT_SIDE else None
            if not any(walls):
                continue
            stages[stage] = {
                "wall_p50_ms": round(statistics.median(walls) * 1000, 3),
                "wall_mean_ms": round(statistics.fmean(walls) * 1000, 3),
                **(
                    {
                        "cpu_p50_ms": round(statistics.median(cpus) * 1000, 3),
                        "cpu_mean_ms": round(statistics.fmean(cpus) * 1000, 3),
                    }
                    if cpus is not None
                    else {}
                ),
            }
        out[name] = {
            "rtt": summary_ms([r["rtt"] for r in rows]),
            "server_wall": summary_ms([r["server_wall"] for r in rows]),
            "server_cpu": summary_ms([r["server_cpu"] for r in rows]),
            "stages": stages,
        }
    return out


def run_transport(transport: str, db: Path, workdir: Path, calls: dict, warmup: int, hooks: bool) -> dict[str, Any]:
    import anyio

    tag = f"{transport}-{'split' if hooks else 'plain'}"
    data_dir = workdir / tag
    working_copy(db, data_dir)
    out = workdir / f"{tag}.records"
    if transport == "stdio":
        client = anyio.run(_stdio, data_dir, out, calls, warmup, hooks)
    else:
        with _served(data_dir, out, hooks, workdir / f"{tag}.log") as port:
            client = anyio.run(_http, port, calls, warmup)
    result: dict[str, Any] = {
        "protocol_version": client["protocol_version"],
        "latency": {name: summary_ms([s for s in t["wall_s"] if s >= 0]) for name, t in client["tools"].items()},
        "digests": {name: t["digest"] for name, t in client["tools"].items()},
    }
    if hooks:
        deadline = time.monotonic() + 30  # the last records are written as the server exits
        while len(_records(out)) < len(client["order"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        result["split"] = _split(client, _records(out), warmup)
    return result


def run(size: int, n_calls: int, transports: list[str], split_only: bool, seed: int = 7) -> dict[str, Any]:
    embedder = os.environ.setdefault("MNEMO_EMBEDDER", "minilm")
    db = prepared_corpus(size, embedder, seed)
    with sqlite3.connect(db) as conn:
        ids = [
            row[0]
            for row in conn.execute(  # every caller sees them, now and later
                "SELECT id FROM memories WHERE team_id IS NULL AND expires_at IS NULL ORDER BY seq LIMIT 2000"
            )
        ]
    calls = calls_for(seed, n_calls, ids)
    warmup = min(20, n_calls // 10)
    result: dict[str, Any] = {
        "size": size,
        "embedder": embedder,
        "calls_per_tool": n_calls,
        "warmup": warmup,
        "transports": {},
    }
    with tempfile.TemporaryDirectory(prefix="mnemo-callsplit-") as tmp:
        for transport in transports:
            print(f"[bench] callsplit: {transport} …", file=sys.stderr, flush=True)
            one: dict[str, Any] = {}
            if not split_only:
                one["plain"] = run_transport(transport, db, Path(tmp), calls, warmup, hooks=False)
            one["split"] = run_transport(transport, db, Path(tmp), calls, warmup, hooks=True)
            result["transports"][transport] = one
    return result


# -- the report --


def markdown(res: dict[str, Any], command: str) -> str:
    from bench.report import _table

    lines = [
        f"# Where a call's time goes: {res['size']} memories, MNEMO_EMBEDDER={res['embedder']}",
        "",
        f"`{command}` ({res.get('date', '')}; commit {res.get('commit', '?')}). {res['calls_per_tool']} calls "
        f"per tool (the first {res['warmup']} not counted) through the official MCP Python SDK (`mcp.Client`), "
        "the reads interleaved call by call, then the writes; the floor is search_memory on an empty project. "
        "The machine is shared (2 cores, other work running): the stage split gives each stage's median "
        "in CPU time (the serving thread's, which waiting for a core does not inflate) and in wall time.",
        "",
    ]
    for transport, one in res["transports"].items():
        split = one["split"]
        plain = one.get("plain")
        lines += [f"## {transport} (negotiated {split['protocol_version']})", ""]
        rows = []
        for name, lat in split["latency"].items():
            row = [name]
            if plain:
                row += [plain["latency"][name]["p50_ms"], plain["latency"][name]["p99_ms"]]
            row += [lat["p50_ms"], lat["p99_ms"]]
            s = split["split"].get(name)
            row += [s["server_cpu"]["p50_ms"], s["server_wall"]["p50_ms"]] if s else ["", ""]
            row += [split["digests"][name] if name != "memory_add" else "–"]
            rows.append(row)
        header = ["tool"]
        if plain:
            header += ["p50 ms", "p99 ms"]
        header += ["with timers p50", "p99", "server CPU p50", "server wall p50", "answers' digest"]
        lines += [
            "Round trip as the SDK's caller waits for it"
            + (" (without the timers, then with them)" if plain else "")
            + ", and the server's own time per call:",
            "",
            *_table(header, rows),
            "",
        ]
        names = list(split["split"])
        used = [st for st in STAGES if any(st in split["split"][n]["stages"] for n in names)]
        for measure in ("cpu", "wall"):
            rows = []
            for stage in used:
                row: list[Any] = [stage]
                for n in names:
                    cell = split["split"][n]["stages"].get(stage, {})
                    row.append(cell.get(f"{measure}_p50_ms", "–" if stage in CLIENT_SIDE else ""))
                rows.append(row)
            what = "CPU time" if measure == "cpu" else "wall time (transport: the round trip minus the server's stages)"
            lines += [f"Median per call, ms of {what}:", "", *_table(["stage", *names], rows), ""]
    return "\n".join(lines) + "\n"


def compare(before_path: Path, after_path: Path) -> str:
    """Two runs side by side (``python -m bench.callsplit compare BEFORE.json AFTER.json``): per
    transport and tool, the round trip without the timers (p50, p99), the server's CPU time per call
    (p50, with the timers) and whether every answer hashed the same."""
    from bench.report import _table

    before, after = json.loads(before_path.read_text()), json.loads(after_path.read_text())
    lines = [
        f"# Before and after: {before['size']} memories, MNEMO_EMBEDDER={before['embedder']}",
        "",
        f"Before: `{before['command']}` at {before['commit']} ({before['date']}; {before_path.name}); after: "
        f"`{after['command']}` at {after['commit']} ({after['date']}; {after_path.name}), run one after the "
        "other on this shared 2-core machine. Round trips: the SDK client's wall time without the timers; "
        "server CPU: the serving thread's (handler instance and front end on HTTP), with the timers.",
        "",
    ]
    for transport, one in after["transports"].items():
        old = before["transports"][transport]
        rows = []
        for name in one["split"]["latency"]:
            p_old = old.get("plain", old["split"])["latency"][name]
            p_new = one.get("plain", one["split"])["latency"][name]
            s_old, s_new = old["split"]["split"][name], one["split"]["split"][name]
            cpu = [s["server_cpu"]["p50_ms"] for s in (s_old, s_new)]
            same = old["split"]["digests"][name] == one["split"]["digests"][name]
            rows.append([name, p_old["p50_ms"], p_new["p50_ms"], p_old["p99_ms"], p_new["p99_ms"], cpu[0], cpu[1],
                         "–" if name == "memory_add" else ("same" if same else "**differ**")])  # fmt: skip
        header = ["tool", "p50 before", "after", "p99 before", "after", "server CPU p50 before", "after", "answers"]
        lines += [f"## {transport}", "", *_table(header, rows), ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "compare":
        text = compare(Path(argv[1]), Path(argv[2]))
        if len(argv) > 3:
            Path(argv[3]).write_text(text)
        print(text)
        return None
    if argv and argv[0] == "stdio-server":
        return stdio_server(argv[1:])
    if argv and argv[0] == "http-server":
        return http_server(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench.callsplit")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--split-only", action="store_true", help="skip the runs without the timers")
    parser.add_argument("--label", default="run")
    a = parser.parse_args(argv)
    res = run(a.size, a.calls, a.transports.split(","), a.split_only)
    command = "python -m bench.callsplit " + " ".join(argv)
    resultfiles.write(resultfiles.stamp(res, command), "callsplit", a.label, markdown(res, command))


if __name__ == "__main__":
    main()
