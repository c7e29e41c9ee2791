"""The embedded backend's vector cache after a vector is written (``mnemo.backends.sqlite.vectors``):
the next search reads the vectors written since it last looked, and only those — its cost does not
grow with the project (it scanned every record of the project once: 115-130 ms at 100,000 memories
for the first vector search after each memory's vector was written after the answer)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from mnemo.backends.sqlite import SqliteBackend
from mnemo.backends.sqlite.vectors import VectorSearch
from mnemo.models.records import Embedding
from mnemo.ports import MemoryFilter, Scope, VectorQuery
from mnemo.service import tenancy

from tests.support.records import memory_record

NOW = datetime(2026, 12, 1, tzinfo=UTC)
DIM = 8
MODEL = "refresh-test"


def _vector(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(DIM)
    return (v / np.linalg.norm(v)).tolist()


def _steps_of_the_search_after_a_write(path: Path, size: int) -> tuple[int, int]:
    """SQLite's VM steps (in hundreds) of a vector search right after one more vector is written, in a
    project of ``size`` memories with vectors; and how many hits it gave."""
    backend = SqliteBackend(path)
    workspace, project = tenancy.create_workspace(backend, "refresh")
    scope = Scope(workspace.id, project.id)
    rng = np.random.default_rng(size)
    with backend.store.unit_of_work():
        for _ in range(size):
            record = memory_record(scope=scope, at=NOW, embedding=Embedding.of(MODEL, _vector(rng)))
            backend.store.create(record)
            backend.index.upsert(record)
    search = VectorSearch(backend.db, ann_min=None)
    query = VectorQuery(scope, _vector(rng), MODEL, MemoryFilter(now=NOW), 5, 0.0)
    search.similar(query)  # the cache holds the project's vectors
    record = memory_record(scope=scope, at=NOW, embedding=Embedding.of(MODEL, query.vector))
    with backend.store.unit_of_work():
        backend.store.create(record)
        backend.index.upsert(record)
    conn = backend.db.conn()
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(step, 100)
    try:
        hits = search.similar(query)
    finally:
        conn.set_progress_handler(None, 0)
    assert hits[0].record.id == record.id  # the vector written last was read: it is the query's own
    backend.close()
    return steps[0], len(hits)


def test_the_search_after_a_vector_is_written_costs_the_same_in_a_project_ten_times_larger(tmp_path: Path) -> None:
    small, _ = _steps_of_the_search_after_a_write(tmp_path / "small.db", 200)
    large, hits = _steps_of_the_search_after_a_write(tmp_path / "large.db", 2000)
    assert hits == 5
    assert large < 2 * small + 20, (small, large)
