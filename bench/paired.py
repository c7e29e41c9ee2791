"""Two source trees' ``Service.invoke`` side by side, call by call: a before/after of a change to the
service, in process, on the callsplit corpus (``bench.callsplit.prepared_corpus``: 10,000 memories
with the vectors of ``MNEMO_EMBEDDER``, default minilm), each tree in a process of its own.

    python -m bench.paired --trees /work/main,/work/wt-perf [--size 10000] [--calls 200]
                           [--tools recall,recall_context] [--rounds 2] [--label NAME]

Each tree runs in a child process (``PYTHONPATH`` = this bench's tree, then the measured tree's
``shared/``, so the child imports that tree's ``mnemo``) over its own copy of the corpus, with
``bench.callsplit_hooks``' timers installed (the same stages as callsplit: embedding, index,
records, tool, ...) and the library defaults ``mnemo mcp`` runs with (``OPENBLAS_NUM_THREADS=1``).
The parent sends the same call to each child in turn, alternating which goes first, so load drift
on this shared 2-core machine hits both alike. ``--rounds`` repeats the sequence with the queries
of the next seed (the first round's are callsplit's, ``corpus.queries(7, calls)``): a repeated
query's vector is kept, so the same queries again would embed nothing.

Each call's wall time and the process's CPU time (all the child's threads: a change may move work
to a thread of its own) are measured in the child around ``Service.invoke``; each answer is
hashed (``model_dump(mode="json")``, sorted keys): equal digests say every answer was the same.

Writes ``bench/results/<date>-paired-<label>.{json,md}``: per tool and tree, the CPU and wall
medians (and p99) over the counted calls, the stage medians in CPU time, and the answers' digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import resultfiles

ROOT = Path(__file__).resolve().parent.parent


# -- the child: one tree's service, driven over stdin/stdout --


def child(db_path: str) -> None:
    """Serve calls read from stdin (one JSON line each: ``{"tool", "args"}``), answer one JSON line
    each: wall and CPU seconds, the answer's digest and the stages' CPU seconds."""
    from bench import callsplit_hooks as hooks

    hooks.install(None, stdio=False)
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.embedding import build_embedder
    from mnemo.service.pipeline import Service

    from bench import corpus

    embedder = build_embedder(os.environ.get("MNEMO_EMBEDDER", "minilm"))
    if embedder is not None and hasattr(embedder, "load"):
        embedder.load()
    svc = Service(SqliteBackend(db_path), embedder=embedder)
    caller = svc.authenticate(f"Bearer {corpus.BENCH_KEY}")
    svc.invoke("recall", caller, {"query": "warm"})
    from mnemo import coldstart

    coldstart.freeze()  # as a warm ``mnemo mcp`` or ``mnemo serve`` worker does
    # the process's CPU time: a call's work on another thread of it (the query's vector) counts
    clock, cpu_clock = time.perf_counter, time.process_time
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the pipe
    for line in sys.stdin:
        call = json.loads(line)
        record = hooks._new_record()
        w0, c0 = clock(), cpu_clock()
        result = svc.invoke(call["tool"], caller, call["args"]).result
        wall, cpu = clock() - w0, cpu_clock() - c0
        answer = json.dumps(result.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        stages = dict(record["cpu"])
        hooks.STATE.record = None
        out.write(
            json.dumps(
                {"wall": wall, "cpu": cpu, "digest": hashlib.sha256(answer.encode()).hexdigest(), "stages": stages}
            )
            + "\n"
        )
        out.flush()


class _Child:
    def __init__(self, tree: Path, db: Path) -> None:
        from mnemo.local.cli import LIBRARY_DEFAULTS

        env = {
            **LIBRARY_DEFAULTS,  # as ``mnemo mcp`` and ``mnemo serve`` run (OPENBLAS_NUM_THREADS=1)
            **os.environ,
            # this tree's bench (the child's code and timers), the measured tree's mnemo
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(tree / "shared")]),
            "MNEMO_EMBEDDER": os.environ.get("MNEMO_EMBEDDER", "minilm"),
        }
        self.tree = tree
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.paired", "child", str(db)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"tool": tool, "args": args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the child of {self.tree} ended")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


# -- the parent --


def _calls(tools: list[str], n: int, seed: int = 7) -> list[tuple[str, dict[str, Any]]]:
    from bench import corpus

    qs = [q for _, q in corpus.queries(seed, n)]
    field = {"memory_search": "q"}
    return [(tool, {field.get(tool, "query"): q}) for q in qs for tool in tools]


def run(trees: list[Path], size: int, n: int, tools: list[str], rounds: int, warmup: int) -> dict[str, Any]:
    from bench import callsplit

    db = callsplit.prepared_corpus(size, os.environ.setdefault("MNEMO_EMBEDDER", "minilm"))
    # each round its own queries (the seed after the last's): a query's vector is kept (256 of
    # them), so a round of the same queries would embed nothing
    rounds_calls = [_calls(tools, n, seed=7 + r) for r in range(rounds)]
    per: dict[str, dict[str, list[dict[str, Any]]]] = {str(t): {tool: [] for tool in tools} for t in trees}
    digests: dict[str, dict[str, Any]] = {str(t): {tool: hashlib.sha256() for tool in tools} for t in trees}
    with tempfile.TemporaryDirectory(prefix="mnemo-paired-") as tmp:
        children = []
        for i, tree in enumerate(trees):
            copy = callsplit.working_copy(db, Path(tmp) / f"t{i}")
            children.append(_Child(tree, copy))
        try:
            for r, calls in enumerate(rounds_calls):
                seen: dict[str, int] = {}
                for j, (tool, args) in enumerate(calls):
                    k = seen[tool] = seen.get(tool, -1) + 1
                    order = children if (j + r) % 2 == 0 else children[::-1]
                    for c in order:
                        got = c.call(tool, args)
                        digests[str(c.tree)][tool].update(got["digest"].encode())
                        if k >= warmup:
                            per[str(c.tree)][tool].append(got)
        finally:
            for c in children:
                c.close()
    out: dict[str, Any] = {"size": size, "calls": n, "rounds": rounds, "warmup": warmup, "trees": {}}
    for tree, by_tool in per.items():
        out["trees"][tree] = {}
        for tool, rows in by_tool.items():
            stages: dict[str, float] = {}
            names = sorted({s for r in rows for s in r["stages"]})
            for s in names:
                stages[s] = round(statistics.median(r["stages"].get(s, 0.0) for r in rows) * 1000, 3)
            cpu = sorted(r["cpu"] for r in rows)
            wall = sorted(r["wall"] for r in rows)
            out["trees"][tree][tool] = {
                "cpu_p50_ms": round(statistics.median(cpu) * 1000, 3),
                "cpu_p99_ms": round(cpu[min(len(cpu) - 1, int(0.99 * len(cpu)))] * 1000, 3),
                "wall_p50_ms": round(statistics.median(wall) * 1000, 3),
                "wall_p99_ms": round(wall[min(len(wall) - 1, int(0.99 * len(wall)))] * 1000, 3),
                "stages_cpu_p50_ms": stages,
                "digest": digests[tree][tool].hexdigest()[:16],
            }
    return out


def _name(tree: str) -> str:
    return Path(tree).name


def markdown(res: dict[str, Any], command: str) -> str:
    from bench.report import _table

    trees = list(res["trees"])
    tools = list(res["trees"][trees[0]])
    lines = [
        f"# Paired in process: {res['size']} memories, MNEMO_EMBEDDER={res['embedder']}",
        "",
        f"`{command}` ({res['date']}). {res['calls']} calls per tool × {res['rounds']} rounds (the first "
        f"{res['warmup']} of each round not counted), each call made by each tree in turn, alternating which "
        "goes first; `Service.invoke` in the tree's own process; CPU is the process's (all its threads). Trees: "
        + ", ".join(f"{_name(t)} = `{t}` at {res['commits'][t]}" for t in trees)
        + ".",
        "",
        "| tool | tree | CPU p50 | CPU p99 | wall p50 | wall p99 | answers' digest |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for tool in tools:
        for t in trees:
            s = res["trees"][t][tool]
            lines.append(
                f"| {tool} | {_name(t)} | {s['cpu_p50_ms']} | {s['cpu_p99_ms']} | {s['wall_p50_ms']} "
                f"| {s['wall_p99_ms']} | {s['digest']} |"
            )
    lines += ["", "Stage medians, ms of CPU time:", ""]
    for tool in tools:
        names = sorted({n for t in trees for n in res["trees"][t][tool]["stages_cpu_p50_ms"]})
        rows = [[n, *[res["trees"][t][tool]["stages_cpu_p50_ms"].get(n, "") for t in trees]] for n in names]
        lines += [f"{tool}:", "", *_table(["stage", *[_name(t) for t in trees]], rows), ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "child":
        return child(argv[1])
    parser = argparse.ArgumentParser(prog="python -m bench.paired")
    parser.add_argument("--trees", required=True, help="two (or more) source trees, comma-separated")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--tools", default="recall,recall_context")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--label", default="run")
    a = parser.parse_args(argv)
    trees = [Path(t).resolve() for t in a.trees.split(",")]
    res = run(trees, a.size, a.calls, a.tools.split(","), a.rounds, warmup=min(20, a.calls // 10))
    res["embedder"] = os.environ["MNEMO_EMBEDDER"]
    res["commits"] = {str(t): resultfiles.commit(t) for t in trees}
    command = "python -m bench.paired " + " ".join(argv)
    resultfiles.write(resultfiles.stamp(res, command), "paired", a.label, markdown(res, command))
    return None


if __name__ == "__main__":
    main()
