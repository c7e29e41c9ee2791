"""The slowest valid request of each tool, in process (``Service.invoke``), at 10,000 memories.

    python -m bench.worst                 # writes bench/results/worst.md and worst.json
    python -m bench.worst --size 1000 --repeat 5

For every tool this builds candidate requests at the edges of what its schema allows — the
commonest words of the corpus, the most query terms a query keeps (``text.MAX_QUERY_TERMS``), every
Latin term a prefix (recall), the largest ``limit``, ``max_items`` and ``max_tokens``, ``explain``,
``prefer_working``, the most tags, the costliest LIKE patterns (``bench.like``), content of 4096
bytes (English words, or CJK text, which analyses into the most terms), a team filter, a request
that ends in a ``no_match`` diagnosis — runs each ``--repeat`` times on the bench corpus
(``bench.corpus``, the same one as ``bench.run``), and reports the slowest candidate by median.
Target: none over 50 ms. The write tools run on a private copy of the corpus and each repetition
acts on its own memory, so none is measured against a cache.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import corpus

TARGET_MS = 50.0
RESULTS = corpus.ROOT / "bench" / "results"

Request = dict[str, Any]
#: (candidate name, a function of the repetition number giving the arguments)
Candidates = list[tuple[str, Callable[[int], Request]]]


def _common_words(n: int) -> list[str]:
    """The ``n`` most frequent terms of the corpus's English (function words head the ranking)."""
    words = [*corpus.FUNCTION_WORDS, *corpus.CONTENT_WORDS]
    return list(dict.fromkeys(words))[:n]


def _cjk_content() -> str:
    """4096 bytes of Chinese text: 1365 characters, 1364 overlapping bigrams to index."""
    text = "".join(corpus.CHINESE_PHRASES)
    while len(text.encode()) < 4096:
        text += text
    return text.encode()[:4095].decode("utf-8", "ignore")


def _english_content() -> str:
    text = " ".join(_common_words(200))
    while len(text.encode()) < 4096:
        text += " " + text
    return text.encode()[:4096].decode("ascii", "ignore").rstrip()


def candidates(top_tags: list[str], far: str) -> dict[str, Candidates]:
    from mnemo.like import MAX_LIKE_LENGTH
    from mnemo.text import MAX_QUERY_TERMS

    from bench.like import worst_patterns

    common = _common_words(MAX_QUERY_TERMS)
    one = common[0]
    many = " ".join(common)
    # the costliest patterns the schema admits, and the selective ones that force a full scan
    like = [*worst_patterns(MAX_LIKE_LENGTH)[:3], "%/decisions", "acme/%", "%zz%"]
    tags = top_tags[:20]
    content = {"english": _english_content(), "cjk": _cjk_content()}
    big = {
        "kind": "k" * 64,
        "tags": [f"{t}-{'x' * 40}"[:64] for t in tags] + [f"tag-{i:02d}-{'y' * 56}" for i in range(20 - len(tags))],
        "path": "p/" * 255 + "pp",
        "source": "s" * 128,
        "expires_at": far,
    }
    out: dict[str, Candidates] = {
        "memory_search": [
            ("commonest word, limit 100", lambda i: {"q": one, "limit": 100}),
            (f"{MAX_QUERY_TERMS} commonest words, limit 100", lambda i: {"q": many, "limit": 100}),
            ("listing, 20 tags nobody has all of", lambda i: {"q": "", "tags": tags, "limit": 100}),
            ("commonest word, 20 tags, a kind", lambda i: {"q": one, "tags": tags, "kind": "note", "limit": 100}),
            ("listing, limit 100", lambda i: {"q": "", "limit": 100}),
        ],
        "memory_get": [("one memory", lambda i: {"id": "__existing__"})],
    }
    for tool, limit_field, limit in (
        ("search_memory", "limit", 50),
        ("recall", "limit", 50),
        ("recall_context", "max_items", 100),
    ):
        extra: Request = {"max_tokens": 50000} if tool == "recall_context" else {"explain": True}
        rows: Candidates = [
            ("commonest word", lambda i, lf=limit_field, n=limit, x=extra: {"query": one, lf: n, **x}),
            (
                f"{MAX_QUERY_TERMS} commonest words",
                lambda i, lf=limit_field, n=limit, x=extra: {"query": many, lf: n, **x},
            ),
            (
                f"{MAX_QUERY_TERMS} commonest words, prefer_working",
                lambda i, lf=limit_field, n=limit, x=extra: {"query": many, lf: n, "prefer_working": True, **x},
            ),
        ]
        for pattern in like:
            rows.append(
                (
                    f"commonest words, path_filter {pattern[:24]!r}…",
                    lambda i, lf=limit_field, n=limit, x=extra, p=pattern: {
                        "query": many,
                        lf: n,
                        "path_filter": p,
                        "memory_type": p[:64] if len(p) <= 64 else "%e%",
                        **x,
                    },
                )
            )
        if tool == "search_memory":
            rows.append(
                (
                    "commonest words, team filter",
                    lambda i, lf=limit_field, n=limit, x=extra: {"query": many, lf: n, "team_id": "team-a", **x},
                )
            )
        if tool == "recall_context":
            rows.append(
                ("commonest word, output_json", lambda i: {"query": one, "max_items": 100, "output_json": True})
            )
        out[tool] = rows
    out["memory_add"] = [
        (f"{name} content, every field at its limit", lambda i, c=c: {"content": c, **big})
        for name, c in content.items()
    ] + [
        (
            "CJK content, every field at its limit, Idempotency-Key",
            lambda i: {"content": content["cjk"], **big, "__idempotency_key__": f"worst-{i}-" + "k" * 200},
        )
    ]
    out["memory_update"] = [
        (
            f"{name} content replacing 4096 bytes, every field",
            lambda i, c=c: {"id": "__fresh__", "content": c, **{k: v for k, v in big.items() if k != "source"}},
        )
        for name, c in content.items()
    ]
    out["memory_delete"] = [("a memory of 4096 bytes of CJK", lambda i: {"id": "__fresh__"})]
    out["forget"] = [("a memory of 4096 bytes of CJK", lambda i: {"reference": "__fresh__", "reason": "r" * 1024})]
    return out


def run(size: int, repeat: int, workdir: Path, seed: int = 7, only: set[str] | None = None) -> dict[str, Any]:
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.embedding import default_embedder
    from mnemo.service.catalog import TOOLS
    from mnemo.service.pipeline import Service

    db = corpus.build_db(corpus.CorpusParams(size, seed))
    path = corpus.working_copy(db, workdir / f"worst-{size}")
    svc = Service(SqliteBackend(path), embedder=default_embedder())
    caller = svc.authenticate(f"Bearer {corpus.BENCH_ADMIN_KEY}")
    far = (datetime.now(UTC) + timedelta(days=3650)).strftime("%Y-%m-%dT%H:%M:%SZ")
    tag_counts: dict[str, int] = {}
    for row in svc.ports.store.recent(_scope(svc, db), _filter(), 100):
        for tag in row.tags:
            tag_counts[tag] = tag_counts.get(tag, 0) + 1
    top_tags = sorted(tag_counts, key=lambda t: -tag_counts[t]) or list(corpus.TAGS[:20])
    existing = svc.ports.store.recent(_scope(svc, db), _filter(), 1)[0].id
    cjk = _cjk_content()

    def fresh() -> str:
        return svc.invoke("memory_add", caller, {"content": cjk, "tags": top_tags[:20]}).result.memory.id

    out: dict[str, Any] = {"size": size, "repeat": repeat, "tools": {}}
    try:
        for tool, rows in candidates(top_tags, far).items():
            if tool not in TOOLS or (only is not None and tool not in only):
                continue
            measured = []
            for name, make in rows:
                samples, cpu, outcome = [], [], ""
                for i in range(repeat + 2):  # two warm-up runs
                    arguments = make(i)
                    key = arguments.pop("__idempotency_key__", None)
                    for field in ("id", "reference"):
                        if arguments.get(field) == "__existing__":
                            arguments[field] = existing
                        elif arguments.get(field) == "__fresh__":
                            arguments[field] = fresh()
                    try:
                        _validate(tool, arguments)
                    except ValueError as exc:  # a pydantic ValidationError
                        raise SystemExit(f"{tool} {name}: the request is not valid: {exc}") from None
                    t0, c0 = time.perf_counter(), time.thread_time()
                    result = svc.invoke(tool, caller, arguments, idempotency_key=key).result
                    elapsed, used = time.perf_counter() - t0, time.thread_time() - c0
                    if i >= 2:
                        samples.append(elapsed * 1000)
                        cpu.append(used * 1000)
                    outcome = _outcome(result)
                measured.append(
                    {
                        "request": name,
                        "median_ms": round(statistics.median(samples), 2),
                        "max_ms": round(max(samples), 2),
                        "cpu_median_ms": round(statistics.median(cpu), 2),
                        "outcome": outcome,
                    }
                )
            measured.sort(key=lambda m: -m["median_ms"])
            out["tools"][tool] = measured
    finally:
        svc.ports.close()
    return out


def _validate(tool: str, arguments: Request) -> None:
    from mnemo.service.catalog import TOOLS

    TOOLS[tool].args_model.model_validate(arguments)


def _scope(svc: Any, db: corpus.BenchDb) -> Any:
    from mnemo.ports import Scope

    return Scope(db.workspace_id, db.project_id)


def _filter() -> Any:
    from mnemo.ports import MemoryFilter

    return MemoryFilter(now=datetime.now(UTC))


def _outcome(result: Any) -> str:
    for attr in ("memories", "results", "references"):
        value = getattr(result, attr, None)
        if isinstance(value, list):
            matched = getattr(result, "no_match", None)
            return f"{len(value)} results" + (f", no_match {matched.cause}" if matched is not None else "")
    return "ok"


def render(results: dict[str, Any]) -> str:
    lines = [
        "# The slowest valid request of each tool",
        "",
        f"- command: `{results['command']}`",
        f"- date: {results['date']}; {results['machine']}",
        f"- {results['size']} memories (the bench corpus), in process (`Service.invoke` on SQLite), "
        f"median of {results['repeat']} runs after two warm-ups; target ≤ {TARGET_MS:g} ms. Wall time counts the "
        "waits for a CPU on this shared machine (compare the load average); CPU time (this thread's) is what "
        "the request itself costs.",
        "",
        "| tool | slowest request (by CPU) | CPU median ms | wall median ms | wall max ms | answer | met (CPU) "
        "| met (wall) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for tool, rows in results["tools"].items():
        worst = max(rows, key=lambda r: r["cpu_median_ms"])
        slowest_wall = max(r["median_ms"] for r in rows)
        lines.append(
            f"| {tool} | {worst['request']} | {worst['cpu_median_ms']} | {worst['median_ms']} | {worst['max_ms']} | "
            f"{worst['outcome']} | {'✅' if worst['cpu_median_ms'] <= TARGET_MS else '❌'} | "
            f"{'✅' if slowest_wall <= TARGET_MS else '❌'} ({slowest_wall}) |"
        )
    lines += ["", "Every candidate, slowest first:", ""]
    for tool, rows in results["tools"].items():
        lines.append(
            f"- **{tool}**: "
            + "; ".join(f"{r['request']} {r['cpu_median_ms']} ms CPU ({r['median_ms']} wall)" for r in rows)
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.worst")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--tools", help="comma-separated: only these tools (a partial run, not for the record)")
    args = parser.parse_args(argv)
    import os

    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Mnemo")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from bench.run import machine

    info = machine()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mnemo-worst-") as tmp:
        results = run(args.size, args.repeat, Path(tmp), only=set(args.tools.split(",")) if args.tools else None)
    results["command"] = shlex.join(["python", "-m", "bench.worst", *(sys.argv[1:] if argv is None else argv)])
    results["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    results["machine"] = (
        f"{info['nproc']} CPUs ({info['cpu']}), shared; load average {info['loadavg_start']} at start, "
        f"{[round(x, 2) for x in os.getloadavg()]} at end; Python {info['python']}, SQLite {info['sqlite']}; "
        f"code at {info['commit']}; {time.perf_counter() - started:.0f} s"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "worst.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    text = render(results)
    (RESULTS / "worst.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
