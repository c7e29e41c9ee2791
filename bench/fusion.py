"""Hybrid recall's fusion rules side by side, on the embedded backend, from one pass over the data.

Every question of the quality set (``bench/quality_set.py``, recall@5 / MRR with limit 5) and of
the natural-language set (``bench/nl_set.py`` and MemoryBank, ``bench/public_set.py``: R@5 / R@10
/ MRR with limit 10) is asked once through ``Service.invoke`` (hybrid ``recall``), and the two
candidate pools the service hands to ``_fuse`` are kept: the word search's best ``POOL`` (BM25)
and the vector search's best ``POOL`` (cosine 0 or more). Each rule then ranks those same pools by the
service's own ``_fuse`` (``mnemo.service.retrieval.tools``: its ``FUSION`` and constants set for
the rule) — so a rule's figures are the ones the service would answer with it, and ``lexical`` /
``semantic`` are the pools alone (``semantic``: cosine at least ``MIN_SIMILARITY``).

    python -m bench.fusion                                  # the rules of RULES
    python -m bench.fusion --rules "maxc,rrf:MEANING_WEIGHT=1.0" --label my-run
    MNEMO_EMBEDDER=minilm OPENBLAS_NUM_THREADS=1 python -m bench.fusion

A rule is ``FUSION[:CONSTANT=value;…]``. Prints a table and writes ``bench/results/LABEL.md`` with
``--label``.
"""

from __future__ import annotations

import argparse
import pickle
import shlex
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import nl_quality, quality, quality_set

RULES = "zscore,maxc,rrf,rrf:MEANING_WEIGHT=1.0"
ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _captured(tools: Any) -> Iterator[dict[str, Any]]:
    """While open, each hybrid recall's pools land in the yielded dict."""
    box: dict[str, Any] = {}
    fuse, ranked_of = tools._fuse, tools._recall_ranked

    def fusing(lexical: Any, similar: Any, terms: Any, **kw: Any) -> Any:
        box.update(lexical=lexical, similar=similar, terms=terms, prefer_working=kw["prefer_working"])
        return fuse(lexical, similar, terms, **kw)

    def recall_ranked(ctx: Any, args: Any, **kw: Any) -> Any:
        terms, ranked, no_match = ranked_of(ctx, args, **kw)
        if "lexical" not in box:  # no vector candidate: the words' ranking is the answer
            box.update(lexical=ranked, similar=[], terms=terms, prefer_working=args.prefer_working)
        return terms, ranked, no_match

    tools._fuse, tools._recall_ranked = fusing, recall_ranked
    try:
        yield box
    finally:
        tools._fuse, tools._recall_ranked = fuse, ranked_of


Pools = list[tuple[str, set[str], bool, dict[str, Any]]]  # (class, wanted, any_of, pools)


def _pools(svc: Any, caller: Any, queries: list[tuple[str, dict[str, Any], set[str], bool]], tools: Any) -> Pools:
    out: Pools = []
    with _captured(tools) as box:
        for cls, args, wanted, any_of in queries:
            box.clear()
            result = svc.invoke("recall", caller, args).result
            if "lexical" not in box:  # an empty query: what changed, the same in every mode
                box["listed"] = [item.reference for item in result.results]
            out.append((cls, wanted, any_of, dict(box)))
    return out


def _ranking(tools: Any, mode: str, pools: dict[str, Any]) -> list[str]:
    if "listed" in pools:
        return list(pools["listed"])
    return [m.record.id for m in _ranked(tools, mode, pools)]


def _ranked(tools: Any, mode: str, pools: dict[str, Any]) -> list[Any]:
    lexical, similar = pools["lexical"], pools["similar"]
    if mode == "lexical":
        return list(lexical)
    if mode == "semantic":
        hits = [h for h in similar if h.score >= tools.MIN_SIMILARITY]
        return sorted(
            hits, key=lambda h: (pools["prefer_working"] and h.record.kind == "working", h.score), reverse=True
        )
    if not similar:
        return list(lexical)
    return tools._fuse(lexical, similar, pools["terms"], full=False, prefer_working=pools["prefer_working"])


def _scores(
    tools: Any, mode: str, pools: Pools, names: dict[str, str], k: int, row: Callable[..., tuple[float, ...]]
) -> dict[str, list[float]]:
    sums: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for cls, wanted, any_of, p in pools:
        found = [names[ref] for ref in _ranking(tools, mode, p)][:k]
        sums[cls].append(row(found, wanted, any_of))
    return {c: [round(sum(v[i] for v in vs) / len(vs), 3) for i in range(len(vs[0]))] for c, vs in sorted(sums.items())}


def _quality_row(found: list[str], wanted: set[str], any_of: bool) -> tuple[float, float]:
    hit = [i for i, ref in enumerate(found) if ref in wanted]
    return len(hit) / len(wanted), 1 / (hit[0] + 1) if hit else 0.0


def _nl_row(found: list[str], wanted: set[str], any_of: bool) -> tuple[float, float, float]:
    return nl_quality._row(found, wanted, any_of=any_of)


def _capture(tools: Any) -> tuple[Pools, dict[str, str], Pools, dict[str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        qdata, ndata = quality_set.load(), nl_quality.merged()
        with quality.sqlite_ports(work / "q") as qports, quality.sqlite_ports(work / "n") as nports:
            (qsvc, qcaller), qnames = quality._load(qports, qdata)
            nsvc, ncaller, nnames, _ = nl_quality._load(nports, ndata)
            qasked = []
            for q in qdata["queries"]:
                qargs = quality._arguments("recall", q)
                assert qargs is not None
                qasked.append((q["class"], qargs, set(q["relevant"]), False))
            nasked = [
                (
                    nl_quality.question_class(q),
                    nl_quality._arguments("recall", q),
                    set(q["relevant"]),
                    q.get("any", False),
                )
                for q in ndata["queries"]
            ]
            return _pools(qsvc, qcaller, qasked, tools), qnames, _pools(nsvc, ncaller, nasked, tools), nnames


def _rule(spec: str) -> tuple[str, dict[str, float]]:
    fusion, _, rest = spec.partition(":")
    constants = {k: float(v) for k, v in (kv.split("=") for kv in rest.split(";") if kv)}
    return fusion, constants


def main(argv: list[str] | None = None) -> int:
    from mnemo.config import Settings
    from mnemo.service.retrieval import tools

    parser = argparse.ArgumentParser(prog="python -m bench.fusion")
    parser.add_argument("--rules", default=RULES)
    parser.add_argument("--label")
    parser.add_argument("--pools", type=Path, help="keep the captured pools in this file (pickle) and reuse them")
    args = parser.parse_args(argv)
    lines = [
        f"# Hybrid fusion rules ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"`{shlex.join(['python', '-m', 'bench.fusion', *(sys.argv[1:] if argv is None else argv)])}`: SQLite, "
        f"embedder `{Settings().embedder}`; each rule ranks the same pools by the service's `_fuse`. Quality set: "
        "recall@5 / MRR per class (limit 5); natural-language classes: R@5 / R@10 / MRR (limit 10).",
        "",
    ]
    if args.pools and args.pools.exists():
        qpools, qnames, npools, nnames = pickle.loads(args.pools.read_bytes())
    else:
        qpools, qnames, npools, nnames = _capture(tools)
        if args.pools:
            args.pools.write_bytes(pickle.dumps((qpools, qnames, npools, nnames)))
    saved = {name: getattr(tools, name) for name in dir(tools) if name.isupper()}
    header: list[str] | None = None
    for label, mode, fusion, constants in [("lexical", "lexical", "", {}), ("semantic", "semantic", "", {})] + [
        (f"hybrid {spec}", "hybrid", *_rule(spec)) for spec in args.rules.split(",") if spec
    ]:
        for name, value in saved.items():
            setattr(tools, name, value)
        if fusion:
            tools.FUSION = fusion
            for name, value in constants.items():
                setattr(tools, name, value)
        row = {
            **_scores(tools, mode, qpools, qnames, quality.K, _quality_row),
            **_scores(tools, mode, npools, nnames, nl_quality.K, _nl_row),
        }
        if header is None:
            header = list(row)
            lines += ["| recall | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
        lines.append(f"| {label} | " + " | ".join(" / ".join(map(str, row[c])) for c in header) + " |")
        print(lines[-1], flush=True)
    for name, value in saved.items():
        setattr(tools, name, value)
    out = "\n".join(lines) + "\n"
    print(out)
    if args.label:
        (ROOT / "bench" / "results" / f"{args.label}.md").write_text(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
