"""Recall on real questions (``bench/real_set.py``: FriendsQA, DREAM, C3 — human-written questions
over real dialogues, each turn one memory), beside textbook baselines computed in the same run on
the same memories and the same vectors.

Every memory is written into the backend as ``bench/nl_quality.py`` writes its sets (a project per
episode / group of dialogues, the turn's text verbatim, its time), and every question is asked
through ``Service.invoke`` as ``recall`` (the default, hybrid), ``recall`` ``mode: lexical`` and
``mode: semantic``, with ``limit`` 10. The baselines, per project, over the full rankings:

* **bm25**: ``bm25s`` (k1 1.5, b 0.75) with its English stop-word list and the Snowball stemmer,
  CJK as character pairs (``nl_quality.Baselines``);
* **dense**: the run's embedder's cosine (all-MiniLM-L6-v2 with ``MNEMO_EMBEDDER=minilm``);
* **rrf**: reciprocal-rank fusion (k 60) of bm25 and dense, each cut to its first 100;
* **zsum**: each half's scores as z-scores over the project's memories, summed with equal weights;
* **bm25+ctx** / **zsum+ctx** (``:session`` / ``:time``): context offline — a memory's score plus
  ``CONTEXT`` times the mean of its two neighbours' scores (the memories saved just before and
  after it: in the same session, or in time order across the project), on each half before fusing.

R@5 / R@10 as ``nl_quality`` scores them (FriendsQA: share of the marked utterances; DREAM / C3:
any turn of the question's dialogue). Per source and overall (the mean over questions).

    MNEMO_EMBEDDER=minilm OPENBLAS_NUM_THREADS=1 nice -n 5 python -m bench.real_quality \
        --backends sqlite --label 2026-12-03-real-minilm-sqlite
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import nl_quality, real_set
from bench.quality import backend_ports

ROOT = Path(__file__).resolve().parent.parent
SERVICE = ("recall", "recall:lexical", "recall:semantic")
CONTEXT = 0.5
RRF_K, RRF_DEPTH, K = 60, 100, 10


class Full(nl_quality.Baselines):
    """Full per-project score vectors of bm25 and dense, and the fused baselines over them."""

    def __init__(self, data: dict[str, Any], vectors: dict[str, list[float]], embedder: Any) -> None:
        import numpy as np

        super().__init__(data, vectors, embedder)
        by_id = {m["id"]: m for m in data["memories"]}
        self._np = np
        # neighbours in each project's time order: (before, after) index, -1 when none
        self._time: dict[str, Any] = {}
        self._session: dict[str, Any] = {}
        for project, ids in self._ids.items():
            order = sorted(range(len(ids)), key=lambda i: by_id[ids[i]]["created_at"])
            before, after = np.full(len(ids), -1), np.full(len(ids), -1)
            for a, b in itertools.pairwise(order):
                after[a], before[b] = b, a
            self._time[project] = (before, after)
            same = np.array([by_id[ids[i]]["session"] for i in range(len(ids))])
            sb = np.where((before >= 0) & (same[before] == same), before, -1)
            sa = np.where((after >= 0) & (same[after] == same), after, -1)
            self._session[project] = (sb, sa)

    def bm25_scores(self, query: dict[str, Any]) -> Any:
        import bm25s

        project = query["project"]
        n = len(self._ids[project])
        tokens = bm25s.tokenize(
            [nl_quality._baseline_text(query["query"])], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        if not tokens.vocab:
            return self._np.zeros(n)
        docs, scores = self._bm25[project].retrieve(tokens, k=n, show_progress=False)
        out = self._np.zeros(n)
        out[docs[0].astype(int)] = scores[0]
        return out

    def dense_scores(self, query: dict[str, Any]) -> Any:
        np = self._np
        (vector,) = self._embedder.embed([query["query"]])
        v = np.array(vector, dtype=np.float32)
        v /= max(float(np.linalg.norm(v)), 1e-12)
        return (self._matrix[query["project"]] @ v).astype(float)

    def _context(self, project: str, scores: Any, kind: str) -> Any:
        np = self._np
        before, after = (self._session if kind == "session" else self._time)[project]
        padded = np.append(scores, 0.0)  # index -1 reads the 0 at the end
        return scores + CONTEXT * (padded[before] + padded[after]) / 2

    def _z(self, scores: Any) -> Any:
        sd = float(scores.std())
        return (scores - scores.mean()) / sd if sd > 0 else scores * 0.0

    def _top(self, project: str, scores: Any, floor: float | None = None) -> list[str]:
        order = self._np.argsort(-scores, kind="stable")[:K]
        return [self._ids[project][int(i)] for i in order if floor is None or scores[int(i)] > floor]

    def rankings(self, query: dict[str, Any]) -> dict[str, list[str]]:
        p = query["project"]
        lex, sem = self.bm25_scores(query), self.dense_scores(query)
        out = {"bm25": self._top(p, lex, 0.0), "dense": self._top(p, sem)}
        rrf: dict[str, float] = defaultdict(float)
        for ranking in (self._top_n(p, lex, RRF_DEPTH, 0.0), self._top_n(p, sem, RRF_DEPTH)):
            for rank, ref in enumerate(ranking):
                rrf[ref] += 1 / (RRF_K + rank + 1)
        out["rrf"] = sorted(rrf, key=lambda r: -rrf[r])[:K]
        out["zsum"] = self._top(p, self._z(lex) + self._z(sem))
        for kind in ("session", "time"):
            clex, csem = self._context(p, lex, kind), self._context(p, sem, kind)
            out[f"bm25+ctx:{kind}"] = self._top(p, clex, 0.0)
            out[f"zsum+ctx:{kind}"] = self._top(p, self._z(clex) + self._z(csem))
        return out

    def _top_n(self, project: str, scores: Any, n: int, floor: float | None = None) -> list[str]:
        order = self._np.argsort(-scores, kind="stable")[:n]
        return [self._ids[project][int(i)] for i in order if floor is None or scores[int(i)] > floor]


def evaluate(svc: Any, caller: Any, names: dict[str, str], data: dict[str, Any], base: Full) -> dict[str, Any]:
    rows: dict[str, dict[str, list[tuple[float, float, float]]]] = defaultdict(lambda: defaultdict(list))
    for query in data["queries"]:
        wanted = set(query["relevant"])
        found: dict[str, list[str]] = {}
        for tool in SERVICE:
            result = svc.invoke("recall", caller, nl_quality._arguments(tool, query)).result
            found[tool] = [names[item.reference] for item in result.results]
        found.update(base.rankings(query))
        for tool, ranking in found.items():
            row = nl_quality._row(ranking, wanted, any_of=query.get("any", False))
            rows[tool][query["source"]].append(row)
            rows[tool]["all"].append(row)
    return {tool: {cls: nl_quality._summary(v) for cls, v in sorted(c.items())} for tool, c in rows.items()}


def run(
    workdir: Path, backends: tuple[str, ...], fusion: Any = None, neighbours: Any = None, *, sessions: bool = True
) -> dict[str, Any]:
    """``fusion``, ``neighbours``: the rules the service holds for this run (None: the adopted
    ones); ``sessions``: the memories are saved with their session ids (else without: recall's
    context then reads adjacency in time alone)."""
    from mnemo.config import Settings

    data = real_set.load()
    out: dict[str, Any] = {
        "embedder": Settings().embedder,
        "sessions": sessions,
        "provenance": data["provenance"],
        "set": {
            "memories": len(data["memories"]),
            "projects": len({m["project"] for m in data["memories"]}),
            "queries": {s: sum(1 for q in data["queries"] if q["source"] == s) for s in real_set.SOURCES},
        },
        "backends": {},
    }
    for name in backends:
        started = time.perf_counter()
        context = backend_ports(name, workdir, "real-quality-")
        if isinstance(context, str):
            out["backends"][name] = {"status": "not run", "reason": context}
            continue
        with context as ports:
            svc, caller, names, vectors = nl_quality._load(ports, data, sessions=sessions)
            svc.fusion, svc.neighbours = fusion, neighbours
            if name == "aws":
                ports.index.client.indices.refresh(index=ports.index.alias)
            base = Full(data, vectors, svc.embedder)
            out["backends"][name] = {"status": "done", "tools": evaluate(svc, caller, names, data, base)}
        out["backends"][name]["seconds"] = round(time.perf_counter() - started, 1)
    return out


def markdown(res: dict[str, Any], command: str) -> list[str]:
    s = res["set"]
    lines = [
        f"Real questions (`bench/real_quality.py`, set `bench/real_set.py`): {s['memories']} memories in "
        f"{s['projects']} projects, questions {s['queries']}; embedder `{res['embedder']}`; memories saved "
        f"{'with' if res.get('sessions', True) else 'without'} their session ids. R@5 / R@10 per "
        "tool (limit 10) and source; `all` is the mean over all questions. Baselines in the same run.",
        "",
        f"    {command}",
        "",
    ]
    for backend, b in res["backends"].items():
        if b.get("status") != "done":
            lines += [f"**{backend}**: not run ({b.get('reason')})", ""]
            continue
        classes = ["all", *real_set.SOURCES]
        lines += [f"**{backend}** ({b['seconds']} s)", "", "| tool | " + " | ".join(classes) + " |"]
        lines.append("|---|" + "---|" * len(classes))
        for tool, t in b["tools"].items():
            lines.append(f"| {tool} | " + " | ".join(f"{t[c]['r5']} / {t[c]['r10']}" for c in classes) + " |")
        lines.append("")
    return lines


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite")
    parser.add_argument("--label")
    parser.add_argument(
        "--fusion", help="the rule the service holds, as bench/fusion.py names it: NAME[:CONSTANT=value;...]"
    )
    parser.add_argument(
        "--context",
        help="recall's context rule for this run: SHARE[:session|:time][:join|:candidates] (share 0: none; "
        "'time': memories without a session lend and borrow too, by adjacency in time; 'join': a neighbour neither "
        "half found joins the ranking, 'candidates' (the default): only candidates are lent weight); default the "
        "adopted one",
    )
    parser.add_argument("--no-sessions", action="store_true", help="save the memories without their session ids")
    args = parser.parse_args(argv)
    neighbours = None
    if args.context:
        from mnemo.service.retrieval.context import Neighbours

        share, *kinds = args.context.split(":")
        within = "time" if "time" in kinds else "session"
        neighbours = Neighbours(share=float(share), within=within, join="join" in kinds)
    rule = None
    if args.fusion:
        from bench.fusion import rule as named_rule

        rule = named_rule(args.fusion)
    with tempfile.TemporaryDirectory() as tmp:
        res = run(Path(tmp), tuple(args.backends.split(",")), rule, neighbours, sessions=not args.no_sessions)
    env = " ".join(f"{k}={os.environ[k]}" for k in ("MNEMO_EMBEDDER", "OPENBLAS_NUM_THREADS") if k in os.environ)
    command = f"{env} python -m bench.real_quality {shlex.join(argv)}".strip()
    text = "\n".join(markdown(res, command)) + "\n"
    print(text)
    if args.label:
        (ROOT / "bench" / "results" / f"{args.label}.json").write_text(json.dumps(res, indent=1) + "\n")
        (ROOT / "bench" / "results" / f"{args.label}.md").write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
