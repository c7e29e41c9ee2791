"""The worst LIKE pattern at the maximum lengths: what one match costs each engine.

    python -m bench.like                          # writes bench/results/like.md and like.json
    python -m bench.like --opensearch URL         # also times OpenSearch's wildcard query there

Patterns are the schema's limits (``mnemo.like``: 128 characters, 8 ``%``, 4 ``_`` after the first
``%``) filled in the shapes that cost most — long segments against a value made of their own
letter (the naive search's worst case), ``_`` runs after a ``%`` (OpenSearch's automaton grows
exponentially with them), every ``%`` used, letters that case-fold to three characters — plus
``--random`` random patterns within the limits. Values are the longest a field holds (a path of
512 characters; as ``ΐ``, 1536 once case-folded) in the letters the patterns use.

For each (pattern, value) it times ``mnemo.like.like_matches`` (the service's matcher: the AWS
backend's listings and every ``no_match`` explanation), SQLite's ``LIKE … ESCAPE '\\'`` as the SQLite
backend runs it (both sides case-folded) and, with ``--opensearch`` (or ``MNEMO_TEST_OPENSEARCH_URL``,
or a node started through ``tests.support.opensearch_node``), a ``wildcard`` filter on an index
holding those values (the translation the AWS backend sends). Target: the matcher ≤ 5 ms.
The replaced backtracking regular expression is timed once on the issue's own case for contrast.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import sqlite3
import statistics
import sys
import time
from datetime import UTC, datetime
from typing import Any

from bench import corpus

TARGET_MS = 5.0
RESULTS = corpus.ROOT / "bench" / "results"
LETTERS = ("a", "ΐ", "é")


def worst_patterns(longest: int | None = None) -> list[str]:
    """The costliest shapes at the limits, in ``a`` (``bench.worst`` reuses the first ones)."""
    from mnemo.like import MAX_LIKE_ANY_ONE_AFTER_RUN, MAX_LIKE_ANY_RUNS, MAX_LIKE_LENGTH

    n, runs, ones = longest or MAX_LIKE_LENGTH, MAX_LIKE_ANY_RUNS, MAX_LIKE_ANY_ONE_AFTER_RUN
    shapes = [
        "%" + "a" * (n - 3) + "b%",  # one long segment that almost matches everywhere
        "%_" + "a" * (n - 4) + "b%",  # the same, as a regular expression (it holds a _)
        "%" + "_" * ones + "a" * (n - ones - 3) + "b%",
        "%a" + "_" * ones + "b" * (n - ones - 2),  # OpenSearch: _ right after a %
        ("%a" + "_" * ones + "%b" * (runs - 1) + "b" * n)[:n],
        ("%" + "a" * ((n - runs) // runs)) * runs,  # every % used, long segments between them
        ("%" + "a" * ((n - runs) // (runs - 1)) + "b") * (runs - 1) + "%",
        ("%a_" * ones + "%" + "a" * n)[: n - 1] + "b",
        "_" * (n - 2 * runs - ones - 1) + ("%a" + "_" * ones + "%a" * (runs - 1)) + "b",
    ]
    return [s[:n] for s in shapes]


def random_patterns(count: int, seed: int = 11) -> list[str]:
    from mnemo.like import MAX_LIKE_LENGTH, like_problem

    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        n = rng.randint(MAX_LIKE_LENGTH // 2, MAX_LIKE_LENGTH)
        chars = [rng.choice("aaab") for _ in range(n)]
        for _ in range(rng.randint(1, 8)):
            chars[rng.randrange(n)] = "%"
        for _ in range(rng.randint(0, 6)):
            chars[rng.randrange(n)] = "_"
        pattern = "".join(chars)
        if like_problem(pattern) is None:
            out.append(pattern)
    return out


def in_letter(pattern: str, letter: str) -> str:
    return pattern.replace("a", letter) if letter != "a" else pattern


def _time(fn: Any, repeat: int) -> float:
    """Median milliseconds of ``fn()`` over ``repeat`` calls (the fastest-first half is warm-up)."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _regex_of_before(pattern: str) -> re.Pattern[str]:
    """The replaced implementation: a backtracking regular expression (``.*`` per ``%``)."""
    out: list[str] = []
    chars = iter(pattern.casefold())
    for char in chars:
        if char == "\\":
            out.append(re.escape(next(chars, "")))
        else:
            out.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
    return re.compile("".join(out), re.DOTALL)


def opensearch_url(given: str | None) -> tuple[str | None, Any]:
    """A node to time wildcard queries on: the one given, or one started for the run (stopped after)."""
    url = given or os.environ.get("MNEMO_TEST_OPENSEARCH_URL")
    if url:
        return url, None
    try:
        from tests.support.opensearch_node import OpenSearchNode, available, fetch

        ok, _ = available()
        if not ok:
            return None, None
        fetch()
        node = OpenSearchNode().start()
        return str(node.url), node
    except Exception as exc:  # noqa: BLE001 - the OpenSearch part is optional
        print(f"[bench.like] no OpenSearch node: {exc}", file=sys.stderr)
        return None, None


def time_opensearch(url: str, cases: list[tuple[str, str]], repeat: int) -> list[dict[str, Any]]:
    from mnemo.backends.aws.query import like_to_wildcard
    from opensearchpy import OpenSearch

    client = OpenSearch(url, timeout=30)
    index = f"bench-like-{os.getpid()}"
    client.indices.create(index=index, body={"mappings": {"properties": {"p": {"type": "keyword"}}}})
    try:
        values = {v for _, v in cases}
        for i, value in enumerate(sorted(values)):
            client.index(index=index, id=str(i), body={"p": value})
        rng = random.Random(3)  # and some ordinary paths, so the terms dictionary is not trivial
        for i in range(2000):
            path = "/".join(rng.choice(part) for part in corpus.PATH_PARTS) + f"/{i}"
            client.index(index=index, id=f"x{i}", body={"p": path})
        client.indices.refresh(index=index)
        out = []
        for pattern, _ in sorted(set(cases)):
            body = {"size": 10, "query": {"bool": {"filter": [{"wildcard": {"p": like_to_wildcard(pattern)}}]}}}
            try:
                ms = _time(lambda b=body: client.search(index=index, body=b, request_cache=False), repeat)
                out.append({"pattern": pattern, "median_ms": round(ms, 2), "error": None})
            except Exception as exc:  # noqa: BLE001 - a refusal is the finding, not a crash of the bench
                out.append({"pattern": pattern, "median_ms": None, "error": str(exc)[:200]})
        return out
    finally:
        client.indices.delete(index=index, ignore_unavailable=True)
        client.close()


def run(repeat: int, n_random: int, url: str | None) -> dict[str, Any]:
    from mnemo.like import MAX_LIKE_LENGTH, compile_like, like_matches, like_problem

    patterns = [in_letter(p, letter) for letter in LETTERS for p in worst_patterns()]
    patterns += random_patterns(n_random)
    for pattern in patterns:
        assert like_problem(pattern) is None, (pattern, like_problem(pattern))
    values = {letter: letter * 512 for letter in LETTERS} | {"ab": "ab" * 256, "a…b": "a" * 511 + "b"}
    conn = sqlite3.connect(":memory:")
    rows = []
    for pattern in patterns:
        compile_like(pattern)
        for name, value in values.items():
            folded_value, folded_pattern = value.casefold(), pattern.casefold()

            def matcher(p: str = pattern, v: str = value) -> bool:
                return like_matches(p, v)

            def sqlite_like(p: str = folded_pattern, v: str = folded_value) -> Any:
                return conn.execute("SELECT ? LIKE ? ESCAPE '\\'", (v, p)).fetchone()

            assert bool(sqlite_like()[0]) is matcher(), (pattern, name)
            rows.append(
                {
                    "pattern": pattern,
                    "value": name,
                    "value_chars_folded": len(folded_value),
                    "matcher_ms": round(_time(matcher, repeat), 4),
                    "sqlite_ms": round(_time(sqlite_like, repeat), 4),
                }
            )
    conn.close()
    issue_pattern, issue_value = "%a%a%a%a%a%b", "a" * 100
    before = _regex_of_before(issue_pattern)
    t0 = time.perf_counter()
    before.fullmatch(issue_value)
    before_ms = (time.perf_counter() - t0) * 1000
    out: dict[str, Any] = {
        "limits": {"length": MAX_LIKE_LENGTH},
        "patterns": len(patterns),
        "values": {k: len(v) for k, v in values.items()},
        "repeat": repeat,
        "rows": rows,
        "issue_case": {
            "pattern": issue_pattern,
            "value": "100 × a",
            "before_regex_ms": round(before_ms, 1),
            "matcher_ms": round(_time(lambda: like_matches(issue_pattern, issue_value), repeat), 4),
        },
    }
    if url:
        cases = [(p, values[name]) for p in patterns for name in values if name in ("a", "ΐ")]
        out["opensearch"] = {"url": "a local node", "rows": time_opensearch(url, cases, max(3, repeat // 4))}
    return out


def render(results: dict[str, Any]) -> str:
    rows = results["rows"]
    worst = sorted(rows, key=lambda r: -r["matcher_ms"])[:5]
    worst_sqlite = sorted(rows, key=lambda r: -r["sqlite_ms"])[:3]
    met = "✅" if worst[0]["matcher_ms"] <= TARGET_MS else "❌"
    issue = results["issue_case"]
    lines = [
        "# The worst LIKE pattern at the maximum lengths",
        "",
        f"- command: `{results['command']}`",
        f"- date: {results['date']}; {results['machine']}",
        f"- {results['patterns']} patterns at the schema's limits (the costliest shapes in `a`, `ΐ`, `é`, and "
        f"random ones) × values {results['values']} (characters before case folding); median of "
        f"{results['repeat']} calls each",
        "",
        "| what | worst median | target | met |",
        "|---|---|---|---|",
        f"| `mnemo.like.like_matches`, one value | {worst[0]['matcher_ms']} ms | ≤ {TARGET_MS:g} ms | {met} |",
        f"| SQLite `LIKE … ESCAPE`, one value (the SQLite backend's filter) | {worst_sqlite[0]['sqlite_ms']} ms | | |",
    ]
    if "opensearch" in results:
        timed = [r for r in results["opensearch"]["rows"] if r["median_ms"] is not None]
        refused = [r for r in results["opensearch"]["rows"] if r["error"]]
        slowest = max(timed, key=lambda r: r["median_ms"]) if timed else None
        lines.append(
            f"| OpenSearch `wildcard` filter, one query over {len(results['values'])}+2000 values (HTTP included) | "
            f"{slowest['median_ms'] if slowest else '–'} ms | | {'refused: ' + str(len(refused)) if refused else ''} |"
        )
    lines += [
        "",
        f"The issue's case, `{issue['pattern']}` against {issue['value']}: the replaced backtracking regular "
        f"expression {issue['before_regex_ms']} ms, the matcher {issue['matcher_ms']} ms.",
        "",
        "Slowest for the matcher:",
        "",
        "| pattern | value | folded length | matcher ms | SQLite ms |",
        "|---|---|---|---|---|",
    ]
    for r in worst:
        lines.append(
            f"| `{r['pattern'][:40]}…` ({len(r['pattern'])}) | {r['value']} | {r['value_chars_folded']} | "
            f"{r['matcher_ms']} | {r['sqlite_ms']} |"
        )
    lines += ["", "Slowest for SQLite:", "", "| pattern | value | SQLite ms | matcher ms |", "|---|---|---|---|"]
    for r in worst_sqlite:
        lines.append(f"| `{r['pattern'][:40]}…` | {r['value']} | {r['sqlite_ms']} | {r['matcher_ms']} |")
    if "opensearch" in results:
        rows_os = sorted(
            results["opensearch"]["rows"], key=lambda r: -(r["median_ms"] if r["median_ms"] is not None else 1e9)
        )
        lines += ["", "Slowest for OpenSearch:", "", "| pattern | median ms | refused |", "|---|---|---|"]
        for r in rows_os[:5]:
            lines.append(f"| `{r['pattern'][:40]}…` | {r['median_ms']} | {r['error'] or ''} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.like")
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--random", type=int, default=60, help="random patterns within the limits")
    parser.add_argument("--opensearch", help="an OpenSearch node to time wildcard queries on")
    parser.add_argument("--no-opensearch", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(corpus.ROOT))
    from bench.run import machine

    info = machine()
    url, node = (None, None) if args.no_opensearch else opensearch_url(args.opensearch)
    try:
        results = run(args.repeat, args.random, url)
    finally:
        if node is not None:
            node.stop()
    results["command"] = shlex.join(["python", "-m", "bench.like", *(sys.argv[1:] if argv is None else argv)])
    results["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    results["machine"] = (
        f"{info['nproc']} CPUs ({info['cpu']}), shared; load {info['loadavg_start']}; Python {info['python']}, "
        f"SQLite {info['sqlite']}; code at {info['commit']}"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "like.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    text = render(results)
    (RESULTS / "like.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
