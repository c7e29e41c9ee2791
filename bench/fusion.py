"""Hybrid recall's fusion rules side by side, on the embedded backend, from one pass over the data.

Every question of the quality set (``bench/quality_set.py``, recall@5 / MRR with limit 5) and of
the natural-language set (``bench/nl_set.py`` and MemoryBank, ``bench/public_set.py``: R@5 / R@10
/ MRR with limit 10) is asked once through ``Service.invoke`` (hybrid ``recall``), and the two
candidate pools the service hands to its fusion rule are kept (a recording rule passed to the
service, :class:`Recording`): the word search's best ``POOL`` (BM25) and the vector search's best
``POOL`` (cosine 0 or more). Each rule then ranks those same pools — the adopted one
(``mnemo.service.retrieval.fusion.ZScore``, with its constants or others: ``zscore:FROM_Z=2.5`` is
the rule it replaced, whose meaning hits weighed nothing below 2.5 standard deviations) and the
rules measured and not adopted, which live here, built from the service's parts: ``maxc`` (the
rule before that), ``zsum`` (each half's z-scores over its pool, summed with weights ``WORDS`` and
``1 - WORDS``), ``rrf`` (reciprocal rank, k ``RRF_K``) and ``zscore`` with
``OUTLIER_Z_UNCOVERED`` (a lower threshold when the best word hit covers less of the query) — so a
rule's figures are the ones the service would answer with it, and ``lexical`` / ``semantic`` are the pools alone
(``semantic``: cosine at least the embedder's floor).

    python -m bench.fusion                                  # the rules of RULES
    python -m bench.fusion --rules "maxc,rrf:MEANING_WEIGHT=1.0" --label my-run
    MNEMO_EMBEDDER=minilm OPENBLAS_NUM_THREADS=1 python -m bench.fusion

A rule is ``NAME[:CONSTANT=value;…]`` (:func:`rule`). Prints a table and writes
``bench/results/LABEL.md`` with ``--label``.
"""

from __future__ import annotations

import argparse
import operator
import os
import pickle
import shlex
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemo.service.retrieval import fusion
from mnemo.service.retrieval.candidates import Pools as CandidatePools
from mnemo.service.retrieval.fusion import ADOPTED, Fusion, ZScore
from mnemo.service.retrieval.matching import Match

from bench import nl_quality, quality, quality_set

RULES = "zscore,zscore:FROM_Z=2.5,zsum,zsum:WORDS=0.7,maxc,rrf,rrf:MEANING_WEIGHT=1.0"
ROOT = Path(__file__).resolve().parent.parent
RRF_K = 60


@dataclass
class Recording:
    """A fusion rule that keeps the pools it is handed (``last``) and ranks them by ``rule``."""

    rule: Fusion = ADOPTED
    last: CandidatePools | None = None

    def fuse(self, pools: CandidatePools) -> list[Match]:
        self.last = pools
        return self.rule.fuse(pools)


@dataclass(frozen=True)
class MaxC:
    """Measured, not adopted ("maxc", the rule ``ZScore`` replaced): a word hit as in ``ZScore``, a
    meaning hit at ``similarity x max(MEANING_WEIGHT, 1 - coverage)``, the larger when both."""

    meaning_weight: float = 0.35
    hybrid_min_similarity: float = 0.2

    def fuse(self, pools: CandidatePools) -> list[Match]:
        if not pools.similar:
            return list(pools.lexical)
        similar = fusion.meaning_candidates(pools, self.hybrid_min_similarity)
        scale = fusion.coverage(pools.lexical, pools.terms)
        meaning = [max(self.meaning_weight, 1 - scale) * hit.score for hit in similar]
        return fusion.merge(pools, fusion.word_weights(pools.lexical, scale), similar, meaning)


@dataclass(frozen=True)
class RRF:
    """Measured, not adopted ("rrf"): reciprocal rank, ``(k + 1) / (k + rank)``, the meaning half
    weighted ``MEANING_WEIGHT``, summed when both found a memory."""

    meaning_weight: float = 0.35
    k: float = RRF_K
    hybrid_min_similarity: float = 0.2

    def fuse(self, pools: CandidatePools) -> list[Match]:
        if not pools.similar:
            return list(pools.lexical)
        similar = fusion.meaning_candidates(pools, self.hybrid_min_similarity)
        k = self.k
        words = [(k + 1) / (k + rank) for rank in range(1, len(pools.lexical) + 1)]
        meaning = [self.meaning_weight * (k + 1) / (k + rank) for rank in range(1, len(similar) + 1)]
        return fusion.merge(pools, words, similar, meaning, combine=operator.add)


@dataclass(frozen=True)
class Uncovered:
    """Measured, not adopted (``zscore`` with ``OUTLIER_Z_UNCOVERED``): ``ZScore`` but the
    threshold a meaning hit must pass is ``uncovered`` when the best word hit covers none of the
    query, rising linearly with that coverage to ``outlier_z`` when it covers all of it
    (bench/results/2026-12-02-paraphrase-models.md)."""

    uncovered: float
    outlier_z: float = 2.5
    hybrid_min_similarity: float = 0.2

    def fuse(self, pools: CandidatePools) -> list[Match]:
        if not pools.similar:
            return list(pools.lexical)
        lexical = pools.lexical
        mean, sd = fusion.spread([hit.score for hit in pools.similar])
        similar = fusion.meaning_candidates(pools, self.hybrid_min_similarity)
        scale = fusion.coverage(lexical, pools.terms)
        share = 1 - scale if lexical else 1.0
        z0 = self.uncovered + (self.outlier_z - self.uncovered) * scale if lexical else self.outlier_z
        meaning = [share * fusion.outlier(hit.score, mean, sd, z=self.outlier_z, threshold=z0) for hit in similar]
        return fusion.merge(pools, fusion.word_weights(lexical, scale), similar, meaning)


@dataclass(frozen=True)
class ZSum:
    """Measured, not adopted ("zsum"): score normalisation and a weighted sum — each half's scores
    as z-scores over its own pool (BM25 over the word candidates, similarity over the vector
    candidates), a memory a half did not find at that half's lowest z-score, summed with the words
    weighted ``words`` and meaning ``1 - words``."""

    words: float = 0.5
    hybrid_min_similarity: float = 0.2

    def fuse(self, pools: CandidatePools) -> list[Match]:
        if not pools.similar:
            return list(pools.lexical)
        similar = fusion.meaning_candidates(pools, self.hybrid_min_similarity)

        def z(scores: dict[str, float]) -> dict[str, float]:
            mean, sd = fusion.spread(list(scores.values()))
            return {ref: (score - mean) / sd if sd > 0 else 0.0 for ref, score in scores.items()}

        by_words = z({m.record.id: m.score for m in pools.lexical})
        by_meaning = z({h.record.id: h.score for h in pools.similar})
        low_words, low_meaning = min(by_words.values(), default=0.0), min(by_meaning.values(), default=0.0)

        def weight(ref: str) -> float:
            return self.words * by_words.get(ref, low_words) + (1 - self.words) * by_meaning.get(ref, low_meaning)

        return fusion.merge(
            pools, [weight(m.record.id) for m in pools.lexical], similar, [weight(h.record.id) for h in similar]
        )


def rule(spec: str) -> Fusion:
    """A rule from ``NAME[:CONSTANT=value;…]``: ``zscore`` (the adopted rule; ``FROM_Z``, ``FULL_Z``,
    ``HYBRID_MIN_SIMILARITY``; or, with ``OUTLIER_Z_UNCOVERED``, :class:`Uncovered` and its
    ``OUTLIER_Z``), ``zsum`` (``WORDS``), ``maxc``
    (``MEANING_WEIGHT``), ``rrf`` (``MEANING_WEIGHT``, ``RRF_K``)."""
    name, _, rest = spec.partition(":")
    constants = {k.strip(): float(v) for k, v in (kv.split("=") for kv in rest.split(";") if kv)}
    floor = (
        {"hybrid_min_similarity": constants.pop("HYBRID_MIN_SIMILARITY")}
        if "HYBRID_MIN_SIMILARITY" in constants
        else {}
    )
    if name == "zscore":
        if "OUTLIER_Z_UNCOVERED" in constants:
            z = {"outlier_z": constants.pop("OUTLIER_Z")} if "OUTLIER_Z" in constants else {}
            built: Fusion = Uncovered(constants.pop("OUTLIER_Z_UNCOVERED"), **z, **floor)
        else:
            named = {"FROM_Z": "from_z", "FULL_Z": "full_z"}
            built = ZScore(**{named[k]: constants.pop(k) for k in list(constants) if k in named}, **floor)
    elif name == "zsum":
        built = ZSum(**{"words": constants.pop("WORDS")} if "WORDS" in constants else {}, **floor)
    elif name == "maxc":
        built = MaxC(
            **{"meaning_weight": constants.pop("MEANING_WEIGHT")} if "MEANING_WEIGHT" in constants else {}, **floor
        )
    elif name == "rrf":
        named = {"MEANING_WEIGHT": "meaning_weight", "RRF_K": "k"}
        built = RRF(**{named[k]: constants.pop(k) for k in list(constants) if k in named}, **floor)
    else:
        raise SystemExit(f"unknown fusion rule {name!r}: zscore, zsum, maxc or rrf")
    if constants:
        raise SystemExit(f"rule {name!r} has no constant {', '.join(constants)}")
    return built


Pools = list[tuple[str, set[str], bool, dict[str, Any]]]  # (class, wanted, any_of, pools)


def _pools(svc: Any, caller: Any, queries: list[tuple[str, dict[str, Any], set[str], bool]]) -> Pools:
    out: Pools = []
    recording = Recording()
    svc.fusion = recording
    for cls, args, wanted, any_of in queries:
        recording.last = None
        result = svc.invoke("recall", caller, args).result
        if recording.last is None:  # an empty query: what changed, the same in every mode
            box: dict[str, Any] = {"listed": [item.reference for item in result.results]}
        else:
            box = {"pools": recording.last}
        out.append((cls, wanted, any_of, box))
    svc.fusion = None
    return out


def _ranking(fuse: Fusion | None, mode: str, box: dict[str, Any]) -> list[str]:
    if "listed" in box:
        return list(box["listed"])
    return [m.record.id for m in _ranked(fuse, mode, box["pools"])]


def _ranked(fuse: Fusion | None, mode: str, pools: CandidatePools) -> list[Any]:
    if mode == "lexical":
        return list(pools.lexical)
    if mode == "semantic":
        hits = [h for h in pools.similar if h.score >= pools.min_similarity]
        return sorted(hits, key=lambda h: (pools.prefer_working and h.record.kind == "working", h.score), reverse=True)
    assert fuse is not None
    return fuse.fuse(pools)


def _scores(
    fuse: Fusion | None, mode: str, pools: Pools, names: dict[str, str], k: int, row: Callable[..., tuple[float, ...]]
) -> dict[str, list[float]]:
    sums: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for cls, wanted, any_of, p in pools:
        found = [names[ref] for ref in _ranking(fuse, mode, p)][:k]
        sums[cls].append(row(found, wanted, any_of))
    return {c: [round(sum(v[i] for v in vs) / len(vs), 3) for i in range(len(vs[0]))] for c, vs in sorted(sums.items())}


def _real(fuse: Fusion | None, mode: str, pools: Pools, names: dict[str, str]) -> dict[str, list[float]]:
    """The real-question set's R@5 / R@10 / MRR, over all its questions and per source."""
    if not pools:
        return {}
    every = [("all", *rest) for _, *rest in pools]
    scored = {
        **_scores(fuse, mode, every, names, nl_quality.K, _nl_row),
        **_scores(fuse, mode, pools, names, nl_quality.K, _nl_row),
    }  # type: ignore[arg-type]
    return {f"real-{c}": v for c, v in scored.items()}


def _floored(pools: Pools, floor: float | None) -> Pools:
    """The same pools as if the embedder's floor for "found by meaning" were ``floor``."""
    if floor is None:
        return pools
    return [
        (c, w, a, {"pools": replace(box["pools"], min_similarity=floor)} if "pools" in box else box)
        for c, w, a, box in pools
    ]


def _quality_row(found: list[str], wanted: set[str], any_of: bool) -> tuple[float, float]:
    hit = [i for i, ref in enumerate(found) if ref in wanted]
    return len(hit) / len(wanted), 1 / (hit[0] + 1) if hit else 0.0


def _nl_row(found: list[str], wanted: set[str], any_of: bool) -> tuple[float, float, float]:
    return nl_quality._row(found, wanted, any_of=any_of)


def _capture_real() -> tuple[Pools, dict[str, str]]:
    """The real-question set's pools (``bench/real_set.py``: FriendsQA, DREAM, C3), per source."""
    from bench import real_set

    data = real_set.load()
    with tempfile.TemporaryDirectory() as tmp, quality.sqlite_ports(Path(tmp) / "r") as ports:
        svc, caller, names, _ = nl_quality._load(ports, data)
        asked = [
            (q["source"], nl_quality._arguments("recall", q), set(q["relevant"]), q.get("any", False))
            for q in data["queries"]
        ]
        return _pools(svc, caller, asked), names


def _capture() -> tuple[Pools, dict[str, str], Pools, dict[str, str]]:
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
            return _pools(qsvc, qcaller, qasked), qnames, _pools(nsvc, ncaller, nasked), nnames


def _env() -> str:
    return "".join(f"{k}={os.environ[k]} " for k in ("MNEMO_EMBEDDER", "OPENBLAS_NUM_THREADS") if k in os.environ)


def main(argv: list[str] | None = None) -> int:
    from mnemo.config import Settings

    parser = argparse.ArgumentParser(prog="python -m bench.fusion")
    parser.add_argument("--rules", default=RULES)
    parser.add_argument("--label")
    parser.add_argument("--pools", type=Path, help="keep the captured pools in this file (pickle) and reuse them")
    parser.add_argument("--real", action="store_true", help="the real-question set too (bench/real_set.py)")
    parser.add_argument(
        "--floors",
        default="",
        help="semantic and every rule again with these floors for 'found by meaning' (the embedder's by default)",
    )
    args = parser.parse_args(argv)
    lines = [
        f"# Hybrid fusion rules ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"`{_env()}{shlex.join(['python', '-m', 'bench.fusion', *(sys.argv[1:] if argv is None else argv)])}`: SQLite, "
        f"embedder `{Settings().embedder}`; each rule ranks the same pools (the one the service holds, or one of "
        "this module's). Quality set: recall@5 / MRR per class (limit 5); natural-language classes: "
        "R@5 / R@10 / MRR (limit 10).",
        "",
    ]
    if args.pools and args.pools.exists():
        qpools, qnames, npools, nnames, rpools, rnames = pickle.loads(args.pools.read_bytes())
    else:
        qpools, qnames, npools, nnames = _capture()
        rpools, rnames = _capture_real() if args.real else ([], {})
        if args.pools:
            args.pools.write_bytes(pickle.dumps((qpools, qnames, npools, nnames, rpools, rnames)))
    header: list[str] | None = None
    runs: list[tuple[str, str, Fusion | None, float | None]] = [("lexical", "lexical", None, None)]
    for floor in [None, *(float(f) for f in args.floors.split(",") if f)]:
        at = "" if floor is None else f" floor {floor}"
        runs.append((f"semantic{at}", "semantic", None, floor))
        runs += [(f"hybrid {spec}{at}", "hybrid", rule(spec), floor) for spec in args.rules.split(",") if spec]
    for label, mode, fuse, floor in runs:
        row = {
            **_scores(fuse, mode, _floored(qpools, floor), qnames, quality.K, _quality_row),
            **_scores(fuse, mode, _floored(npools, floor), nnames, nl_quality.K, _nl_row),
            **_real(fuse, mode, _floored(rpools, floor), rnames),
        }
        if header is None:
            header = list(row)
            lines += ["| recall | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
        lines.append(f"| {label} | " + " | ".join(" / ".join(map(str, row[c])) for c in header) + " |")
        print(lines[-1], flush=True)
    out = "\n".join(lines) + "\n"
    print(out)
    if args.label:
        (ROOT / "bench" / "results" / f"{args.label}.md").write_text(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
