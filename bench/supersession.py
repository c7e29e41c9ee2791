"""Memory that stays true (issue 39, item 6): a superseded memory never answers by default, and
what supersession, ``similar``, history and reading time cost ``memory_add`` and ``recall``.

The corpus, one project of ``--memories`` memories (default 10,000) on the SQLite backend with
the default embedder (vectors for every memory, as ``memory_add`` makes them):

* 400 facts, each saved twice through ``memory_add``: ``The amber-falcon service deploys on
  Friday from eu-west`` and, later, ``The amber-falcon service deploys on Tuesday from eu-west
  now`` with ``supersedes: [the first]``; old and new share nearly every word, so only the
  supersession filter can keep the old one out;
* filler notes of a shared vocabulary (services, days, regions among other words) up to the count.

**The class.** One question per fact (``when does the amber-falcon service deploy``) to each
search tool (``recall``, ``search_memory``, ``memory_search``, ``recall_context``): by default
the number of answers holding a superseded memory anywhere (the figure must be 0) and how often
the new fact is in the top 5; with ``include_superseded: true``, how often the old one is back in
the top 5 and whether each superseded result carries its ``superseded_by`` mark.

**The costs,** paired: each pair of calls runs back to back on the same state, A then B then A
…, so drift on this shared machine lands on both sides; wall time per call in-process (no
HTTP), p50 / p99 and the median of the per-pair differences:

* ``memory_add`` with ``similar`` (the default) against the same add with ``similar`` switched
  off (``mnemo.service.similar.near`` answering nothing): what ``similar`` costs an add;
* ``memory_add`` with ``supersedes: [a fresh memory]`` against a plain add: supersession's cost;
* ``memory_update`` of content keeping the previous version against the same update with
  ``MemoryStore.keep_version`` a no-op: history's cost;
* ``recall`` of a fact question against the same with ``include_superseded: true``;
* ``recall`` of a time question (``… deploy last week``) read (``parse_time`` true, the default)
  against ``parse_time: false``.

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python -m bench.supersession [--memories N] [--pairs P]``
(JSON on stdout; ``MNEMO_EMBEDDER`` chooses the embedder as for the server).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ADJECTIVES = ["amber", "brisk", "cobalt", "dusty", "eager", "frosty", "golden", "hollow", "ivory", "jade"]
ADJECTIVES += ["keen", "lunar", "misty", "noble", "olive", "polar", "quiet", "rusty", "silver", "tidal"]
NOUNS = ["falcon", "badger", "cedar", "dune", "ember", "fjord", "glacier", "heron", "island", "jaguar"]
NOUNS += ["kestrel", "lagoon", "meadow", "nebula", "orchid", "prairie", "quartz", "raven", "summit", "tundra"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
REGIONS = ["eu-west", "us-east", "ap-south", "sa-east", "ca-central"]
FILLER = ["the", "service", "deploys", "cache", "queue", "schema", "owner", "review", "budget", "latency"]
FILLER += ["incident", "runbook", "alert", "migration", "retry", "token", "shard", "replica", "quota", "rollback"]
FACTS = 400
K = 5
TOOLS = ("recall", "search_memory", "memory_search", "recall_context")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _summary(ms: list[float]) -> dict[str, float]:
    return {"p50_ms": round(_pct(ms, 0.5), 2), "p99_ms": round(_pct(ms, 0.99), 2)}


class Bench:
    def __init__(self, ports: Any) -> None:
        from mnemo.config import Settings
        from mnemo.embedding import build_embedder
        from mnemo.models.records import RateLimits
        from mnemo.service import tenancy
        from mnemo.service.pipeline import Service

        cfg = Settings()
        self.ports = ports
        self.svc = Service(ports, embedder=build_embedder(cfg.embedder, cfg))
        workspace, self.project = tenancy.create_workspace(ports, "supersession")
        ports.tenants.set_limits(workspace.id, RateLimits(search=1_000_000, write=1_000_000))
        key = tenancy.create_key(ports, workspace.id, label="bench", scopes=["memory:read", "memory:write"]).plain
        self.caller = self.svc.authenticate(f"Bearer {key}")
        self.rng = random.Random(39)

    def call(self, tool: str, **arguments: Any) -> Any:
        return self.svc.invoke(tool, self.caller, arguments).result

    def fill(self, count: int) -> list[tuple[str, str, str]]:
        """The facts (question, old id, new id), then filler up to ``count`` memories."""
        facts = []
        names = [f"{a}-{n}" for a in ADJECTIVES for n in NOUNS]
        self.rng.shuffle(names)
        for name in names[:FACTS]:
            region = self.rng.choice(REGIONS)
            before, after = self.rng.sample(DAYS, 2)
            old = self.call("memory_add", content=f"The {name} service deploys on {before} from {region}").memory
            new = self.call(
                "memory_add", content=f"The {name} service deploys on {after} from {region} now", supersedes=[old.id]
            ).memory
            facts.append((f"when does the {name} service deploy", old.id, new.id))
        self._filler(count - 2 * FACTS)
        return facts

    def _filler(self, count: int) -> None:
        from mnemo.ids import memory_id
        from mnemo.models.common import utc_now
        from mnemo.models.records import Embedding, MemoryRecord

        embedder = self.svc.embedder
        texts = [
            " ".join(self.rng.choice(FILLER + DAYS + REGIONS) for _ in range(self.rng.randrange(6, 14)))
            for _ in range(count)
        ]
        for start in range(0, len(texts), 256):
            chunk = texts[start : start + 256]
            vectors = embedder.embed(chunk) if embedder is not None else [None] * len(chunk)
            with self.ports.store.unit_of_work():
                for text, vector in zip(chunk, vectors, strict=True):
                    now = utc_now()
                    record = MemoryRecord(
                        id=memory_id(),
                        workspace_id=self.project.workspace_id,
                        project_id=self.project.id,
                        content=f"note {start}: {text}",
                        source="bench",
                        version=1,
                        created_at=now,
                        updated_at=now,
                        embedding=None if vector is None else Embedding.of(embedder.model, vector),
                    )
                    self.ports.store.create(record)

    def references(self, tool: str, question: str, include: bool) -> tuple[list[str], list[Any]]:
        """The answer's ids in rank order (all of them) and its results (marks included)."""
        args: dict[str, Any] = {"include_superseded": include}
        if tool == "memory_search":
            result = self.call(tool, q=question, limit=20, **args)
            return [m.id for m in result.memories], list(result.memories)
        if tool == "recall_context":
            result = self.call(tool, query=question, max_tokens=400, output_json=True, **args)
            return list(result.references), list(result.items or [])
        result = self.call(tool, query=question, limit=20, **args)
        return [r.reference for r in result.results], list(result.results)

    def the_class(self, facts: list[tuple[str, str, str]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        old_ids = {old for _, old, _ in facts}
        for tool in TOOLS:
            leaked = new_top = old_back = unmarked = 0
            for question, old, new in facts:
                refs, _ = self.references(tool, question, include=False)
                leaked += bool(old_ids & set(refs))
                new_top += new in refs[:K]
                refs, results = self.references(tool, question, include=True)
                old_back += old in refs[:K]
                for ref, result in zip(refs, results, strict=True):
                    if ref in old_ids and getattr(result, "superseded_by", None) is None:
                        unmarked += 1
            out[tool] = {
                "answers_with_a_superseded_memory": leaked,
                "new_fact_in_top_5": round(new_top / len(facts), 3),
                "include_superseded": {
                    "old_fact_in_top_5": round(old_back / len(facts), 3),
                    "superseded_results_without_their_mark": unmarked,
                },
            }
        return out

    def paired(self, pairs: int, a: Callable[[int], None], b: Callable[[int], None]) -> dict[str, Any]:
        """``a`` and ``b`` alternated ``pairs`` times (each told its pair's number), wall ms."""
        ms_a: list[float] = []
        ms_b: list[float] = []
        for n in range(pairs):
            for fn, ms in ((a, ms_a), (b, ms_b)) if n % 2 == 0 else ((b, ms_b), (a, ms_a)):
                started = time.perf_counter()
                fn(n)
                ms.append((time.perf_counter() - started) * 1000)
        diffs = [x - y for x, y in zip(ms_a, ms_b, strict=True)]
        return {
            "with": _summary(ms_a),
            "without": _summary(ms_b),
            "median_difference_ms": round(statistics.median(diffs), 2),
        }

    def costs(self, facts: list[tuple[str, str, str]], pairs: int) -> dict[str, Any]:
        from mnemo.service import similar

        def content(tag: str, n: int) -> str:
            name = self.rng.choice(ADJECTIVES) + "-" + self.rng.choice(NOUNS)
            return f"{tag} {n}: the {name} service deploys on {self.rng.choice(DAYS)} from {self.rng.choice(REGIONS)}"

        @contextmanager
        def patched(owner: Any, name: str, value: Any) -> Any:
            saved = getattr(owner, name)
            setattr(owner, name, value)
            try:
                yield
            finally:
                setattr(owner, name, saved)

        def add(tag: str) -> Callable[[int], None]:
            return lambda n: self.call("memory_add", content=content(tag, n))

        def add_without_similar(n: int) -> None:
            with patched(similar, "near", lambda ctx, record: []):
                self.call("memory_add", content=content("plain-nosim", n))

        targets = [self.call("memory_add", content=content("target", n)).memory.id for n in range(pairs)]
        edited = [self.call("memory_add", content=content("edited", n)).memory.id for n in range(2 * pairs)]
        store_type = type(self.ports.store)

        def update(n: int) -> None:
            self.call("memory_update", id=edited[n], content=content("edited-now", n))

        def update_without_history(n: int) -> None:
            with patched(store_type, "keep_version", lambda *a, **k: None):
                self.call("memory_update", id=edited[pairs + n], content=content("edited-now", n))

        questions = [q for q, _, _ in facts]
        return {
            "memory_add: similar": self.paired(pairs, add("plain"), add_without_similar),
            "memory_add: supersedes one": self.paired(
                pairs,
                lambda n: self.call("memory_add", content=content("new", n), supersedes=[targets[n]]),
                add("plain"),
            ),
            "memory_update: history kept": self.paired(pairs, update, update_without_history),
            "recall: include_superseded": self.paired(
                pairs,
                lambda n: self.call("recall", query=questions[n % len(questions)], include_superseded=True),
                lambda n: self.call("recall", query=questions[n % len(questions)]),
            ),
            "recall: time read (parse_time)": self.paired(
                pairs,
                lambda n: self.call("recall", query=questions[n % len(questions)] + " last week"),
                lambda n: self.call("recall", query=questions[n % len(questions)] + " last week", parse_time=False),
            ),
        }


def run(count: int, pairs: int) -> dict[str, Any]:
    from mnemo.backends.sqlite import SqliteBackend

    with tempfile.TemporaryDirectory() as tmp:
        backend = SqliteBackend(Path(tmp) / "supersession.db")
        try:
            bench = Bench(backend)
            started = time.perf_counter()
            facts = bench.fill(count)
            loaded = time.perf_counter() - started
            result = {
                "memories": count,
                "facts": len(facts),
                "embedder": bench.svc.embedder.model if bench.svc.embedder is not None else "none",
                "when": datetime.now(UTC).isoformat(timespec="seconds"),
                "load_s": round(loaded, 1),
                "class": bench.the_class(facts),
                "costs": bench.costs(facts, pairs),
            }
        finally:
            backend.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--pairs", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    print(json.dumps(run(args.memories, args.pairs), indent=2))


if __name__ == "__main__":
    main()
