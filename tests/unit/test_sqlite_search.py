"""The SQLite index's search strategies agree, and an index of an older layout is rebuilt.

``SqliteSearchIndex.search`` ranks inside FTS5 first and reads only the best candidates'
records; when visibility or ties at its edge leave too few, a second round asks for as many
candidates as the first round's pass rate says are needed, and past that it falls back to the
joined statement, which the caller's own filters (kind, tags, LIKE patterns, a team) go to first;
these tests hold it to the plain joined statement on exactly those edges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemo.backends.sqlite import SqliteBackend
from mnemo.backends.sqlite.db import INDEX_VERSION
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexQuery, MemoryFilter, Scope
from mnemo.text import query_terms
from ulid import ULID

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCOPE = Scope("ws_1", "prj_1")


def _add(
    backend: SqliteBackend, content: str, *, kind: str | None = None, team: str | None = None, minutes: int = 0
) -> MemoryRecord:
    at = NOW - timedelta(days=1) + timedelta(minutes=minutes)
    record = MemoryRecord(
        id=f"mem_{ULID()}",
        workspace_id=SCOPE.workspace_id,
        project_id=SCOPE.project_id,
        content=content,
        kind=kind,
        team_id=team,
        source="test",
        version=1,
        created_at=at,
        updated_at=at,
    )
    with backend.store.unit_of_work():
        backend.store.create(record)
        backend.index.upsert(record)
    return record


def _query(q: str, limit: int, kind: str | None = None) -> IndexQuery:
    return IndexQuery(SCOPE, query_terms(q), "all", MemoryFilter(now=NOW, kind=kind), limit)


def _ids(hits: list) -> list[str]:
    return [h.record.id for h in hits]


def test_a_filter_that_rejects_the_best_candidates_still_finds_the_best_matching_records(
    sqlite_backend: SqliteBackend,
) -> None:
    # Given 300 short (best-scoring) memories of kind "x" and 20 longer ones of kind "y"
    for i in range(300):
        _add(sqlite_backend, f"alpha {i}", kind="x", minutes=i)
    for i in range(20):
        _add(sqlite_backend, f"alpha beta gamma delta epsilon {i}", kind="y", minutes=i)
    # When searching for kind "y" only
    hits = sqlite_backend.index.search(_query("alpha", 5, kind="y"))
    # Then the answer is the joined statement's, five records of kind "y"
    assert _ids(hits) == _ids(sqlite_backend.index._search_joined(_query("alpha", 5, kind="y")))
    assert len(hits) == 5
    assert {h.record.kind for h in hits} == {"y"}


def test_a_second_round_sized_by_the_pass_rate_finds_what_the_joined_statement_finds(
    sqlite_backend: SqliteBackend,
) -> None:
    # Given 600 memories of which only every tenth is of a team the key sees (visibility alone
    # ranks first: it is not one of the caller's own filters)
    for i in range(600):
        _add(sqlite_backend, f"alpha {i}", team="red" if i % 10 == 0 else "blue", minutes=i)
    query = IndexQuery(SCOPE, query_terms("alpha"), "all", MemoryFilter(now=NOW, visible_teams=frozenset({"red"})), 20)
    # When searching for 20: the first round (80 candidates) finds about 8 the key may see
    hits = sqlite_backend.index.search(query)
    # Then the second round finds the rest, exactly as the joined statement orders them
    assert len(hits) == 20
    assert {h.record.team_id for h in hits} == {"red"}
    assert _ids(hits) == _ids(sqlite_backend.index._search_joined(query))


def test_the_callers_own_filters_go_to_the_joined_statement_first(sqlite_backend: SqliteBackend) -> None:
    # Given memories where a LIKE pattern passes none of the best candidates
    for i in range(300):
        _add(sqlite_backend, f"alpha {i}", kind="x", minutes=i)
    rare = _add(sqlite_backend, "alpha beta gamma delta epsilon", kind="rare")
    statements: list[str] = []
    sqlite_backend.db.conn().set_trace_callback(statements.append)
    flt = MemoryFilter(now=NOW, kind_like="ra%")
    # When searching with it
    hits = sqlite_backend.index.search(IndexQuery(SCOPE, query_terms("alpha"), "all", flt, 5))
    sqlite_backend.db.conn().set_trace_callback(None)
    # Then one statement ranks the matches that pass, and nothing is ranked twice
    assert _ids(hits) == [rare.id]
    assert sum("bm25" in sql for sql in statements) == 1


def test_equal_scores_past_the_first_candidates_come_newest_first(sqlite_backend: SqliteBackend) -> None:
    # Given 300 memories with identical content (identical scores), written a minute apart
    records = [_add(sqlite_backend, "alpha beta", minutes=i) for i in range(300)]
    # When searching with a limit
    hits = sqlite_backend.index.search(_query("alpha", 10))
    # Then the ten newest come first, as the joined statement orders them
    assert _ids(hits) == [r.id for r in reversed(records[-10:])]
    assert _ids(hits) == _ids(sqlite_backend.index._search_joined(_query("alpha", 10)))


def test_a_database_indexed_in_an_older_layout_is_reindexed_when_opened(tmp_path: Path) -> None:
    # Given a database whose index is missing (as if written by an older layout)
    backend = SqliteBackend(tmp_path / "mnemo.db")
    record = _add(backend, "数据库延迟很高 needs a cache")
    conn = backend.db.conn()
    conn.execute("DELETE FROM memory_fts")
    conn.execute("PRAGMA user_version = 0")
    backend.close()
    # When it is opened again
    reopened = SqliteBackend(tmp_path / "mnemo.db")
    # Then its records are searchable and the layout version is current
    assert _ids(reopened.index.search(_query("延迟 cache", 5))) == [record.id]
    assert reopened.db.conn().execute("PRAGMA user_version").fetchone()[0] == INDEX_VERSION
    reopened.close()
