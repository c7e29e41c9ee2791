"""Retrieval quality on questions in plain language: the natural-language class
(``bench/nl_set.py``: conversations saved one turn per memory, a project each) and the public
conversational-memory set derived from MemoryBank (``bench/public_set.py``), loaded into each
backend and asked every question through ``Service.invoke`` in its own project, by every retrieval
tool and recall's modes; beside them, in the same run on the same memories, two baselines:

* **bm25**: the ``bm25s`` package (BM25, k1 1.5, b 0.75 — its defaults), English words through
  its English stop words and PyStemmer's Snowball ``english`` stemmer, CJK runs as overlapping
  character pairs (bm25s splits on word characters, which would make a whole Chinese sentence one
  token); one index per project;
* **bm25+dense**: that ranking and the run's embedder's cosine ranking (the same vectors the
  backends store), each cut to its first 100, fused by reciprocal rank (k 60).

Per question, with the tool asked for 10 results: **R@5** / **R@10**, the share of its evidence
memories among the first 5 / 10 (for MemoryBank, whose evidence is a whole session: 1 when any of
them is); **MRR**, 1 / the rank of the first evidence memory in the first
10 (0 when none). Per class (``nl-en``, ``nl-zh``, ``memorybank-en``, ``memorybank-zh``) and, for
the natural-language class, per question kind (``when``, ``what``, ``who``, ``how``).
"""

from __future__ import annotations

import random
import re
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import nl_set
from bench.quality import backend_ports

TOOLS = (
    "recall",
    "recall:lexical",
    "recall:semantic",
    "recall_context",
    "search_memory",
    "memory_search",
    "bm25",
    "bm25+dense",
)
K = 10
RRF_K = 60
RRF_DEPTH = 100

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7ff]+")


def sets() -> list[dict[str, Any]]:
    """The question sets this bench asks: the natural-language class, and the public one when present."""
    out = [nl_set.load()]
    try:
        from bench import public_set
    except ImportError:
        return out
    out.append(public_set.load())
    return out


def merged() -> dict[str, Any]:
    memories: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for data in sets():
        memories += data["memories"]
        queries += data["queries"]
    return {"memories": memories, "queries": queries}


def question_class(query: dict[str, Any]) -> str:
    return f"{query.get('source', 'nl')}-{query['lang']}"


def _load(
    ports: Any, data: dict[str, Any], *, sessions: bool = True
) -> tuple[Any, Any, dict[str, str], dict[str, list[float]]]:
    """A workspace with a project per conversation holding its turns, each with its ``session``
    when the set has one (and ``sessions``); (service, caller, memory id → the set's id, the set's
    id → its vector)."""
    from mnemo.config import Settings
    from mnemo.embedding import build_embedder
    from mnemo.models.records import Embedding, MemoryRecord, RateLimits
    from mnemo.service import tenancy
    from mnemo.service.pipeline import Service
    from ulid import ULID

    cfg = Settings()
    svc = Service(ports, embedder=build_embedder(cfg.embedder, cfg))  # MNEMO_EMBEDDER, default static
    workspace, _ = tenancy.create_workspace(ports, "nl-quality")
    ports.tenants.set_limits(workspace.id, RateLimits(search=1_000_000, write=1_000_000))
    key = tenancy.create_key(ports, workspace.id, label="nl", scopes=["memory:read", "memory:write"]).plain
    projects = {}
    for slug in dict.fromkeys(m["project"] for m in data["memories"]):
        projects[slug] = tenancy.create_project(ports, workspace.id, slug)
    rng = random.Random(nl_set.SEED)
    names: dict[str, str] = {}
    embedder = svc.embedder
    contents = [m["content"] for m in data["memories"]]
    vectors = embedder.embed(contents) if embedder else [None] * len(contents)
    by_name: dict[str, list[float]] = {}
    with ports.store.unit_of_work():
        for memory, vector in zip(data["memories"], vectors, strict=True):
            project = projects[memory["project"]]
            created = datetime.fromisoformat(memory["created_at"])
            ulid = ULID.from_bytes(int(created.timestamp() * 1000).to_bytes(6, "big") + rng.randbytes(10))
            record = MemoryRecord(
                id=f"mem_{ulid}",
                workspace_id=workspace.id,
                project_id=project.id,
                content=memory["content"],
                kind="note",
                tags=[],
                path=None,
                source="nl-quality",
                version=1,
                created_at=created,
                updated_at=datetime.fromisoformat(memory["updated_at"]),
                embedding=Embedding.of(embedder.model, vector) if embedder and vector else None,
                session=memory.get("session") if sessions else None,
            )
            ports.store.create(record)
            ports.index.upsert(record)
            names[record.id] = memory["id"]
            if vector is not None:
                by_name[memory["id"]] = list(vector)
    return svc, svc.authenticate(f"Bearer {key}"), names, by_name


def _arguments(tool: str, query: dict[str, Any]) -> dict[str, Any]:
    tool, _, mode = tool.partition(":")
    base: dict[str, Any] = {"project": query["project"]}
    if tool == "memory_search":
        return {**base, "q": query["query"], "limit": K}
    if tool == "recall_context":
        return {
            **base,
            "query": query["query"],
            "max_items": K,
            "max_tokens": 50_000,
            **({"mode": mode} if mode else {}),
        }
    return {**base, "query": query["query"], "limit": K, **({"mode": mode} if mode else {})}


def _ranked(tool: str, result: Any) -> list[str]:
    tool = tool.partition(":")[0]
    if tool == "memory_search":
        return [m.id for m in result.memories]
    if tool == "recall_context":
        return list(result.references)
    return [item.reference for item in result.results]


# -- the baselines --------------------------------------------------------------------------------


def _baseline_text(text: str) -> str:
    """CJK runs as space-separated character pairs (a lone character alone), for bm25s's splitter."""

    def pairs(match: re.Match[str]) -> str:
        run = match.group(0)
        return " " + (run if len(run) == 1 else " ".join(run[i : i + 2] for i in range(len(run) - 1))) + " "

    return _CJK_RUN.sub(pairs, text)


class Baselines:
    """bm25s per project, and its reciprocal-rank fusion with the embedder's cosine ranking."""

    def __init__(self, data: dict[str, Any], vectors: dict[str, list[float]], embedder: Any) -> None:
        import bm25s
        import numpy as np
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._embedder = embedder
        self._ids: dict[str, list[str]] = defaultdict(list)
        texts: dict[str, list[str]] = defaultdict(list)
        for m in data["memories"]:
            self._ids[m["project"]].append(m["id"])
            texts[m["project"]].append(_baseline_text(m["content"]))
        self._bm25: dict[str, Any] = {}
        self._matrix: dict[str, Any] = {}
        for project, docs in texts.items():
            tokens = bm25s.tokenize(docs, stopwords="en", stemmer=self._stemmer, show_progress=False)
            index = bm25s.BM25()
            index.index(tokens, show_progress=False)
            self._bm25[project] = index
            if vectors:
                matrix = np.array([vectors[i] for i in self._ids[project]], dtype=np.float32)
                matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
                self._matrix[project] = matrix

    def bm25(self, query: dict[str, Any], depth: int = K) -> list[str]:
        import bm25s

        project = query["project"]
        ids = self._ids[project]
        tokens = bm25s.tokenize(
            [_baseline_text(query["query"])], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        if not tokens.vocab:
            return []
        docs, scores = self._bm25[project].retrieve(tokens, k=min(depth, len(ids)), show_progress=False)
        return [ids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def dense(self, query: dict[str, Any], depth: int) -> list[str]:
        import numpy as np

        if self._embedder is None:
            return []
        project = query["project"]
        (vector,) = self._embedder.embed([query["query"]])
        v = np.array(vector, dtype=np.float32)
        v /= max(float(np.linalg.norm(v)), 1e-12)
        sims = self._matrix[project] @ v
        order = np.argsort(-sims)[:depth]
        return [self._ids[project][int(i)] for i in order]

    def fused(self, query: dict[str, Any]) -> list[str]:
        scores: dict[str, float] = defaultdict(float)
        for ranking in (self.bm25(query, RRF_DEPTH), self.dense(query, RRF_DEPTH)):
            for rank, ref in enumerate(ranking):
                scores[ref] += 1 / (RRF_K + rank + 1)
        return sorted(scores, key=lambda ref: -scores[ref])[:K]


# -- running --------------------------------------------------------------------------------------


def _row(found: list[str], wanted: set[str], *, any_of: bool = False) -> tuple[float, float, float]:
    """(R@5, R@10, reciprocal rank) of one answer; with ``any_of`` (a session's turns as evidence)
    a question is answered at k when any evidence memory is among the first k."""
    hits = [i for i, ref in enumerate(found[:K]) if ref in wanted]
    if any_of:
        return float(bool(hits) and hits[0] < 5), float(bool(hits)), 1 / (hits[0] + 1) if hits else 0.0
    r5 = sum(1 for i in hits if i < 5) / min(len(wanted), 5)
    r10 = len(hits) / min(len(wanted), K)
    return r5, r10, 1 / (hits[0] + 1) if hits else 0.0


def evaluate(svc: Any, caller: Any, names: dict[str, str], data: dict[str, Any], base: Baselines) -> dict[str, Any]:
    rows: dict[str, dict[str, list[tuple[float, float, float]]]] = {t: defaultdict(list) for t in TOOLS}
    for query in data["queries"]:
        wanted = set(query["relevant"])
        for tool in TOOLS:
            if tool == "bm25":
                found = base.bm25(query)
            elif tool == "bm25+dense":
                found = base.fused(query)
            else:
                result = svc.invoke(tool.partition(":")[0], caller, _arguments(tool, query)).result
                found = [names[ref] for ref in _ranked(tool, result)]
            row = _row(found, wanted, any_of=query.get("any", False))
            rows[tool][question_class(query)].append(row)
            if query.get("kind"):
                rows[tool][f"{question_class(query)}/{query['kind']}"].append(row)
    return {tool: {cls: _summary(v) for cls, v in sorted(classes.items())} for tool, classes in rows.items()}


def _summary(values: list[tuple[float, float, float]]) -> dict[str, Any]:
    n = len(values)
    return {
        "n": n,
        "r5": round(sum(v[0] for v in values) / n, 3),
        "r10": round(sum(v[1] for v in values) / n, 3),
        "mrr": round(sum(v[2] for v in values) / n, 3),
    }


def run(workdir: Path, backends: tuple[str, ...] = ("sqlite", "aws")) -> dict[str, Any]:
    from mnemo.config import Settings

    data = merged()
    out: dict[str, Any] = {
        "embedder": Settings().embedder,
        "set": {
            "memories": len(data["memories"]),
            "projects": len({m["project"] for m in data["memories"]}),
            "queries": len(data["queries"]),
            "classes": dict(sorted(_count(question_class(q) for q in data["queries"]).items())),
        },
        "backends": {},
    }
    for name in backends:
        started = time.perf_counter()
        context = backend_ports(name, workdir, "nl-quality-")
        if isinstance(context, str):
            out["backends"][name] = {"status": "not run", "reason": context}
            continue
        with context as ports:
            svc, caller, names, vectors = _load(ports, data)
            if name == "aws":
                ports.index.client.indices.refresh(index=ports.index.alias)
            base = Baselines(data, vectors, svc.embedder)
            out["backends"][name] = {"status": "done", "tools": evaluate(svc, caller, names, data, base)}
        out["backends"][name]["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for v in values:
        counts[v] += 1
    return counts


def markdown(res: dict[str, Any]) -> list[str]:
    s = res["set"]
    lines = [
        f"Questions in plain language (`bench/nl_quality.py`): {s['memories']} memories in {s['projects']} projects, "
        f"{s['queries']} questions ({', '.join(f'{c} {n}' for c, n in s['classes'].items())}); "
        f"embedder `{res.get('embedder', 'static')}` (the service's and the bm25+dense baseline's). "
        "R@5 / R@10 / MRR per tool (asked for 10) and class; `bm25` and `bm25+dense` are the baselines, "
        "computed in the same run on the same memories.",
        "",
    ]
    for backend, b in res["backends"].items():
        if b.get("status") != "done":
            lines += [f"**{backend}**: not run ({b.get('reason')})", ""]
            continue
        classes = sorted({c for t in b["tools"].values() for c in t})
        lines += [f"**{backend}** ({b['seconds']} s)", ""]
        lines += ["| tool | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
        for tool, t in b["tools"].items():
            cells = [f"{t[c]['r5']} / {t[c]['r10']} / {t[c]['mrr']}" if c in t else "–" for c in classes]
            lines.append(f"| {tool} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines
