"""Retrieval quality: the labelled set (``bench/quality_set.py``, ``bench/data/quality.json``)
loaded into each backend and asked every query through ``Service.invoke``, by every retrieval
tool; recall@5 and MRR per tool, query class and backend, and the strict tools' precision on
their own contract.

* **recall@5**: of the memories a query should find (at most 5), the share among the tool's first
  5 results; **MRR**: 1 / the rank of the first memory it should find (0 when none is in the
  first 5), averaged over the class's queries.
* **strict precision** (``search_memory``, ``memory_search``): of everything they returned, the
  share that holds every query term by the strict contract — an English word of the same Snowball
  stem, each CJK character pair as written, the query's stop words not required (unless it has
  nothing else) — checked here by a tokenizer of this module's own, not Mnemo's (only the stop-word
  lists are Mnemo's: they are the contract's, docs/retrieval.md "Stop words").
* ``memory_search`` has no ``path_filter`` (its ``kind`` is exact: the ``memory_type`` queries use
  it); it is not asked the ``path_filter`` queries.
* ``recall_context`` is asked for 5 items; its ``references`` are its ranking.

The memories are loaded through the backend's own ports with the set's times (``created_at``,
``updated_at``), into a fresh workspace; on AWS into moto (server mode) and a real OpenSearch node,
started and stopped here, with the index refreshed once after loading.
"""

from __future__ import annotations

import random
import re
import tempfile
import unicodedata
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import quality_set

#: the tools, and recall's modes besides its default (``hybrid``): ``tool:mode``
TOOLS = (
    "memory_search",
    "search_memory",
    "recall",
    "recall:lexical",
    "recall:semantic",
    "recall_context",
    "recall_context:lexical",
)
STRICT = ("memory_search", "search_memory")
K = 5


def _load(ports: Any, data: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """A workspace holding the set's memories; (the caller, memory id → the set's id)."""
    from mnemo.config import Settings
    from mnemo.embedding import build_embedder
    from mnemo.models.records import Embedding, MemoryRecord, RateLimits
    from mnemo.ports import Scope, VersionConflict
    from mnemo.service import tenancy
    from mnemo.service.pipeline import Service
    from ulid import ULID

    cfg = Settings()
    svc = Service(ports, embedder=build_embedder(cfg.embedder, cfg))  # MNEMO_EMBEDDER, default static
    workspace, project = tenancy.create_workspace(ports, "quality")
    ports.tenants.set_limits(workspace.id, RateLimits(search=1_000_000, write=1_000_000))
    key = tenancy.create_key(ports, workspace.id, label="quality", scopes=["memory:read", "memory:write"]).plain
    rng = random.Random(quality_set.SEED)
    names: dict[str, str] = {}
    embedder = svc.embedder
    vectors = embedder.embed([m["content"] for m in data["memories"]]) if embedder else [None] * len(data["memories"])
    with ports.store.unit_of_work():
        for memory, vector in zip(data["memories"], vectors, strict=True):
            created = datetime.fromisoformat(memory["created_at"])
            ulid = ULID.from_bytes(int(created.timestamp() * 1000).to_bytes(6, "big") + rng.randbytes(10))
            record = MemoryRecord(
                id=f"mem_{ulid}",
                workspace_id=workspace.id,
                project_id=project.id,
                content=memory["content"],
                kind=memory["kind"],
                tags=memory["tags"],
                path=memory["path"],
                source="quality",
                version=1,
                created_at=created,
                updated_at=datetime.fromisoformat(memory["updated_at"]),
                embedding=Embedding.of(embedder.model, vector) if embedder and vector else None,
            )
            try:
                ports.store.create(record)
            except VersionConflict:
                # moto under load: a retried create whose first attempt was stored after all
                stored = ports.store.get(Scope(workspace.id, project.id), record.id)
                if stored is None or (stored.version, stored.content) != (record.version, record.content):
                    raise
            ports.index.upsert(record)
            names[record.id] = memory["id"]
    return (svc, svc.authenticate(f"Bearer {key}")), names


def _arguments(tool: str, query: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's arguments for a query (None: the tool cannot ask it)."""
    tool, _, mode = tool.partition(":")
    if mode:
        plain = _arguments(tool, query)
        return None if plain is None else {**plain, "mode": mode}
    window = {k: query[k] for k in ("updated_after", "updated_before") if k in query}
    if tool == "memory_search":
        if "path_filter" in query:
            return None
        kind = {"kind": query["memory_type"]} if "memory_type" in query else {}
        return {"q": query["query"], "limit": K, **kind, **window}
    filters = {k: query[k] for k in ("path_filter", "memory_type") if k in query}
    size = {"max_items": K, "max_tokens": 50_000} if tool.startswith("recall_context") else {"limit": K}
    return {"query": query["query"], **size, **filters, **window}


def _ranked(tool: str, result: Any) -> list[str]:
    tool = tool.partition(":")[0]
    if tool == "memory_search":
        return [m.id for m in result.memories]
    if tool == "recall_context":
        return list(result.references)
    return [item.reference for item in result.results]


# -- the strict contract, checked without mnemo.text ----------------------------------------------

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7ff]+")
_WORD = re.compile(r"[^\W_]+")


def _fold(value: str) -> str:
    return unicodedata.normalize("NFKC", value).casefold()


def strict_terms(query: str) -> tuple[list[str], list[str]]:
    """The query's English words (as stems) and CJK character pairs (a lone character alone), its
    stop words left out unless it has nothing else."""
    import Stemmer
    from mnemo.text import STOP_WORDS

    stemmer = Stemmer.Stemmer("english")
    folded = _fold(query)
    pairs = []
    for run in _CJK.findall(folded):
        pairs += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    words = list(_WORD.findall(_CJK.sub(" ", folded)))
    meaningful = [w for w in words if w not in STOP_WORDS], [p for p in pairs if p not in STOP_WORDS]
    if any(meaningful):  # a query of stop words only keeps them all
        words, pairs = meaningful
    return [stemmer.stemWord(w) if w.isascii() and not w.isdigit() else w for w in words], pairs


def holds_every_term(memory: dict[str, Any], query: str) -> bool:
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    text = _fold(" ".join([memory["content"], *memory["tags"], memory["path"] or ""]))
    words = {stemmer.stemWord(w) if w.isascii() and not w.isdigit() else w for w in _WORD.findall(_CJK.sub(" ", text))}
    stems, pairs = strict_terms(query)
    return all(s in words for s in stems) and all(p in text for p in pairs)


# -- running ------------------------------------------------------------------------------------


def evaluate(svc: Any, caller: Any, names: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    by_id = {m["id"]: m for m in data["memories"]}
    rows: dict[str, dict[str, list[tuple[float, float]]]] = {tool: defaultdict(list) for tool in TOOLS}
    returned = dict.fromkeys(STRICT, 0)
    holding = dict.fromkeys(STRICT, 0)
    empty_on_partial = dict.fromkeys(STRICT, 0)
    for query in data["queries"]:
        wanted = set(query["relevant"])
        for tool in TOOLS:
            arguments = _arguments(tool, query)
            if arguments is None:
                continue
            name = tool.partition(":")[0]
            found = [names[ref] for ref in _ranked(tool, svc.invoke(name, caller, arguments).result)][:K]
            hit = [i for i, ref in enumerate(found) if ref in wanted]
            rows[tool][query["class"]].append((len(hit) / len(wanted), 1 / (hit[0] + 1) if hit else 0.0))
            if tool in STRICT and query["query"].strip():
                returned[tool] += len(found)
                holding[tool] += sum(holds_every_term(by_id[ref], query["query"]) for ref in found)
                if query["class"] == "partial" and not found:
                    empty_on_partial[tool] += 1
    partial = sum(q["class"] == "partial" for q in data["queries"])
    out: dict[str, Any] = {}
    for tool, classes in rows.items():
        every = [r for values in classes.values() for r in values]
        out[tool] = {
            "classes": {cls: _summary(values) for cls, values in sorted(classes.items())},
            "all": _summary(every),
        }
        if tool in STRICT:
            out[tool]["strict_precision"] = round(holding[tool] / returned[tool], 4) if returned[tool] else None
            out[tool]["strict_returned"] = returned[tool]
            out[tool]["partial_answered_nothing"] = f"{empty_on_partial[tool]}/{partial}"
    return out


def _summary(values: list[tuple[float, float]]) -> dict[str, Any]:
    n = len(values)
    return {
        "n": n,
        "recall_at_5": round(sum(r for r, _ in values) / n, 3) if n else None,
        "mrr": round(sum(m for _, m in values) / n, 3) if n else None,
    }


def backend_ports(name: str, workdir: Path, prefix: str) -> Any:
    """The ports of backend ``name`` as a context manager (SQLite in a new folder under ``workdir``),
    or, when the AWS stack cannot run here, the reason as a string."""
    if name == "aws":
        from bench.cost import available

        ok, reason = available()
        return aws_ports() if ok else reason
    return sqlite_ports(Path(tempfile.mkdtemp(prefix=prefix, dir=workdir)))


@contextmanager
def sqlite_ports(workdir: Path) -> Iterator[Any]:
    from mnemo.backends.sqlite import SqliteBackend

    backend = SqliteBackend(workdir / "quality.db")
    try:
        yield backend
    finally:
        backend.close()


@contextmanager
def aws_ports() -> Iterator[Any]:
    from mnemo.backends.aws import AwsBackend

    from bench.aws import local_stack
    from tests.support.aws_stack import moto_server

    with local_stack(moto_server, opensearch_refresh="false") as cfg:
        backend = AwsBackend.from_settings(cfg)
        # The set's memories carry past times, so the read-your-writes Query of the last 60 s
        # (docs/aws.md) finds none and changes no answer; it is off here because moto answers
        # it by sorting the project's whole partition (~0.5 s a search at 2,760 memories,
        # bench/results/aws-after-corpus-in-table.md), twice per hybrid recall.
        backend.index.read_your_writes(backend.store, window_s=0, first_page=cfg.search_recent_page)
        try:
            yield backend
        finally:
            backend.close()


def run(workdir: Path, backends: tuple[str, ...] = ("sqlite", "aws")) -> dict[str, Any]:
    import time

    data = quality_set.load()
    from mnemo.config import Settings

    out: dict[str, Any] = {
        "embedder": Settings().embedder,
        "set": {
            "memories": len(data["memories"]),
            "queries": len(data["queries"]),
            "classes": {c: sum(q["class"] == c for q in data["queries"]) for c in _classes(data)},
            "languages": {lang: sum(m["lang"] == lang for m in data["memories"]) for lang in ("en", "zh", "ja")},
        },
        "backends": {},
    }
    for name in backends:
        started = time.perf_counter()
        context = backend_ports(name, workdir, "quality-")
        if isinstance(context, str):
            out["backends"][name] = {"status": "not run", "reason": context}
            continue
        with context as ports:
            (svc, caller), names = _load(ports, data)
            if name == "aws":
                ports.index.client.indices.refresh(index=ports.index.alias)
            out["backends"][name] = {"status": "done", "tools": evaluate(svc, caller, names, data)}
        out["backends"][name]["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _classes(data: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(q["class"] for q in data["queries"]))


def markdown(res: dict[str, Any]) -> list[str]:
    s = res["set"]
    classes = list(s["classes"])
    lines = [
        f"The labelled set `bench/data/quality.json` (`bench/quality_set.py`): {s['memories']} memories "
        f"({', '.join(f'{n} {lang}' for lang, n in s['languages'].items())}), {s['queries']} queries "
        f"({', '.join(f'{c} {n}' for c, n in s['classes'].items())}); embedder `{res.get('embedder', 'static')}`. "
        "recall@5 / MRR per tool and class; "
        "`memory_search` is not asked the path_filter queries.",
        "",
    ]
    for backend, b in res["backends"].items():
        if b.get("status") != "done":
            lines += [f"**{backend}**: not run ({b.get('reason')})", ""]
            continue
        lines += [f"**{backend}** ({b['seconds']} s)", ""]
        header = ["tool", *classes, "all"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for tool, t in b["tools"].items():
            cells = [tool]
            for cls in [*classes, "all"]:
                c = t["all"] if cls == "all" else t["classes"].get(cls)
                cells.append(f"{c['recall_at_5']} / {c['mrr']}" if c and c["n"] else "–")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        strict = [
            f"`{tool}` {t['strict_precision']} ({t['strict_returned']} results; answered nothing to "
            f"{t['partial_answered_nothing']} partial queries)"
            for tool, t in b["tools"].items()
            if "strict_precision" in t
        ]
        lines += ["Strict precision (results holding every query term): " + "; ".join(strict) + ".", ""]
    return lines
