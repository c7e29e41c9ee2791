"""Run the benchmarks and write ``bench/results/latest.md`` and ``latest.json``.

    python -m bench.run                 # everything (make bench), a few minutes
    python -m bench.run --quick         # 1k and 10k only, fewer samples: a smoke run
    python -m bench.run --only search,overhead --label before
    python -m bench.run --only search,quality --baseline 39beae1   # before/after in one run

``--label NAME`` also keeps a copy as ``bench/results/NAME.{md,json}``. A partial run (``--only`` some
sections) never replaces ``latest``, which README and docs/performance.md link as the last measured
figures of every section: it writes its ``--label`` files only, or with ``--merge`` its sections
into ``latest`` beside the others kept from there (``destinations``). ``--baseline REV`` also
measures retrieval latency with the code of git revision REV (its ``shared/`` and ``bench/``, taken
with ``git archive`` into the run's temporary directory, run by its own ``bench.run --only search``
in a subprocess with this interpreter) just before this code's, in the same run, on the same
corpus parameters, and reports the two side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
SECTIONS = ("search", "quality", "nl", "add", "overhead", "coldstart", "server", "clients", "cost", "aws")

TARGET_P50_MS = 5.0
TARGET_P99_MS = 20.0
TARGET_STOPWORD_P50_MS = 10.0
TARGET_RECALL_AT_5 = 0.95  # recall, on the exact and inflected classes, every backend
TARGET_PARAPHRASE_AT_5 = 0.7  # recall (hybrid), on the paraphrase class, every backend (issue #19)
TARGET_HYBRID_RATIO = 1.5  # recall (hybrid) p50 ÷ recall (lexical) p50 at the largest size, same run
TARGET_ADD_RATIO = 2.0  # memory_add p50 with the embedder ÷ without it, same run (issue #19)
TARGET_OVERHEAD = 1.5
TARGET_IMPORT_RATIO = 1.5


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "shared", "functions"], cwd=ROOT, capture_output=True)
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
        "commit": commit.stdout.strip() + (" (+ uncommitted changes)" if dirty.stdout.strip() else ""),
    }


def baseline(revision: str, quick: bool, n_queries: int, work: Path) -> dict[str, Any]:
    """The search section measured with the code of ``revision`` (see the module docstring)."""
    tree = work / "baseline"
    tree.mkdir()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", revision], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", revision, "shared", "bench"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    # the embedder's files are made at install, not in git: the checkout's serve a revision that
    # has the embedder (the same wheel's model; a revision reads the files it knows)
    data = Path("shared", "mnemo", "embedding", "data")
    if (tree / data).parent.is_dir() and (ROOT / data).is_dir() and not (tree / data).exists():
        shutil.copytree(ROOT / data, tree / data)
    # labelled: a partial run writes its label's files only (a revision before that rule writes
    # latest.json as well; every revision's bench.run takes --label)
    command = [sys.executable, "-m", "bench.run", "--only", "search", "--queries", str(n_queries)]
    command += ["--label", "baseline"]
    env = {**os.environ, "PYTHONPATH": f"{tree / 'shared'}{os.pathsep}{tree}", "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([*command, *(["--quick"] if quick else [])], cwd=tree, env=env, check=True)
    measured = json.loads((tree / "bench" / "results" / "baseline.json").read_text())
    return {"revision": revision, "commit": commit, "search": measured["search"], "date": measured["date"]}


def destinations(only: list[str], merge: bool, label: str | None) -> list[str]:
    """The names of the ``bench/results/NAME.{md,json}`` a run writes.

    ``latest`` is the last measured figures of every section, which the docs link. A full run
    replaces it. A partial run (some sections) writes into it only with ``merge`` (its sections
    beside the others kept from there, the report saying which came from which run): written
    as it stands, it would drop every section it did not measure. Otherwise it writes its
    ``label``'s files only — the comparisons and trials a partial run is mostly for ("before",
    "after", a candidate rule not adopted) are not the code's last measured figures. A partial
    run with neither would keep nothing: ``ValueError``, before anything is measured.
    """
    partial = set(only) != set(SECTIONS)
    if partial and not merge and not label:
        raise ValueError(
            "a partial run (--only) writes bench/results/LABEL.{md,json} (--label LABEL) or its sections "
            "into latest (--merge); it never replaces latest, which holds every section"
        )
    latest = ["latest"] if merge or not partial else []
    return [*latest, *([label] if label else [])]


def merged(previous: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """``results`` with the sections of ``previous`` it did not measure, and a note naming them.

    The note carries ``previous``'s own (a merge of a merge still says where its sections came from).
    """
    kept = [k for k in (*SECTIONS, "strategies", "baseline") if k in previous and k not in results]
    if not kept:
        return results
    note = f"sections {kept} from the run of {previous['date']} ({previous['command']})"
    if previous.get("merged"):
        note += f", which had merged {previous['merged']}"
    return {**{k: previous[k] for k in kept}, **results, "merged": note}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run")
    parser.add_argument("--quick", action="store_true", help="1k and 10k, fewer samples")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated among {','.join(SECTIONS)}")
    parser.add_argument("--label", help="also write bench/results/LABEL.{md,json}")
    parser.add_argument("--queries", type=int, help="queries per size and tool (default 500, quick 200)")
    parser.add_argument(
        "--merge", action="store_true", help="keep the other sections of bench/results/latest.json (with --only)"
    )
    parser.add_argument(
        "--backends", default="sqlite,aws", help="the quality and nl sections' backends (comma-separated)"
    )
    parser.add_argument("--baseline", help="also measure retrieval latency with the code of this git revision")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {sorted(unknown)}")
    try:
        names = destinations(only, args.merge, args.label)
    except ValueError as e:
        parser.error(str(e))

    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    big = sizes[-1]
    n_queries = args.queries or (200 if args.quick else 500)
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Mnemo")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    sys.path.insert(0, str(ROOT))

    started = time.perf_counter()
    previous: dict[str, Any] = {}
    if args.merge and (RESULTS / "latest.json").exists():
        previous = json.loads((RESULTS / "latest.json").read_text())
    results: dict[str, Any] = {
        "command": shlex.join(["python", "-m", "bench.run", *(sys.argv[1:] if argv is None else argv)]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "parameters": {"sizes": sizes, "queries": n_queries, "quick": args.quick},
    }
    with tempfile.TemporaryDirectory(prefix="mnemo-bench-") as tmp:
        work = Path(tmp)
        for section in only:
            t0 = time.perf_counter()
            print(f"[bench] {section} …", file=sys.stderr, flush=True)
            if section == "search":
                from bench import search

                if args.baseline:
                    results["baseline"] = baseline(args.baseline, args.quick, n_queries, work)
                results["search"] = search.run(sizes, n_queries, 10 if args.quick else 30, work)
                results["strategies"] = search.strategies(big, min(n_queries, 300), work)
            elif section == "quality":
                from bench import quality

                results["quality"] = quality.run(work, tuple(b for b in args.backends.split(",") if b))
            elif section == "nl":
                from bench import nl_quality

                backends = tuple(b for b in args.backends.split(",") if b)
                results["nl"] = nl_quality.run(work, backends)
            elif section == "add":
                from bench import add

                results["add"] = add.run(big, 300 if args.quick else 1000, work)
            elif section == "overhead":
                from bench import overhead

                results["overhead"] = overhead.run(big, min(n_queries, 300), work)
            elif section == "coldstart":
                from bench import coldstart

                results["coldstart"] = coldstart.run(3 if args.quick else 5)
            elif section == "server":
                from bench import server

                per_thread = 25 if args.quick else 100
                results["server"] = server.run(big, 8, per_thread, 60.0, work)
            elif section == "clients":
                from bench import clients

                results["clients"] = clients.run(
                    10_000, 100 if args.quick else 300, work, seconds=5 if args.quick else 10
                )
            elif section == "cost":
                from bench import cost

                results["cost"] = cost.run()
            elif section == "aws":
                from bench import aws

                results["aws"] = aws.run(n_queries=100 if args.quick else 300)
            print(f"[bench] {section} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    results["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    if previous:
        results = merged(previous, results)
    results["total_s"] = round(time.perf_counter() - started, 1)

    from bench.report import render

    RESULTS.mkdir(parents=True, exist_ok=True)
    text = render(results)
    for name in names:
        (RESULTS / f"{name}.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        (RESULTS / f"{name}.md").write_text(text)
    print(text)
    print(
        f"[bench] wrote {', '.join(f'bench/results/{n}.md' for n in names)} in {results['total_s']} s", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
