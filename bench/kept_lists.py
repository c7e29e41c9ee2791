"""The SQLite index's kept posting lists (``backends/sqlite/kept.py``) against SQLite's own
co-occurrence lookups, on the word searches that two tools really make at scale.

    python -m bench.kept_lists [--size 100000] [--calls 200] [--rounds 3] [--db FILE] [--label NAME]

The service is ``bench.every_tool``'s, over a copy of callsplit's corpus (``--db``: another corpus
file to copy, e.g. one an older tree built: it is migrated when opened), its HNSW graph ready. Its recall_context calls
and memory_add calls (every_tool's, ``calls`` each) run once, and every word search they make
(``SearchIndex.search``: recall_context's pool, memory_add's ``similar``) is recorded. Then each
recorded search runs again ``rounds`` times with the index's kept lists and without them
(``index.kept = None``: the lookups in SQLite), the two in turn, on the same database: per search
the least of its rounds (thread CPU), and whether both answered the same (the hits' ids and
scores) — a search's answer must not depend on where its lookups ran. The first round with the
lists includes reading the lists not kept yet.

Then what ``postings.LOAD_PER_LOOKUP`` rests on, through the index's own code: the CPU per posting of
reading a list whole into the kept lists (``SqlPostings._lists``, cold), and per lookup of SQLite's
co-occurrence join (``SqlPostings.cooccurring`` without kept lists: one lookup per driver posting),
for the project's keys of 5,000-20,000 postings (at most 5; least of 5 rounds).

Writes ``bench/results/<date>-kept-lists-<label>.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import resultfiles
from bench.stats import summary_ms

TOOLS = ("recall_context", "memory_add")


def run(size: int, n: int, rounds: int, db: Path | None) -> dict[str, Any]:
    from bench import callsplit, every_tool

    embedder = os.environ.setdefault("MNEMO_EMBEDDER", "minilm")
    source = db or callsplit.prepared_corpus(size, embedder)
    with tempfile.TemporaryDirectory(prefix="mnemo-kept-lists-") as tmp:
        copy = callsplit.working_copy(source, Path(tmp))
        graph = source.with_suffix(".ann")
        if graph.is_dir():
            shutil.copytree(graph, Path(str(copy) + ".ann"))
        svc, caller = every_tool._service(copy)
        every_tool._graph(svc, caller, graph, copy, 900)  # as every_tool: the HNSW graph ready first
        index = svc.ports.index
        kept = index.kept
        ids = [
            row[0]
            for row in index.db.conn().execute(
                "SELECT id FROM memories WHERE team_id IS NULL AND expires_at IS NULL ORDER BY seq LIMIT ?",
                (max(8 * n, 2000),),
            )
        ]
        calls = every_tool._calls(n, ids)
        recorded: dict[str, list[Any]] = {tool: [] for tool in TOOLS}
        search = index.search
        for tool in TOOLS:
            index.search = lambda query, into=recorded[tool]: (into.append(query), search(query))[1]
            for args in calls[tool]:
                svc.invoke(tool, caller, args)
            if svc.embed_after is not None:
                svc.embed_after.drain(300)
        index.search = search
        out: dict[str, Any] = {}
        for tool, queries in recorded.items():
            times: dict[str, list[list[float]]] = {"sqlite": [], "kept": []}
            answers: dict[str, list[Any]] = {}
            for _ in range(rounds):
                for mode in ("sqlite", "kept"):
                    index.kept = kept if mode == "kept" else None
                    one, got = [], []
                    for query in queries:
                        t0 = time.thread_time()
                        hits = search(query)
                        one.append(time.thread_time() - t0)
                        got.append([(h.record.id, round(h.score, 9)) for h in hits])
                    times[mode].append(one)
                    answers.setdefault(mode, got)
            out[tool] = {
                "searches": len(queries),
                "same_answers": sum(a == b for a, b in zip(answers["sqlite"], answers["kept"], strict=True)),
                **{mode: summary_ms([min(r) for r in zip(*rs, strict=True)]) for mode, rs in times.items()},
                **{
                    f"{mode}_sum_ms": round(sum(min(r) for r in zip(*rs, strict=True)) * 1000, 1)
                    for mode, rs in times.items()
                },
            }
        index.kept = kept
        held = {"lists": len(kept), "postings": kept.held} if kept is not None else None
        costs = _read_costs(index.db.conn(), recorded["recall_context"][0].scope)
        svc.ports.close()
    return {
        "size": size,
        "embedder": embedder,
        "calls": n,
        "rounds": rounds,
        "corpus": source.name,
        "kept": held,
        "tools": out,
        "costs": costs,
    }


def _read_costs(conn: Any, scope: Any) -> dict[str, Any]:
    """µs of CPU per posting read whole into kept lists, and per co-occurrence lookup in SQLite."""
    from mnemo.backends.sqlite.kept import KeptLists
    from mnemo.backends.sqlite.postings import SqlPostings
    from mnemo.backends.sqlite.topk import Term

    rows = conn.execute(
        "SELECT id, df, rev FROM index_terms WHERE project_id = ? AND df BETWEEN 5000 AND 20000 ORDER BY id LIMIT 6",
        (scope.project_id,),
    ).fetchall()
    keys, driver = [tuple(r) for r in rows[:-1]], tuple(rows[-1])
    params = (scope.workspace_id, scope.project_id)
    read, looked = [], []
    for key, df, rev in keys:
        plan = [Term("k", {key: df}), Term("d", {driver[0]: driver[1]})]
        revs = {key: rev, driver[0]: driver[2]}
        best_read = best_look = float("inf")
        for _ in range(5):
            source = SqlPostings(conn, "1", params, KeptLists(), plan, revs)  # cold: nothing kept
            t0 = time.thread_time()
            source._lists([key], budget=df)
            best_read = min(best_read, time.thread_time() - t0)
            plain = SqlPostings(conn, "1", params, None, plan, revs)
            t0 = time.thread_time()
            for _ in plain.cooccurring([driver[0]], [[key]], 1, every=False):
                pass
            best_look = min(best_look, time.thread_time() - t0)
        read.append(best_read / df * 1e6)
        looked.append(best_look / driver[1] * 1e6)
    return {
        "keys": [df for _, df, _ in keys],
        "driver_postings": driver[1],
        "read_us_per_posting": [round(v, 3) for v in read],
        "lookup_us_per_lookup": [round(v, 3) for v in looked],
    }


def markdown(res: dict[str, Any]) -> str:
    lines = [
        f"# Kept posting lists vs SQLite's lookups: {res['size']:,} memories",
        "",
        f"`{res['command']}` ({res['date']}; commit {res['commit']}; corpus `{res['corpus']}`). The word searches of "
        f"{res['calls']} calls of each tool, each run {res['rounds']} times per way, the two ways in turn; per search "
        "the least thread CPU of its rounds. ms:",
        "",
        "| tool's searches | n | same answers | way | p50 | p90 | p99 | max | sum |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for tool, one in res["tools"].items():
        for mode in ("sqlite", "kept"):
            s = one[mode]
            lines.append(
                f"| {tool} | {one['searches']} | {one['same_answers']} | {mode} | {s['p50_ms']} | {s['p90_ms']} | "
                f"{s['p99_ms']} | {s['max_ms']} | {one[mode + '_sum_ms']} |"
            )
    if res["kept"]:
        lines += ["", f"Kept at the end: {res['kept']['lists']} lists, {res['kept']['postings']:,} postings."]
    c = res.get("costs")
    if c:
        keys = ", ".join(f"{n:,}" for n in c["keys"])
        read = ", ".join(map(str, c["read_us_per_posting"]))
        looked = ", ".join(map(str, c["lookup_us_per_lookup"]))
        lines += [
            "",
            f"Reading a list whole into the kept lists (keys of {keys} postings), µs of CPU per posting: {read}; "
            f"SQLite's co-occurrence join of each with a driver of {c['driver_postings']:,} postings, µs per "
            f"lookup: {looked}.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.kept_lists")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", type=Path, help="a corpus file to copy instead of callsplit's")
    parser.add_argument("--label", default="run")
    a = parser.parse_args(argv)
    from mnemo.local.cli import apply_library_defaults

    apply_library_defaults()
    res = run(a.size, a.calls, a.rounds, a.db)
    resultfiles.stamp(res, "python -m bench.kept_lists " + " ".join(argv))
    resultfiles.write(res, "kept-lists", a.label, markdown(res))


if __name__ == "__main__":
    main()
