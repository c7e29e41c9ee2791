"""Mnemo as agents call it: ``mnemo serve`` driven over kept-alive connections, through the official
Python MCP SDK and raw, and ``mnemo mcp`` over stdio — at ``size`` memories of the bench corpus.

Phases, one after the other on the shared machine (each measures alone):

1. **in process** — ``Service.invoke`` on a private copy of the corpus: the floor each protocol
   figure is compared with (same queries, same order);
2. **raw, one kept-alive connection** — ``http.client`` posting self-contained handshake-era
   JSON-RPC ``tools/call`` (``MCP-Protocol-Version: 2025-11-25``, no session), and the same calls
   over REST: what the server adds, with no client library in the way;
3. **the official Python SDK** (``mcp.Client`` over Streamable HTTP, its httpx client keeping the
   connection alive, default connect mode) — what an agent built on it waits for;
4. **throughput** — 8 client processes, each with one kept-alive connection, for a fixed time;
5. **a burst of 40 new connections** at once: time to connect and to be answered;
6. **``/healthz`` while 4 clients send the slowest valid request we know** (a LIKE pattern that
   backtracks on 512-character paths: it runs until the per-request budget stops it);
7. **stdio** — the SDK's stdio client spawning ``mnemo mcp`` on the same folder.

The empty-store floor is the same call on an empty project of the same server (and of ``mnemo mcp``).
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import corpus
from bench.processes import free_port, stop_group, wait_healthy
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
MCP_HEADERS = {
    "Authorization": f"Bearer {corpus.BENCH_KEY}",
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
REST_HEADERS = {"Authorization": f"Bearer {corpus.BENCH_KEY}", "Content-Type": "application/json"}
ADMIN_HEADERS = {"Authorization": f"Bearer {corpus.BENCH_ADMIN_KEY}", "Content-Type": "application/json"}
#: the search tools and the argument their query goes in
SEARCH_TOOLS = {"memory_search": "q", "search_memory": "query", "recall": "query", "recall_context": "query"}
#: the slowest valid request we can construct: this LIKE pattern backtracks on long paths
SLOW_PATTERN = "%a%a%a%a%a%a%b"

# -- targets (issue #14), checked in the report --
RAW_ADDED_P50_MS = 1.0  # each search tool's raw p50 ≤ its in-process p50 + this
RAW_P99_MS = 15.0
RAW_ADD_P50_MS = 2.0
SDK_SEARCH_MEMORY_P50_MS, SDK_SEARCH_MEMORY_P99_MS = 5.0, 12.0
SDK_MEMORY_SEARCH_P50_MS = 12.0
SDK_ADD_P50_MS = 5.0
STDIO_P50_MS, STDIO_P99_MS = 3.0, 8.0
THROUGHPUT_PER_S = 500.0
BURST_CONNECT_MS = 100.0
HEALTHZ_P99_MS = 50.0


def _mnemo() -> str:
    return str(Path(sys.executable).with_name("mnemo"))


def _env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "MNEMO_DATA_DIR": str(data_dir), "MNEMO_BACKEND": "sqlite"}


@contextmanager
def served(data_dir: Path, log: Path) -> Iterator[tuple[int, int]]:
    """``mnemo serve`` as a user starts it, on a free port; stopped (SIGTERM) afterwards. Yields
    the port and the server's pid."""
    port = free_port()
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [_mnemo(), "serve", "--port", str(port)],
            cwd=ROOT,
            env=_env(data_dir),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_healthy(port, proc, 60, "mnemo serve")
        yield port, proc.pid
    finally:
        stop_group(proc)


def rpc(tool: str, arguments: dict[str, Any], request_id: int = 1) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
    message["params"] = {"name": tool, "arguments": arguments}  # type: ignore[assignment]
    return json.dumps(message).encode()


def arguments_for(seed: int, n: int) -> dict[str, list[dict[str, Any]]]:
    """The calls of every tool: the query mix for the searches, new memories for memory_add."""
    qs = [q for _, q in corpus.queries(seed, n)]
    calls = {tool: [{field: q} for q in qs] for tool, field in SEARCH_TOOLS.items()}
    docs = corpus.generate(corpus.CorpusParams(n + 50, seed + 3))
    calls["memory_add"] = [{"content": d.content, "kind": d.kind, "tags": d.tags} for d in docs[:n]]
    return calls


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a process and its live descendants, from /proc (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
        todo.extend(int(child) for child in children)
    return total


# -- 1. in process --


def in_process(db: corpus.BenchDb, workdir: Path, calls: dict[str, list[dict]], warmup: int) -> dict[str, Any]:
    from bench.search import open_service

    svc, caller = open_service(corpus.working_copy(db, workdir / "in-process"))
    out: dict[str, Any] = {}
    try:
        for tool, args in calls.items():
            for a in args[:warmup]:
                if tool != "memory_add":
                    svc.invoke(tool, caller, a)
            samples, cpu = [], 0.0
            for a in args:
                t0, c0 = time.perf_counter(), time.thread_time()
                svc.invoke(tool, caller, a)
                samples.append(time.perf_counter() - t0)
                cpu += time.thread_time() - c0
            out[tool] = {**summary_ms(samples), "cpu_mean_ms": round(cpu / len(args) * 1000, 3)}
    finally:
        svc.ports.close()
    return out


# -- 2. raw, one kept-alive connection --


def keepalive(
    port: int, requests: list[tuple[str, bytes]], headers: dict[str, str], warmup: int, pid: int | None = None
) -> dict[str, Any]:
    """Every request on one connection; fails if the server closes it or answers an error. With
    ``pid``, also the server's CPU time per call (all its processes, warm-up calls excluded)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    cpu_start = 0.0
    samples: list[float] = []
    sock_before: Any = None
    for i, (path, body) in enumerate(requests):
        t0 = time.perf_counter()
        conn.request("POST", path, body=body, headers=headers)
        reply = conn.getresponse()
        data = reply.read()
        elapsed = time.perf_counter() - t0
        if reply.status != 200 or b'"isError":true' in data:
            raise RuntimeError(f"{path}: {reply.status} {data[:300]!r}")
        if i == 0:
            sock_before = conn.sock
        elif conn.sock is not sock_before:
            raise RuntimeError("the server closed the kept-alive connection")
        if i >= warmup:
            samples.append(elapsed)
        if i == warmup - 1 and pid is not None:
            cpu_start = tree_cpu_s(pid)
    conn.close()
    out = summary_ms(samples)
    if pid is not None:
        out["server_cpu_ms"] = round((tree_cpu_s(pid) - cpu_start) / len(samples) * 1000, 3)
    return out


def raw_phase(port: int, pid: int, calls: dict[str, list[dict]], warmup: int) -> dict[str, Any]:
    mcp: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for tool, args in calls.items():
        mcp[tool] = keepalive(port, [("/mcp", rpc(tool, a, i)) for i, a in enumerate(args)], MCP_HEADERS, warmup, pid)
        rest[tool] = keepalive(
            port, [(f"/v1/tools/{tool}", json.dumps(a).encode()) for a in args], REST_HEADERS, warmup, pid
        )
    empty = [("/mcp", rpc("search_memory", {"query": a["query"], "project": "empty"})) for a in calls["search_memory"]]
    floor = keepalive(port, empty, MCP_HEADERS, warmup)
    return {"mcp": mcp, "rest": rest, "mcp_floor": floor}


# -- 3. the official Python SDK over Streamable HTTP --


async def _sdk_session(url: str, calls: dict[str, list[dict]], warmup: int, mode: str) -> dict[str, Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    out: dict[str, Any] = {}
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {corpus.BENCH_KEY}"}, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        out["protocol_version"] = client.protocol_version
        await client.list_tools()  # as hosts do: it also arms the client's outputSchema checks
        for tool, args in [*calls.items(), ("floor", None)]:
            name, batch = (tool, args) if args is not None else ("search_memory", calls["search_memory"])
            samples = []
            for i, a in enumerate(batch):
                a = a if args is not None else {"query": a["query"], "project": "empty"}
                t0 = time.perf_counter()
                result = await client.call_tool(name, a)
                elapsed = time.perf_counter() - t0
                if result.is_error:
                    raise RuntimeError(f"{name}: {result.content}")
                if i >= warmup:
                    samples.append(elapsed)
            out[tool] = summary_ms(samples)
    return out


def sdk_phase(port: int, calls: dict[str, list[dict]], warmup: int) -> dict[str, Any]:
    import anyio

    url = f"http://127.0.0.1:{port}/mcp"
    return {"auto": anyio.run(_sdk_session, url, calls, warmup, "auto")}


# -- 4. throughput, 8 kept-alive clients --


def _load_client(port: int, path: str, bodies: list[bytes], start_at: float, stop_at: float, out: Any) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.connect()
    done, errors, latencies = 0, 0, []
    i = 0
    while time.monotonic() < start_at:
        time.sleep(0.001)
    while time.monotonic() < stop_at:
        t0 = time.perf_counter()
        conn.request("POST", path, body=bodies[i % len(bodies)], headers=REST_HEADERS)
        reply = conn.getresponse()
        reply.read()
        latencies.append(time.perf_counter() - t0)
        done += 1
        errors += reply.status != 200
        i += 1
    conn.close()
    out.put((done, errors, latencies))


def throughput(port: int, tool: str, args: list[dict], clients: int, seconds: float) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    bodies = [json.dumps(a).encode() for a in args]
    start_at = time.monotonic() + 2.0  # every client connected and ready
    workers = [
        context.Process(
            target=_load_client,
            args=(port, f"/v1/tools/{tool}", bodies[i::clients], start_at, start_at + seconds, results),
        )
        for i in range(clients)
    ]
    for w in workers:
        w.start()
    gathered = [results.get(timeout=seconds + 60) for _ in workers]
    for w in workers:
        w.join()
    total = sum(done for done, _, _ in gathered)
    return {
        "tool": tool,
        "clients": clients,
        "seconds": seconds,
        "requests": total,
        "errors": sum(errors for _, errors, _ in gathered),
        "per_s": round(total / seconds, 1),
        "latency": summary_ms([x for _, _, latencies in gathered for x in latencies]),
    }


# -- 5. a burst of new connections --


def burst(port: int, connections: int) -> dict[str, Any]:
    barrier = threading.Barrier(connections)
    connect: list[float] = []
    answered: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        barrier.wait()
        t0 = time.perf_counter()
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            t1 = time.perf_counter()
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b"".join(iter(lambda: sock.recv(65536), b""))
            t2 = time.perf_counter()
            sock.close()
            ok = data.startswith(b"HTTP/1.1 200")
        except OSError as exc:
            with lock:
                failures.append(type(exc).__name__)
            return
        with lock:
            connect.append(t1 - t0)
            if ok:
                answered.append(t2 - t0)
            else:
                failures.append(data[:40].decode(errors="replace"))

    threads = [threading.Thread(target=one) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "connections": connections,
        "connected": len(connect),
        "answered": len(answered),
        "failures": failures,
        "connect": summary_ms(connect),
        "answer": summary_ms(answered),
    }


# -- 6. /healthz while the slowest valid requests run --


def _admin(port: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", path, body=json.dumps(body).encode(), headers=ADMIN_HEADERS)
    reply = conn.getresponse()
    data = json.loads(reply.read())
    conn.close()
    if reply.status not in (200, 201):
        raise RuntimeError(f"{path}: {reply.status} {data}")
    return data  # type: ignore[no-any-return]


def healthz_under_slow_load(port: int, slow_clients: int, seconds: float) -> dict[str, Any]:
    for i in range(10):
        _admin(port, "/v1/tools/memory_add", {"content": f"zebrafish note {i}", "path": "a" * 512, "project": "slow"})
    stop = threading.Event()
    slow: dict[str, Any] = {"statuses": {}, "seconds": []}
    lock = threading.Lock()
    body = json.dumps({"query": "zebrafish", "path_filter": SLOW_PATTERN, "project": "slow"}).encode()

    def slow_client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while not stop.is_set():
            t0 = time.perf_counter()
            conn.request("POST", "/v1/tools/search_memory", body=body, headers=REST_HEADERS)
            reply = conn.getresponse()
            reply.read()
            with lock:
                slow["statuses"][str(reply.status)] = slow["statuses"].get(str(reply.status), 0) + 1
                slow["seconds"].append(round(time.perf_counter() - t0, 2))
        conn.close()

    clients = [threading.Thread(target=slow_client, daemon=True) for _ in range(slow_clients)]
    for c in clients:
        c.start()
    time.sleep(1.0)  # every slow request is running
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    samples: list[float] = []
    statuses: dict[str, int] = {}
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        t0 = time.perf_counter()
        conn.request("GET", "/healthz")
        reply = conn.getresponse()
        reply.read()
        samples.append(time.perf_counter() - t0)
        statuses[str(reply.status)] = statuses.get(str(reply.status), 0) + 1
        time.sleep(0.01)
    conn.close()
    stop.set()
    for c in clients:
        c.join(timeout=60)
    return {"slow_clients": slow_clients, "slow": slow, "healthz": summary_ms(samples), "healthz_statuses": statuses}


# -- 7. stdio --


async def _stdio_session(data_dir: Path, calls: dict[str, list[dict]], warmup: int, project: str | None) -> dict:
    from mcp import Client, StdioServerParameters

    flags = ["--project", project] if project else []
    params = StdioServerParameters(command=_mnemo(), args=["--data-dir", str(data_dir), "mcp", *flags], env={})
    out: dict[str, Any] = {}
    with open(os.devnull, "w") as quiet:
        from mcp.client.stdio import stdio_client

        async with Client(stdio_client(params, errlog=quiet), mode="auto") as client:
            out["protocol_version"] = client.protocol_version
            await client.list_tools()
            for tool in ("search_memory", "memory_search") if project is None else ("search_memory",):
                samples = []
                for i, a in enumerate(calls[tool]):
                    t0 = time.perf_counter()
                    result = await client.call_tool(tool, a)
                    elapsed = time.perf_counter() - t0
                    if result.is_error:
                        raise RuntimeError(f"{tool}: {result.content}")
                    if i >= warmup:
                        samples.append(elapsed)
                out[tool] = summary_ms(samples)
    return out


def stdio_phase(data_dir: Path, calls: dict[str, list[dict]], warmup: int) -> dict[str, Any]:
    import anyio

    corpus_side = anyio.run(_stdio_session, data_dir, calls, warmup, None)
    floor = anyio.run(_stdio_session, data_dir, calls, warmup, "empty")
    return {**corpus_side, "floor": floor["search_memory"]}


def _phase(name: str) -> None:
    print(f"[bench] clients: {name} …", file=sys.stderr, flush=True)


def run(size: int, n_calls: int, workdir: Path, seed: int = 7, seconds: float = 10.0) -> dict[str, Any]:
    _phase("corpus")
    db = corpus.build_db(corpus.CorpusParams(size, seed))
    calls = arguments_for(seed, n_calls)
    warmup = min(20, n_calls // 10)
    result: dict[str, Any] = {"size": size, "calls_per_tool": n_calls, "warmup": warmup}
    _phase("in process")
    result["in_process"] = in_process(db, workdir, calls, warmup)
    data_dir = workdir / "clients"
    corpus.working_copy(db, data_dir)
    with served(data_dir, workdir / "clients-serve.log") as (port, pid):
        _admin(port, "/v1/admin/projects", {"slug": "empty"})
        _admin(port, "/v1/admin/projects", {"slug": "slow"})
        _phase("raw")
        result["raw"] = raw_phase(port, pid, calls, warmup)
        _phase("Python SDK")
        result["sdk"] = sdk_phase(port, calls, warmup)
        _phase("throughput")
        searches = calls["memory_search"]
        result["throughput"] = [
            throughput(port, "search_memory", calls["search_memory"], 8, seconds),
            throughput(port, "memory_search", searches, 8, seconds),
        ]
        _phase("burst")
        result["burst"] = burst(port, 40)
        _phase("healthz beside slow requests")
        result["healthz_under_slow_load"] = healthz_under_slow_load(port, 4, max(15.0, seconds))
    _phase("stdio")
    result["stdio"] = stdio_phase(data_dir, calls, warmup)
    return result


# -- the report --


def targets(res: dict[str, Any]) -> list[list[Any]]:
    ok = {True: "✅", False: "❌"}
    rows: list[list[Any]] = []
    inproc, raw, sdk = res["in_process"], res["raw"]["mcp"], res["sdk"]["auto"]
    for tool in SEARCH_TOOLS:
        limit = round(inproc[tool]["p50_ms"] + RAW_ADDED_P50_MS, 3)
        rows.append([f"raw MCP {tool} p50 (≤ in-process p50 + 1 ms)", f"≤ {limit} ms", raw[tool]["p50_ms"],
                     ok[raw[tool]["p50_ms"] <= limit]])  # fmt: skip
        rows.append(
            [f"raw MCP {tool} p99", f"≤ {RAW_P99_MS} ms", raw[tool]["p99_ms"], ok[raw[tool]["p99_ms"] <= RAW_P99_MS]]
        )
    rows.append(["raw MCP memory_add p50", f"≤ {RAW_ADD_P50_MS} ms", raw["memory_add"]["p50_ms"],
                 ok[raw["memory_add"]["p50_ms"] <= RAW_ADD_P50_MS]])  # fmt: skip
    for tool in SEARCH_TOOLS:  # the same question in CPU time, which waiting for a core does not inflate
        added = round(raw[tool]["server_cpu_ms"] - inproc[tool]["cpu_mean_ms"], 3)
        rows.append([f"raw MCP {tool}: server CPU per call − in-process CPU per call", f"≤ {RAW_ADDED_P50_MS} ms",
                     added, ok[added <= RAW_ADDED_P50_MS]])  # fmt: skip
    for tool, pct, limit in (
        ("search_memory", "p50", SDK_SEARCH_MEMORY_P50_MS),
        ("search_memory", "p99", SDK_SEARCH_MEMORY_P99_MS),
        ("memory_search", "p50", SDK_MEMORY_SEARCH_P50_MS),
        ("memory_add", "p50", SDK_ADD_P50_MS),
    ):
        value = sdk[tool][f"{pct}_ms"]
        rows.append([f"Python SDK {tool} {pct}", f"≤ {limit} ms", value, ok[value <= limit]])
    stdio = res["stdio"]["search_memory"]
    rows.append(
        ["stdio search_memory p50", f"≤ {STDIO_P50_MS} ms", stdio["p50_ms"], ok[stdio["p50_ms"] <= STDIO_P50_MS]]
    )
    rows.append(
        ["stdio search_memory p99", f"≤ {STDIO_P99_MS} ms", stdio["p99_ms"], ok[stdio["p99_ms"] <= STDIO_P99_MS]]
    )
    for load in res["throughput"]:
        rows.append([f"{load['tool']} with 8 kept-alive clients", f"≥ {THROUGHPUT_PER_S:g}/s", f"{load['per_s']}/s",
                     ok[load["per_s"] >= THROUGHPUT_PER_S and load["errors"] == 0]])  # fmt: skip
    b = res["burst"]
    rows.append(["40 new connections at once: slowest connect", f"≤ {BURST_CONNECT_MS:g} ms", b["connect"]["max_ms"],
                 ok[b["connected"] == b["connections"] and b["connect"]["max_ms"] <= BURST_CONNECT_MS]])  # fmt: skip
    h = res["healthz_under_slow_load"]["healthz"]
    rows.append(["/healthz p99 beside 4 slowest valid requests", f"≤ {HEALTHZ_P99_MS:g} ms", h["p99_ms"],
                 ok[h["p99_ms"] <= HEALTHZ_P99_MS]])  # fmt: skip
    return rows


def markdown(res: dict[str, Any]) -> list[str]:
    from bench.report import _table

    tools = [*SEARCH_TOOLS, "memory_add"]
    inproc, raw, sdk = res["in_process"], res["raw"], res["sdk"]["auto"]
    lines = [
        f"## As agents call it: `mnemo serve` and `mnemo mcp` at {res['size']} memories",
        "",
        f"{res['calls_per_tool']} calls per tool (the first {res['warmup']} not counted), one after the other; "
        "searches use the query mix, memory_search its default top 50. *raw*: `http.client` on one kept-alive "
        "connection (MCP: self-contained `tools/call` at 2025-11-25); *SDK*: `mcp.Client` (mcp 2.x) over Streamable "
        f"HTTP, default connect mode (negotiated {sdk['protocol_version']}); *stdio*: the SDK's stdio client spawning "
        "`mnemo mcp`. The *floor* is search_memory on an empty project of the same server.",
        "",
    ]
    rows = []
    for tool in tools:
        stdio = res["stdio"].get(tool, {})
        rest, mcp = raw["rest"][tool], raw["mcp"][tool]
        rows.append([tool, inproc[tool]["p50_ms"], inproc[tool]["p99_ms"], rest["p50_ms"], rest["p99_ms"],
                     mcp["p50_ms"], mcp["p99_ms"], sdk[tool]["p50_ms"], sdk[tool]["p99_ms"],
                     stdio.get("p50_ms", ""), stdio.get("p99_ms", "")])  # fmt: skip
    rows.append(["floor (empty project)", "", "", "", "", raw["mcp_floor"]["p50_ms"], raw["mcp_floor"]["p99_ms"],
                 sdk["floor"]["p50_ms"], sdk["floor"]["p99_ms"], res["stdio"]["floor"]["p50_ms"],
                 res["stdio"]["floor"]["p99_ms"]])  # fmt: skip
    header = ["tool", "in process p50", "p99", "REST raw p50", "p99", "MCP raw p50", "p99", "SDK p50", "p99",
              "stdio p50", "p99"]  # fmt: skip
    lines += [*_table(header, rows), ""]
    rows = [[tool, inproc[tool]["cpu_mean_ms"], raw["rest"][tool]["server_cpu_ms"], raw["mcp"][tool]["server_cpu_ms"],
             round(raw["mcp"][tool]["server_cpu_ms"] - inproc[tool]["cpu_mean_ms"], 3)] for tool in tools]  # fmt: skip
    lines += [
        "CPU time per call, which waiting for a core on the shared machine does not inflate: the calling thread's "
        "in process; every process of `mnemo serve` (HTTP front end and handler instances, from /proc) for raw calls.",
        "",
        *_table(["tool", "in process", "server, REST", "server, MCP", "MCP − in process"], rows),
        "",
    ]
    rows = [[t["tool"], t["clients"], t["seconds"], t["requests"], t["errors"], t["per_s"], t["latency"]["p50_ms"],
             t["latency"]["p99_ms"]] for t in res["throughput"]]  # fmt: skip
    lines += ["Throughput over REST, each client a process with one kept-alive connection:", ""]
    lines += [*_table(["tool", "clients", "s", "requests", "errors", "req/s", "p50", "p99"], rows), ""]
    b = res["burst"]
    lines += [
        f"A burst of {b['connections']} new connections at once: {b['connected']} connected (slowest "
        f"{b['connect']['max_ms']} ms, p50 {b['connect']['p50_ms']} ms), {b['answered']} answered `/healthz` "
        f"(slowest {b['answer']['max_ms']} ms); failures: {b['failures'] or 'none'}.",
        "",
    ]
    h = res["healthz_under_slow_load"]
    slow_s = h["slow"]["seconds"]
    lines += [
        f"`/healthz` every 10 ms while {h['slow_clients']} clients send search_memory with path_filter "
        f"`{SLOW_PATTERN}` over 512-character paths (each runs until the 10 s budget stops its instance: "
        f"statuses {h['slow']['statuses']}, {min(slow_s) if slow_s else '–'}–{max(slow_s) if slow_s else '–'} s): "
        f"p50 {h['healthz']['p50_ms']} ms, p99 {h['healthz']['p99_ms']} ms, max {h['healthz']['max_ms']} ms "
        f"over {h['healthz']['n']} probes ({h['healthz_statuses']}).",
        "",
    ]
    return lines
