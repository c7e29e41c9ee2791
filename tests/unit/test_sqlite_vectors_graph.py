"""The embedded backend's approximate vector search (``mnemo.backends.sqlite.vectors``, usearch
HNSW from ``ann_min`` vectors): it answers as exact search does where the graph cannot be trusted
— a selective filter — and sees vectors written after the graph was built."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.backends.sqlite.vectors import VectorSearch
from mnemo.models.records import Embedding, MemoryRecord
from mnemo.ports import MemoryFilter, Scope, VectorQuery
from mnemo.service import tenancy

from tests.support.records import memory_record

NOW = datetime(2026, 12, 1, tzinfo=UTC)
DIM = 16
MODEL = "graph-test"
SIZE = 400


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@pytest.fixture
def project(tmp_path: Path):
    backend = SqliteBackend(tmp_path / "graph.db")
    workspace, project = tenancy.create_workspace(backend, "graph")
    scope = Scope(workspace.id, project.id)
    rng = np.random.default_rng(5)
    centres = _unit(rng.standard_normal((8, DIM)))
    vectors = _unit(centres[rng.integers(0, 8, SIZE)] + 0.3 * rng.standard_normal((SIZE, DIM)))
    with backend.store.unit_of_work():
        for i, vector in enumerate(vectors):
            # every 40th memory is of kind "rare": a filter that keeps 10 of 400
            _write(backend, scope, vector, "rare" if i % 40 == 0 else "note")
    yield backend, scope, centres
    backend.close()


def _write(backend: SqliteBackend, scope: Scope, vector: np.ndarray, kind: str) -> MemoryRecord:
    record = memory_record(scope=scope, at=NOW, kind=kind, embedding=Embedding.of(MODEL, vector.tolist()))
    backend.store.create(record)
    backend.index.upsert(record)
    return record


def _graph_search(backend: SqliteBackend, scope: Scope) -> VectorSearch:
    search = VectorSearch(backend.db, ann_min=100)
    search.similar(_query(scope, np.ones(DIM)))  # loads the matrix, starts the graph's build
    deadline = time.monotonic() + 60
    while not search.ann_ready(scope.project_id):
        assert time.monotonic() < deadline, "the graph was not built in 60 s"
        time.sleep(0.05)
    return search


def _query(
    scope: Scope, vector: np.ndarray, *, kind: str | None = None, limit: int = 10, min_score: float = 0.0
) -> VectorQuery:
    flt = MemoryFilter(now=NOW, kind=kind)
    return VectorQuery(scope, _unit(np.asarray(vector, float)).tolist(), MODEL, flt, limit, min_score)


def _ids(hits) -> list[str]:
    return [h.record.id for h in hits]


def test_a_selective_filter_finds_what_exact_search_finds(project) -> None:
    # Given a graph over 400 vectors, 10 of them of kind "rare"
    backend, scope, centres = project
    graph, exact = _graph_search(backend, scope), VectorSearch(backend.db, ann_min=None)
    for centre in centres:
        # When every vector clears the floor, and the filter keeps fewer memories than the
        # graph's neighbours hold (128 of 400: about 3 "rare" ones among them)
        query = _query(scope, centre, kind="rare", limit=10, min_score=-1.0)
        # Then the answer is exact search's: all 10, in the same order
        hits = graph.similar(query)
        assert _ids(hits) == _ids(exact.similar(query))
        assert len(hits) == 10


def test_unfiltered_answers_keep_exact_search_top_ten(project) -> None:
    backend, scope, centres = project
    graph, exact = _graph_search(backend, scope), VectorSearch(backend.db, ann_min=None)
    for centre in centres:
        query = _query(scope, centre)
        assert set(_ids(graph.similar(query))) == set(_ids(exact.similar(query)))


def test_a_vector_written_after_the_build_is_found(project) -> None:
    backend, scope, _ = project
    graph = _graph_search(backend, scope)
    # Given a memory written after the graph was built, pointing where no other memory does
    lonely = _unit(np.arange(DIM, dtype=float) - DIM / 2)
    record = _write(backend, scope, lonely, "note")
    # Then it is the nearest to its own vector, found through the graph
    hits = graph.similar(_query(scope, lonely, limit=1))
    assert graph.ann_ready(scope.project_id)
    assert _ids(hits) == [record.id] and hits[0].score == pytest.approx(1.0, abs=1e-5)


def _saved(search: VectorSearch, scope: Scope) -> list[Path]:
    assert search.ann_dir is not None
    return sorted((search.ann_dir / scope.project_id).glob("*.usearch"))


def test_another_process_loads_the_saved_graph_and_sees_what_changed_since(project) -> None:
    # Given a graph built by one process (saved beside the database)
    backend, scope, centres = project
    first = _graph_search(backend, scope)
    assert first.ann_source(scope.project_id) == "built"
    (before,) = _saved(first, scope)
    # and, after it was saved, a memory written and one deleted
    lonely = _unit(np.arange(DIM, dtype=float) - DIM / 2)
    added = _write(backend, scope, lonely, "note")
    exact = VectorSearch(backend.db, ann_min=None)
    gone = _ids(exact.similar(_query(scope, centres[0], limit=1)))[0]
    backend.store.delete(scope, gone, expected_version=1)
    # When another process needs the graph
    second = _graph_search(backend, scope)
    # Then it loaded the saved one instead of building its own
    assert second.ann_source(scope.project_id) == "loaded"
    # and saved it back brought up to date (the deleted memory's vector gone from the disk too)
    (after,) = _saved(second, scope)
    assert after.name != before.name
    # and it finds the memory written since, never the one deleted, and exact search's top ten
    assert _ids(second.similar(_query(scope, lonely, limit=1))) == [added.id]
    for centre in centres:
        query = _query(scope, centre)
        found = _ids(second.similar(query))
        assert gone not in found
        assert set(found) == set(_ids(exact.similar(query)))


def test_a_damaged_or_far_behind_saved_graph_costs_a_build_never_an_answer(project) -> None:
    backend, scope, centres = project
    first = _graph_search(backend, scope)
    exact = VectorSearch(backend.db, ann_min=None)
    # Given the saved graph cut short
    (saved,) = _saved(first, scope)
    with saved.open("r+b") as file:
        file.truncate(saved.stat().st_size // 2)
    # When another process needs the graph, it builds one, answering as exact search does
    second = _graph_search(backend, scope)
    assert second.ann_source(scope.project_id) == "built"
    for centre in centres:
        query = _query(scope, centre)
        assert set(_ids(second.similar(query))) == set(_ids(exact.similar(query)))
    # and the rebuilt graph replaced the damaged file
    assert len(_saved(second, scope)) == 1
    assert VectorSearch(backend.db, ann_min=100).ann_dir == second.ann_dir
    third = _graph_search(backend, scope)
    assert third.ann_source(scope.project_id) == "loaded"
    # Given more than a tenth of the project (then 480) written since the last save
    rng = np.random.default_rng(9)
    with backend.store.unit_of_work():
        for vector in _unit(rng.standard_normal((SIZE // 5, DIM))):
            _write(backend, scope, vector, "note")
    # Then the next process builds afresh rather than patching that much into the old graph
    fourth = _graph_search(backend, scope)
    assert fourth.ann_source(scope.project_id) == "built"


def test_a_filter_that_passes_few_reads_a_bounded_number_of_statements(project) -> None:
    # Given exact search over 400 vectors, 10 of them of kind "rare", and a kind no memory has
    backend, scope, centres = project
    exact = VectorSearch(backend.db, ann_min=None)
    exact.similar(_query(scope, centres[0]))  # the matrix is loaded
    statements: list[str] = []
    backend.db.conn().set_trace_callback(statements.append)
    try:
        # When the filter keeps 10 of 400, or none
        rare = exact.similar(_query(scope, centres[0], kind="rare", limit=10, min_score=-1.0))
        reads_rare = len(statements)
        statements.clear()
        none = exact.similar(_query(scope, centres[0], kind="absent", limit=10, min_score=-1.0))
        reads_none = len(statements)
    finally:
        backend.db.conn().set_trace_callback(None)

    # Then it finds every rare one and no other, reading a few statements, not one per slice of rows
    assert sorted(h.record.kind for h in rare) == ["rare"] * 10 and none == []
    assert reads_rare <= 6 and reads_none <= 6, (reads_rare, reads_none)
