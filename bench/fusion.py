"""Hybrid recall's fusion rules side by side on the embedded backend: the quality set's classes
(``bench/quality_set.py``, recall@5) and the natural-language class (``bench/nl_set.py``, R@10),
recall asked in every mode once per rule, each memory loaded once.

    python -m bench.fusion                       # the rules of RULES
    python -m bench.fusion --rules score:0.5,rrf:1.0
    python -m bench.fusion --rules "" --stop en    # lexical and semantic only, without the CJK stop words

A rule is ``FUSION:MEANING_WEIGHT`` (``mnemo.service.retrieval.tools``); the module's constants are
set for the run only. Prints a table and writes ``bench/results/LABEL.md`` with ``--label``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import nl_quality, quality, quality_set

RULES = "score:0.25,score:0.5,score:1.0,rrf:0.5,rrf:1.0"
ROOT = Path(__file__).resolve().parent.parent


def _quality_rows(svc: Any, caller: Any, names: dict[str, str], data: dict[str, Any], mode: str) -> dict[str, float]:
    rows: dict[str, list[float]] = defaultdict(list)
    for q in data["queries"]:
        args = quality._arguments(f"recall:{mode}" if mode != "hybrid" else "recall", q)
        assert args is not None
        found = [names[r] for r in quality._ranked("recall", svc.invoke("recall", caller, args).result)][: quality.K]
        wanted = set(q["relevant"])
        rows[q["class"]].append(len([f for f in found if f in wanted]) / len(wanted))
    return {c: round(sum(v) / len(v), 3) for c, v in sorted(rows.items())}


def _nl_rows(svc: Any, caller: Any, names: dict[str, str], data: dict[str, Any], mode: str) -> dict[str, float]:
    rows: dict[str, list[float]] = defaultdict(list)
    tool = "recall" if mode == "hybrid" else f"recall:{mode}"
    for q in data["queries"]:
        result = svc.invoke("recall", caller, nl_quality._arguments(tool, q)).result
        found = [names[r] for r in nl_quality._ranked(tool, result)]
        rows[nl_quality.question_class(q)].append(
            nl_quality._row(found, set(q["relevant"]), any_of=q.get("any", False))[1]
        )
    return {c: round(sum(v) / len(v), 3) for c, v in sorted(rows.items())}


def main(argv: list[str] | None = None) -> int:
    from mnemo.service.retrieval import tools

    parser = argparse.ArgumentParser(prog="python -m bench.fusion")
    parser.add_argument("--rules", default=RULES)
    parser.add_argument("--label")
    parser.add_argument(
        "--stop", choices=("all", "en", "none"), default="all", help="which stop-word lists apply (mnemo.text)"
    )
    args = parser.parse_args(argv)
    rules = [(r.split(":")[0], float(r.split(":")[1])) for r in args.rules.split(",") if r]
    from mnemo import text

    text.STOP_WORDS = {"all": text.STOP_WORDS, "en": text.EN_STOP_WORDS, "none": frozenset()}[args.stop]
    lines = [
        f"# Hybrid fusion rules ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"`{shlex.join(['python', '-m', 'bench.fusion', *(sys.argv[1:] if argv is None else argv)])}`: SQLite; "
        "quality set recall@5 per class (limit 5), natural-language class R@10 (limit 10).",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        qdata, ndata = quality_set.load(), nl_quality.merged()
        with quality.sqlite_ports(work / "q") as qports, quality.sqlite_ports(work / "n") as nports:
            (qsvc, qcaller), qnames = quality._load(qports, qdata)
            nsvc, ncaller, nnames, _ = nl_quality._load(nports, ndata)
            header: list[str] | None = None
            for label, fusion, weight in [("lexical", "", 0.0), ("semantic", "", 0.0)] + [
                (f"hybrid {f}:{w}", f, w) for f, w in rules
            ]:
                mode = label.split()[0]
                if fusion:
                    tools.FUSION, tools.MEANING_WEIGHT = fusion, weight
                row = {
                    **_quality_rows(qsvc, qcaller, qnames, qdata, mode),
                    **_nl_rows(nsvc, ncaller, nnames, ndata, mode),
                }
                if header is None:
                    header = list(row)
                    lines += ["| recall | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
                lines.append(f"| {label} | " + " | ".join(str(row[c]) for c in header) + " |")
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.label:
        (ROOT / "bench" / "results" / f"{args.label}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
