"""Every tool in process at scale, with the default embedder (issue 41: "at 100,000 memories in
process, p99 <= 20 ms for every tool, measured on an idle machine or as CPU time").

    python -m bench.every_tool [--size 100000] [--calls 200] [--db FILE] [--label NAME]

The corpus is callsplit's (``bench.callsplit.prepared_corpus``: the bench corpus at ``size`` with
every memory's vector made by ``MNEMO_EMBEDDER``, default minilm, cached), copied (``--db``: another
corpus file to copy instead, e.g. the one an older tree built, so two trees run on the same
memories: a tree whose schema is newer migrates the copy when it opens it); the service is
built as ``mnemo mcp`` builds it for a local process (``embed_after_answer`` when the embedder asks
for it, ``query_vector_aside``, the library defaults of ``mnemo.local.cli``: ``OPENBLAS_NUM_THREADS=1``).
With the query's vector made on a thread of its own, the calling thread's CPU leaves it out: compare
recall's CPU as the process's. Before anything is
timed, one recall builds the project's HNSW graph (``backends/sqlite/vectors.py``, from 20,000
vectors; built on a background thread, or loaded from the graph this bench kept from an earlier
run) and the bench waits for it, as a warm server has it; then the process freezes what it holds
(``mnemo.coldstart.freeze``), as a warm ``mnemo serve`` worker or ``mnemo mcp`` does.

The reads, interleaved call by call (``calls`` each, the first tenth not counted): memory_search,
search_memory, recall (the query mix of ``corpus.queries(7, calls)``), recall_context (that of seed
8: after a recall of the same words its query's vector would be kept), each tool at its default
limit, memory_get and memory_history (memories of the corpus). Then the writes, each in a block:
memory_add (new memories), memory_update (a new content for memories of the corpus), memory_delete
and forget (other memories of the corpus); last ``memory_add spaced``, more new memories, each
added once the embedding of the memories before it is done (``minilm`` embeds a memory after the
answer, on a thread of the process: in the block, that thread is always busy beside the calls),
then ``recall after an add``: a memory added (not timed), then once it is embedded a recall (the
query mix of seed 9), again and again: a read right after a vector's write, which another
connection's writes make cost more (SQLite drops the reading connection's page cache and memory
map; the vector cache reads the vectors written since it last looked). As ``mnemo mcp`` serves, the
vectors made after an answer are stored by the thread that makes the calls, between them, and then the
backend's own work when due (``Service.between``: SQLite checkpoints its log) — not counted in any call:
``mnemo mcp`` does both while it waits for the next message; the bench times them apart.

Per call: wall time; the calling thread's CPU time (the call's own); and the process's CPU time
(all threads: work a change moves to a thread of its own counts; for a write in a block it also
counts the embedding of earlier writes' memories after their answers, so the thread's
figure is the write's own).

Writes ``bench/results/<date>-every-tool-<label>.{json,md}``.
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus, resultfiles
from bench.stats import summary_ms

READS = ("memory_search", "search_memory", "recall", "recall_context", "memory_get", "memory_history")
WRITES = ("memory_add", "memory_update", "memory_delete", "forget")
#: memory_add again, each call once the memories before it are embedded (an agent's adds, seconds
#: apart): its cost without the embedding of earlier memories running beside it
SPACED = "memory_add spaced"
#: and after each of those adds, once its memory is embedded, a recall (an agent's next question):
#: the first read after a vector's write (another connection's: SQLite drops its map and cache;
#: the vector cache reads what changed)
AFTER = "recall after an add"
BEFORE_AFTER = "the add before"  # (not timed)


def _service(db_path: Path) -> tuple[Any, Any]:
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.embedding import build_embedder
    from mnemo.service.pipeline import Service

    embedder = build_embedder(os.environ["MNEMO_EMBEDDER"])
    if embedder is not None and hasattr(embedder, "load"):
        embedder.load()
    later = bool(getattr(embedder, "embed_after_answer", False))
    options: dict[str, Any] = {"embed_after_answer": later}
    if "query_vector_aside" in inspect.signature(Service).parameters:  # a tree from before it has none
        options["query_vector_aside"] = True  # as mnemo.runtime.build_service outside Lambda
    svc = Service(SqliteBackend(db_path), embedder=embedder, **options)
    return svc, svc.authenticate(f"Bearer {corpus.BENCH_KEY}")


def _graph(svc: Any, caller: Any, kept: Path, copy: Path, wait_s: float) -> str | None:
    """The project's HNSW graph ready (built, or loaded from ``kept``); where it came from."""
    from mnemo.backends.sqlite import SqliteBackend

    backend = svc.ports
    assert isinstance(backend, SqliteBackend)
    vectors = backend.index.vectors
    if vectors.ann_min is None:
        return None
    project = backend.db.conn().execute("SELECT project_id, count(*) FROM memories GROUP BY project_id").fetchall()
    project_id, count = max(project, key=lambda row: row[1])
    if count < vectors.ann_min:
        return None
    svc.invoke("recall", caller, {"query": "warm"})
    deadline = time.monotonic() + wait_s
    while not vectors.ann_ready(project_id):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the HNSW graph was not ready within {wait_s:g} s")
        time.sleep(0.5)
    source = vectors.ann_source(project_id)
    saved = Path(str(copy) + ".ann")
    if source == "built" and saved.is_dir():  # kept for the next run (its stamps are the corpus's)
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(saved, kept)
    return source


def _calls(n: int, ids: list[str], seed: int = 7) -> dict[str, list[dict[str, Any]]]:
    qs = [q for _, q in corpus.queries(seed, n)]
    # recall_context's own queries: after a recall of the same words its query vector would be kept
    others = [q for _, q in corpus.queries(seed + 1, n)]
    docs = corpus.generate(corpus.CorpusParams(2 * n + 50, seed + 3))
    more = corpus.generate(corpus.CorpusParams(n + 50, seed + 4))
    again = corpus.generate(corpus.CorpusParams(n + 50, seed + 5))
    step = max(1, len(ids) // (4 * n + 1))
    picked = ids[::step]
    return {
        "memory_search": [{"q": q} for q in qs],
        "search_memory": [{"query": q} for q in qs],
        "recall": [{"query": q} for q in qs],
        "recall_context": [{"query": q} for q in others],
        "memory_get": [{"id": picked[i]} for i in range(n)],
        "memory_history": [{"id": picked[n + i]} for i in range(n)],
        "memory_add": [{"content": d.content, "kind": d.kind, "tags": d.tags} for d in docs[:n]],
        SPACED: [{"content": d.content, "kind": d.kind, "tags": d.tags} for d in more[:n]],
        AFTER: [{"query": q} for _, q in corpus.queries(seed + 2, n)],  # queries not asked before
        BEFORE_AFTER: [{"content": d.content, "kind": d.kind, "tags": d.tags} for d in again[:n]],
        "memory_update": [{"id": picked[i], "content": docs[n + i].content} for i in range(n)],
        "memory_delete": [{"id": picked[2 * n + i]} for i in range(n)],
        "forget": [{"reference": picked[3 * n + i]} for i in range(n)],
    }


def run(size: int, n: int, wait_s: float, source: Path | None = None) -> dict[str, Any]:
    from bench import callsplit

    embedder = os.environ.setdefault("MNEMO_EMBEDDER", "minilm")
    db = source or callsplit.prepared_corpus(size, embedder)
    kept = db.with_suffix(".ann")
    with sqlite3_connect(db) as conn:
        ids = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM memories WHERE team_id IS NULL AND expires_at IS NULL ORDER BY seq LIMIT ?",
                (max(8 * n, 2000),),
            )
        ]
    calls = _calls(n, ids)
    warmup = max(1, n // 10)
    with tempfile.TemporaryDirectory(prefix="mnemo-every-tool-") as tmp:
        copy = callsplit.working_copy(db, Path(tmp))
        if kept.is_dir():
            shutil.copytree(kept, Path(str(copy) + ".ann"))
        svc, caller = _service(copy)
        # as ``mnemo mcp`` serves (api/mcp/stdio.py): the vectors made after an answer are stored by
        # the thread that serves the calls, between them, and once none waits the backend's own work
        # is done (SQLite's checkpoint: ``Service.between``); a tree from before those: the vectors
        # by the daemon, or handed over without the idle step
        between = getattr(svc, "between", None)
        if between is None and hasattr(svc.embed_after, "hand_over"):
            between = svc.embed_after
        idle = getattr(between, "idle", None)
        if between is not None:
            between.hand_over(lambda: None)
        graph = _graph(svc, caller, kept, copy, wait_s)
        for name in READS:  # the first call of each tool, outside the counted ones
            svc.invoke(name, caller, calls[name][0])
        from mnemo import coldstart

        coldstart.freeze()
        load = [os.getloadavg()[0]]
        samples: dict[str, dict[str, list[float]]] = {
            name: {"wall": [], "thread": [], "process": []} for name in (*READS, *WRITES, SPACED, AFTER)
        }
        steps = [(i, name) for i in range(n) for name in READS] + [(i, name) for name in WRITES for i in range(n)]
        steps += [(i, SPACED) for i in range(n)]
        steps += [(i, name) for i in range(n) for name in (BEFORE_AFTER, AFTER)]
        clock, thread_clock, process_clock = time.perf_counter, time.thread_time, time.process_time
        stored: list[float] = []  # thread CPU of storing the vectors ready between two calls
        tidied: list[float] = []  # wall time of the backend's idle work that ran (a checkpoint)
        for i, name in steps:
            if name in (SPACED, AFTER) and svc.embed_after is not None:
                svc.embed_after.drain(60)
            if between is not None:
                t0 = thread_clock()
                if between.write_ready():
                    stored.append(thread_clock() - t0)
            if idle is not None:
                w0 = clock()
                if idle():
                    tidied.append(clock() - w0)
            if name == BEFORE_AFTER:
                svc.invoke("memory_add", caller, calls[name][i])
                continue
            w0, t0, p0 = clock(), thread_clock(), process_clock()
            svc.invoke("recall" if name == AFTER else name.split()[0], caller, calls[name][i])
            wall, thread, process = clock() - w0, thread_clock() - t0, process_clock() - p0
            if i >= warmup:
                one = samples[name]
                one["wall"].append(wall)
                one["thread"].append(thread)
                one["process"].append(process)
        load.append(os.getloadavg()[0])
        if svc.embed_after is not None:
            svc.embed_after.drain(120)
        svc.ports.close()
    return {
        "size": size,
        "embedder": embedder,
        "calls_per_tool": n,
        "warmup": warmup,
        "graph": graph,
        "corpus": db.name,
        "load_average": load,
        "tools": {
            name: {measure: summary_ms(values) for measure, values in one.items()} for name, one in samples.items()
        },
        "vectors_stored_between_calls": summary_ms(stored) if stored else None,
        "idle_work_between_calls": {"supported": idle is not None, **(summary_ms(tidied) if tidied else {})},
    }


def sqlite3_connect(path: Path) -> Any:
    import sqlite3

    return sqlite3.connect(path)


def markdown(res: dict[str, Any]) -> str:
    lines = [
        f"# Every tool in process: {res['size']:,} memories, MNEMO_EMBEDDER={res['embedder']}",
        "",
        f"`{res['command']}` ({res['date']}; commit {res['commit']}; the code of `{res['mnemo']}`; "
        f"corpus `{res.get('corpus', '?')}`). "
        f"{res['calls_per_tool']} calls per tool, "
        f"the first {res['warmup']} not counted; the reads interleaved call by call, then each write in a block; "
        f"the project's HNSW graph: {res['graph'] or 'none (exact search)'}; load average "
        f"{res['load_average'][0]:.2f} before, {res['load_average'][1]:.2f} after, on this shared 2-core machine. "
        "CPU: the calling thread's (the call's own) and the process's (all threads). ms:",
        "",
        "| tool | wall p50 | wall p99 | thread CPU p50 | thread CPU p99 | process CPU p50 | process CPU p99 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, one in res["tools"].items():
        w, t, p = one["wall"], one["thread"], one["process"]
        cells = [w["p50_ms"], w["p99_ms"], t["p50_ms"], t["p99_ms"], p["p50_ms"], p["p99_ms"]]
        lines.append(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
    stored = res.get("vectors_stored_between_calls")
    lines.append("")
    if stored:
        lines.append(
            f"Vectors stored by the calling thread between calls (as `mnemo mcp` does while it waits): {stored['n']} "
            f"times, thread CPU p50 {stored['p50_ms']} ms, p99 {stored['p99_ms']} ms."
        )
    else:
        lines.append("Vectors stored by the embedding thread (this tree does not hand them over).")
    idle = res.get("idle_work_between_calls") or {}
    if idle.get("n"):
        lines.append(
            f"The backend's work between calls (`Ports.idle`, as `mnemo mcp` does once no message waits: SQLite's "
            f"checkpoint of its log): {idle['n']} times, wall p50 {idle['p50_ms']} ms, max {idle['max_ms']} ms."
        )
    elif idle.get("supported"):
        lines.append("The backend's work between calls (`Ports.idle`): none fell due.")
    else:
        lines.append("No work between calls besides the vectors (this tree checkpoints inside its writes).")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.every_tool")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--graph-wait", type=float, default=900.0, help="seconds to wait for the HNSW graph")
    parser.add_argument("--db", type=Path, help="a corpus file to copy instead of callsplit's")
    parser.add_argument("--label", default="run")
    a = parser.parse_args(argv)
    from mnemo.local.cli import apply_library_defaults

    apply_library_defaults()  # as ``mnemo mcp`` runs, before numpy loads
    res = run(a.size, a.calls, a.graph_wait, a.db)
    resultfiles.stamp(res, "python -m bench.every_tool " + " ".join(argv))
    import mnemo

    res["mnemo"] = str(Path(mnemo.__file__).resolve().parent)  # the tree measured (PYTHONPATH may name another)
    resultfiles.write(res, "every-tool", a.label, markdown(res))


if __name__ == "__main__":
    main()
