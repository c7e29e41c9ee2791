"""A load driver for the AWS backend, run locally: moto server (its own process) and a real
OpenSearch node, both on 127.0.0.1, and ``Service.invoke`` from N threads of this process — each
thread one "instance" issuing calls back to back (closed loop), the calls alternating
``memory_add`` and ``memory_search``. The concurrency rises step by step; each step is bounded in
calls and seconds, and ends with the stream indexer delivering the step's changes.

Reported per step: calls a second, latency per tool, and where a call's time goes — time inside
DynamoDB requests and OpenSearch requests (measured around each request: botocore's
``before-call`` / ``after-call``, a wrapper on the OpenSearch transport), this process's CPU, and
the stream indexer's rate for the step's changes.

moto enforces no DynamoDB limit (no partition throughput, no item-collection size, no on-demand
ramp), so nothing here can show one: the driver says so, and the figures are calculated in
docs/scale.md. What it shows is where the time of a request goes on this machine as load grows.

    python -m bench.aws_load --levels 1,2,4,8 --seconds 8 --max-calls 400 --label 2026-12-01-aws-load
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench import corpus
from bench.aws import available, bench_tenant, load_corpus, local_stack
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MOTO_NOTE = (
    "moto enforces no DynamoDB limit — not a partition's 1,000 writes / 3,000 reads a second, not a GSI's "
    "back-pressure, not an on-demand table's ramp — so this run cannot reach one; those "
    "ceilings are calculated in docs/scale.md. moto's own time per request (one Python process) is the "
    "DynamoDB column here, far above DynamoDB's few milliseconds."
)


class Timings:
    """Seconds spent inside DynamoDB and OpenSearch requests, summed over every thread."""

    def __init__(self, backend: Any) -> None:
        self.lock = threading.Lock()
        self.local = threading.local()
        self.seconds: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        events = backend.dynamodb.meta.events
        events.register("before-call.dynamodb", self._start)
        events.register("after-call.dynamodb", self._stop)
        events.register("after-call-error.dynamodb", self._stop)
        transport = backend.index.client.transport
        original = transport.perform_request

        def perform_request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(method, url, *args, **kwargs)
            finally:
                self._add("OpenSearch", time.perf_counter() - started)

        transport.perform_request = perform_request

    def _start(self, **_: Any) -> None:
        self.local.started = time.perf_counter()

    def _stop(self, **_: Any) -> None:
        started = getattr(self.local, "started", None)
        if started is not None:
            self._add("DynamoDB", time.perf_counter() - started)
            self.local.started = None

    def _add(self, what: str, seconds: float) -> None:
        with self.lock:
            self.seconds[what] += seconds
            self.requests[what] += 1

    def take(self) -> tuple[Counter[str], Counter[str]]:
        with self.lock:
            out = (Counter(self.seconds), Counter(self.requests))
            self.seconds.clear()
            self.requests.clear()
            return out


def _step(svc: Any, caller: Any, threads: int, seconds: float, max_calls: int, work: list[tuple[str, dict]]) -> dict:
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    lock = threading.Lock()
    issued = iter(range(max_calls))
    deadline = time.perf_counter() + seconds
    start = threading.Barrier(threads)

    def worker() -> None:
        start.wait()
        while time.perf_counter() < deadline:
            with lock:
                n = next(issued, None)
            if n is None:
                return
            tool, arguments = work[n % len(work)]
            began = time.perf_counter()
            try:
                svc.invoke(tool, caller, arguments)
            except Exception as exc:  # noqa: BLE001 - counted and reported by type: a load test goes on
                with lock:
                    errors[type(exc).__name__] += 1
                continue
            with lock:
                latencies[tool].append(time.perf_counter() - began)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    wall, cpu = time.perf_counter(), time.process_time()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = sum(len(v) for v in latencies.values())
    return {
        "threads": threads,
        "calls": done,
        "seconds": round(wall, 2),
        "calls_per_s": round(done / wall, 1) if wall else 0.0,
        "cpu_ms_per_call": round(cpu * 1000 / done, 2) if done else None,
        "latency": {tool: summary_ms(samples) for tool, samples in sorted(latencies.items())},
        "errors": dict(errors),
    }


def run(
    levels: list[int], seconds: float, max_calls: int, size: int = 2000, seed: int = 11, window: list[int] | None = None
) -> dict[str, Any]:
    ok, reason = available()
    if not ok:
        return {"status": "not run", "reason": reason}
    from mnemo.backends.aws import AwsBackend
    from mnemo.embedding import default_embedder
    from mnemo.service.pipeline import Service

    from tests.support.stream import StreamDrain

    steps: list[dict] = []
    windows: list[dict] = []
    # a window of 10 minutes: loading a burst of changes on moto here takes longer than 60 s
    refresh = {"opensearch_refresh_interval": "1s", "opensearch_refresh": "false"}
    with local_stack(**refresh, search_recent_window_s=600 if window else 60) as cfg:
        backend = AwsBackend.from_settings(cfg)
        try:
            workspace, project, key = bench_tenant(backend, "load")
            load_corpus(
                backend,
                workspace.id,
                project.id,
                corpus.generate(corpus.CorpusParams(size, seed)),
                into_table=False,
            )
            svc = Service(backend, embedder=default_embedder())
            caller = svc.authenticate(f"Bearer {key}")
            docs = corpus.generate(corpus.CorpusParams(max_calls * len(levels), seed + 1))
            queries = [q for _, q in corpus.queries(seed, max_calls)]
            timings = Timings(backend)
            stream = StreamDrain(cfg, start="LATEST")
            stream.drain(backend)
            for n, threads in enumerate(levels):
                adds = docs[n * max_calls : (n + 1) * max_calls]
                work: list[tuple[str, dict]] = []
                for i, doc in enumerate(adds):
                    work.append(("memory_add", {"content": doc.content, "tags": doc.tags}))
                    work.append(("memory_search", {"q": queries[i % len(queries)]}))
                timings.take()
                step = _step(svc, caller, threads, seconds, max_calls, work)
                spent, requests = timings.take()
                calls = step["calls"] or 1
                step["per_call_ms"] = {what: round(s * 1000 / calls, 2) for what, s in sorted(spent.items())}
                step["requests_per_call"] = {what: round(r / calls, 2) for what, r in sorted(requests.items())}
                started = time.perf_counter()
                records = stream.drain(backend)
                drained = time.perf_counter() - started
                step["indexer"] = {
                    "records": records,
                    "seconds": round(drained, 2),
                    "records_per_s": round(records / drained, 1) if drained else None,
                }
                timings.take()
                steps.append(step)
                print(json.dumps(step), flush=True)
            if window:
                windows = _window(backend, svc, caller, workspace.id, window, searches=20)
        finally:
            backend.close()
    return {
        "status": "done",
        "size": size,
        "seconds": seconds,
        "max_calls": max_calls,
        "steps": steps,
        "window": windows,
    }


def _window(backend: Any, svc: Any, caller: Any, workspace_id: str, sizes: list[int], searches: int) -> list[dict]:
    """Searches with ``n`` changes in the read-your-writes window (a project of their own each,
    the changes in the table and the index): the merge's cost at a burst of writes."""
    import dataclasses

    from mnemo.models.common import utc_now
    from mnemo.service import tenancy

    out = []
    timings = Timings(backend)
    queries = [q for _, q in corpus.queries(5, searches)]
    for n in sizes:
        project = tenancy.create_project(backend, workspace_id, f"window-{n}", f"window {n}")
        now = utc_now()
        docs = [
            dataclasses.replace(d, created_at=now, expires_at=None)
            for d in corpus.generate(corpus.CorpusParams(n, 100 + n))
        ]
        load_corpus(backend, workspace_id, project.id, docs, into_table=True)
        latencies, cpus = [], []
        timings.take()
        for q in queries:
            began, cpu = time.perf_counter(), time.process_time()
            svc.invoke("memory_search", caller, {"q": q, "project": project.id})
            latencies.append(time.perf_counter() - began)
            cpus.append(time.process_time() - cpu)
        spent, requests = timings.take()
        out.append(
            {
                "changes_in_window": n,
                "searches": len(queries),
                "latency": summary_ms(latencies),
                "cpu": summary_ms(cpus),
                "per_search_ms": {what: round(t * 1000 / len(queries), 2) for what, t in sorted(spent.items())},
                "requests_per_search": {what: round(r / len(queries), 2) for what, r in sorted(requests.items())},
            }
        )
        print(json.dumps(out[-1]), flush=True)
    return out


def markdown(res: dict[str, Any], command: str) -> str:
    lines = [
        "# The AWS backend under rising load, locally (bench/aws_load.py)",
        "",
        f"`{command}`",
        "",
        f"moto server in its own process and one OpenSearch 2.19 node (`refresh_interval` 1 s), both on "
        f"127.0.0.1; {res['size']} memories in the index; calls through `Service.invoke` from N threads of one "
        "process, back to back, alternating memory_add and memory_search; each step stops at "
        f"{res['max_calls']} calls or {res['seconds']} s, then the stream indexer delivers the step's changes.",
        "",
        MOTO_NOTE,
        "",
        "Per call: time inside DynamoDB and OpenSearch requests (summed over every thread, so a search's index "
        "query on its pool thread counts beside its DynamoDB `Query`), this process's CPU.",
        "",
        "| threads | calls/s | add p50 / p99 ms | search p50 / p99 ms | DynamoDB ms/call | OpenSearch ms/call "
        "| CPU ms/call | requests/call | indexer records/s | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in res["steps"]:
        lat = s["latency"]
        add, search = lat.get("memory_add", {}), lat.get("memory_search", {})
        lines.append(
            f"| {s['threads']} | {s['calls_per_s']} | {add.get('p50_ms')} / {add.get('p99_ms')} "
            f"| {search.get('p50_ms')} / {search.get('p99_ms')} | {s['per_call_ms'].get('DynamoDB')} "
            f"| {s['per_call_ms'].get('OpenSearch')} | {s['cpu_ms_per_call']} "
            f"| {', '.join(f'{v:g} {k}' for k, v in s['requests_per_call'].items())} "
            f"| {s['indexer']['records_per_s']} ({s['indexer']['records']} in {s['indexer']['seconds']} s) "
            f"| {s['errors'] or 0} |"
        )
    if res.get("window"):
        lines += [
            "",
            "Searches with a burst of changes in the read-your-writes window (the window raised to 10 min so that "
            "loading the burst on moto fits in it; at most 1,000 changes are merged, `MAX_RECENT_CHANGES`):",
            "",
            "| changes in the window | searches | p50 / p99 ms | CPU p50 / p99 ms | DynamoDB ms/search "
            "| OpenSearch ms/search | requests/search |",
            "|---|---|---|---|---|---|---|",
        ]
        for w in res["window"]:
            lines.append(
                f"| {w['changes_in_window']} | {w['searches']} | {w['latency']['p50_ms']} / {w['latency']['p99_ms']} "
                f"| {w['cpu']['p50_ms']} / {w['cpu']['p99_ms']} | {w['per_search_ms'].get('DynamoDB')} "
                f"| {w['per_search_ms'].get('OpenSearch')} "
                f"| {', '.join(f'{v:g} {k}' for k, v in w['requests_per_search'].items())} |"
            )
    return "\n".join([*lines, ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,2,4,8", help="threads per step, comma-separated")
    parser.add_argument("--seconds", type=float, default=8.0, help="the most a step runs")
    parser.add_argument("--max-calls", type=int, default=400, help="the most calls a step makes")
    parser.add_argument("--size", type=int, default=2000, help="memories in the index before the run")
    parser.add_argument("--label", default="", help="write bench/results/<label>.md and .json")
    parser.add_argument(
        "--window", default="", help="then searches with this many changes in the window, e.g. 100,1000"
    )
    args = parser.parse_args(argv)
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    window = [int(x) for x in args.window.split(",") if x.strip()]
    res = run(levels, args.seconds, args.max_calls, args.size, window=window)
    if res["status"] != "done":
        print(res)
        return 1
    command = "python -m bench.aws_load " + " ".join(argv if argv is not None else sys.argv[1:])
    text = markdown(res, command)
    print(text)
    if args.label:
        (RESULTS / f"{args.label}.md").write_text(text)
        (RESULTS / f"{args.label}.json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
