"""Retrieval latency in process: ``Service.invoke`` for every retrieval tool the registry holds,
at each corpus size, over the documented query mix (``bench.corpus.queries``).

A retrieval tool is any read-only tool of ``mnemo.service.catalog.TOOLS`` whose arguments take a
free-text ``q`` or ``query``; tools added later (search_memory, recall, recall_context) are
picked up without changes here. Each tool runs with its default limit, as a client that passes
only the query would.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import corpus
from bench.stats import summary_ms

QUERY_FIELDS = ("q", "query")


#: recall's modes measured besides its default (hybrid), as ``tool:mode``: the cost of meaning is
#: the default's figure against ``:lexical`` in the same run
MODES = {"recall": ("lexical",), "recall_context": ("lexical",)}


def retrieval_tools() -> list[tuple[str, str]]:
    """(tool name, query argument) for every registered free-text retrieval tool, and
    ``tool:mode`` for the modes of :data:`MODES`."""
    from mnemo.service.catalog import TOOLS

    found = []
    for name, tool in TOOLS.items():
        if not tool.read_only:
            continue
        fields = tool.args_model.model_fields
        for field in QUERY_FIELDS:
            if field in fields:
                found.append((name, field))
                found.extend((f"{name}:{mode}", field) for mode in MODES.get(name, ()))
                break
    return found


def hits_of(result: Any) -> int:
    for attr in ("memories", "results", "references", "items"):
        value = getattr(result, attr, None)
        if isinstance(value, list):
            return len(value)
    return -1


def open_service(db_path: Path, **options: Any) -> tuple[Any, Any]:
    """A Service over a copy of a cached corpus, and the benchmark key's caller."""
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.embedding import default_embedder
    from mnemo.service.pipeline import Service

    options.setdefault("embedder", default_embedder())
    svc = Service(SqliteBackend(db_path), **options)
    return svc, svc.authenticate(f"Bearer {corpus.BENCH_KEY}")


def measure_tool(svc: Any, caller: Any, tool: str, field: str, qs: list[tuple[str, str]], warmup: int) -> dict:
    tool, _, mode = tool.partition(":")
    extra = {"mode": mode} if mode else {}
    for _, q in qs[:warmup]:
        svc.invoke(tool, caller, {field: q, **extra})
    by_class: dict[str, list[float]] = defaultdict(list)
    hits: dict[str, list[int]] = defaultdict(list)
    cpu_by_class: dict[str, list[float]] = defaultdict(list)
    every: list[float] = []
    cpu: list[float] = []
    clock, cpu_clock = time.perf_counter, time.thread_time
    for cls, q in qs:
        started, cpu_started = clock(), cpu_clock()
        result = svc.invoke(tool, caller, {field: q, **extra}).result
        elapsed = clock() - started
        cpu.append(cpu_clock() - cpu_started)
        cpu_by_class[cls].append(cpu[-1])
        every.append(elapsed)
        by_class[cls].append(elapsed)
        hits[cls].append(hits_of(result))
    return {
        "all": summary_ms(every),
        # CPU time of this thread: what the call cost, less the waits for a CPU on a busy machine
        "cpu": summary_ms(cpu),
        "classes": {
            cls: {
                **summary_ms(samples),
                "cpu": summary_ms(cpu_by_class[cls]),
                "mean_hits": round(sum(hits[cls]) / len(hits[cls]), 1),
            }
            for cls, samples in sorted(by_class.items())
        },
    }


def run(sizes: list[int], n_queries: int, n_stopword: int, workdir: Path, seed: int = 7) -> dict:
    tools = retrieval_tools()
    out: dict[str, Any] = {"tools": [t for t, _ in tools], "query_mix": dict(corpus.QUERY_MIX), "sizes": {}}
    qs = corpus.queries(seed, n_queries)
    worst = corpus.stopword_queries(seed, n_stopword)
    for size in sizes:
        db = corpus.build_db(corpus.CorpusParams(size, seed))
        path = corpus.working_copy(db, workdir / f"search-{size}")
        svc, caller = open_service(path)
        per_tool: dict[str, Any] = {}
        try:
            for tool, field in tools:
                result = measure_tool(svc, caller, tool, field, qs, warmup=min(50, len(qs)))
                result["stopword"] = measure_tool(svc, caller, tool, field, worst, warmup=2)["all"]
                per_tool[tool] = result
        finally:
            svc.ports.close()
        out["sizes"][str(size)] = {
            "build_s": None if db.build_s is None else round(db.build_s, 1),
            "db_mb": round(db.path.stat().st_size / 1e6, 1),
            "tools": per_tool,
        }
    return out


def strategies(size: int, n_queries: int, workdir: Path, seed: int = 7) -> dict[str, Any]:
    """Same run, same queries, same index: the SQLite index's search as it is (*bounded*: the
    best postings of each key, the threshold algorithm) against reading every posting of the
    query's keys (*exhaustive*: what scoring every match costs, as FTS5's bm25 did), taking turns
    at going first; on memory_search's queries (``all``, limit 50) and on recall's (``any``,
    prefixes, limit 20), stopword queries included."""
    from datetime import UTC, datetime

    from mnemo.backends.sqlite.index import SqliteSearchIndex
    from mnemo.ports import IndexQuery, MemoryFilter, Scope
    from mnemo.text import query_terms

    db = corpus.build_db(corpus.CorpusParams(size, seed))
    path = corpus.working_copy(db, workdir / f"strategies-{size}")
    svc, caller = open_service(path)
    bounded = svc.ports.index
    exhaustive = SqliteSearchIndex(bounded.db, min_size=10**9, max_size=10**9)
    scope = Scope(db.workspace_id, db.project_id)
    flt = MemoryFilter(now=datetime.now(UTC), visible_teams=frozenset(caller.team_ids))
    mix = [*corpus.queries(seed, n_queries), *corpus.stopword_queries(seed, 20)]
    out: dict[str, Any] = {"size": size, "queries": len(mix)}
    clock = time.perf_counter
    try:
        for mode, limit, prefix in (("all", 50, False), ("any", 20, True)):
            queries = [IndexQuery(scope, query_terms(q, latin_prefix=prefix), mode, flt, limit) for _, q in mix]
            times: dict[str, list[float]] = {"exhaustive": [], "bounded": []}
            for i, query in enumerate(queries):
                order = ("bounded", "exhaustive") if i % 2 else ("exhaustive", "bounded")
                for name in order:
                    index = bounded if name == "bounded" else exhaustive
                    t0 = clock()
                    index.search(query)
                    times[name].append(clock() - t0)
            out[mode] = {name: summary_ms(samples) for name, samples in times.items()}
    finally:
        svc.ports.close()
    return out
