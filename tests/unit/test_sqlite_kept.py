"""The posting lists the SQLite index keeps in the process (``backends/sqlite/kept.py``) never serve
a stale list: the co-occurrence lookups and the searches through them give what SQLite's own
lookups give, however the postings change — written through this index (the kept lists follow),
through another connection (another ``mnemo serve`` worker: they go unused), or rolled back."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from mnemo.backends.sqlite import SqliteBackend, postings
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.backends.sqlite.index import SqliteSearchIndex
from mnemo.backends.sqlite.kept import MOST_NOTED, KeptLists
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexQuery, MemoryFilter, Scope
from mnemo.text import query_terms

from tests.support.records import memory_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCOPE = Scope("ws_1", "prj_1")
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "deploys", "deployment", "数据库", "缓存"]


def _add(backend: SqliteBackend, content: str, minutes: int = 0) -> MemoryRecord:
    record = memory_record(content, scope=SCOPE, at=NOW - timedelta(days=1) + timedelta(minutes=minutes))
    with backend.store.unit_of_work():
        backend.store.create(record)
        backend.index.upsert(record)
    return record


def _corpus(backend: SqliteBackend, rng: random.Random, n: int) -> list[MemoryRecord]:
    return [_add(backend, " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8))), minutes=i) for i in range(n)]


def _query(words: str, limit: int = 10, *, prefix: bool = False) -> IndexQuery:
    return IndexQuery(SCOPE, query_terms(words, latin_prefix=prefix), "any", MemoryFilter(now=NOW), limit)


def _cooccurring(index: SqliteSearchIndex, words: str, *, every: bool = False) -> dict[int, list[int]]:
    """The first term's documents holding the others (all of them, ``every``), as the engine asks
    the source: per document, the best impact of each term (0: not held)."""
    query = _query(words)
    conn = index.db.conn()
    plan, _, revs = postings.plan(conn, query)
    where, params = filter_sql(query.filter)
    source = postings.SqlPostings(conn, where, (SCOPE.workspace_id, SCOPE.project_id, *params), index.kept, plan, revs)
    joined = [list(term.keys) for term in plan[1:]]
    merged: dict[int, list[int]] = {}
    for doc, impact, *found in source.cooccurring(list(plan[0].keys), joined, len(joined), every=every):
        best = merged.setdefault(doc, [0] * len(plan))
        for i, value in enumerate([impact, *found]):
            best[i] = max(best[i], value or 0)
    return merged


def _kept_at_plan(index: SqliteSearchIndex, words: str) -> bool:
    """Whether the index keeps every list of the query's keys at the revision the database holds."""
    assert index.kept is not None
    plan, _, revs = postings.plan(index.db.conn(), _query(words))
    return all(index.kept.get(key, revs[key]) is not None for term in plan for key in term.keys)


def _answers(index: SqliteSearchIndex, queries: list[IndexQuery]) -> list[list[tuple[str, float]]]:
    return [[(h.record.id, round(h.score, 9)) for h in index.search(q)] for q in queries]


@pytest.fixture
def backend(tmp_path: Path) -> SqliteBackend:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    _corpus(backend, random.Random(5), 300)
    yield backend
    backend.close()


# -- the lists themselves -------------------------------------------------------------------------


def _list(*pairs: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([d for d, _ in pairs], dtype=np.int64), np.array([i for _, i in pairs], dtype=np.int32)


def _as_pairs(held: tuple[np.ndarray, np.ndarray] | None) -> list[tuple[int, int]] | None:
    return None if held is None else list(zip(held[0].tolist(), held[1].tolist(), strict=True))


def test_a_list_is_served_only_at_the_revision_it_was_kept_at() -> None:
    kept = KeptLists()
    kept.put(7, 100, *_list((1, 5), (4, 9)))
    assert _as_pairs(kept.get(7, 100)) == [(1, 5), (4, 9)]
    assert kept.get(7, 101) is None
    assert kept.get(8, 100) is None


def test_a_write_derives_the_new_revision_from_the_kept_one() -> None:
    kept = KeptLists()
    kept.put(7, 100, *_list((1, 5), (4, 9)))
    kept.changed(7, 100, 200, 3, 6)  # document 3 inserted
    assert _as_pairs(kept.get(7, 200)) == [(1, 5), (3, 6), (4, 9)]
    assert kept.get(7, 100) is None  # one revision per key
    kept.changed(7, 200, 300, 1, None)  # document 1 removed
    assert _as_pairs(kept.get(7, 300)) == [(3, 6), (4, 9)]
    kept.changed(7, 300, 400, 4, 2)  # document 4 written again with another impact
    assert _as_pairs(kept.get(7, 400)) == [(3, 6), (4, 2)]


def test_changes_noted_by_several_writes_apply_in_order_when_the_list_is_used() -> None:
    kept = KeptLists()
    kept.put(7, 100, *_list((2, 5), (4, 9), (8, 1)))
    rev = 100
    for n, (doc, impact) in enumerate([(4, None), (6, 3), (4, 7), (2, None), (9, 2), (6, None), (1, 4)]):
        kept.changed(7, rev, 200 + n, doc, impact)
        rev = 200 + n
    assert kept.held == 3  # noted, not applied: no list was copied
    assert _as_pairs(kept.get(7, rev)) == [(1, 4), (4, 7), (8, 1), (9, 2)]
    assert kept.held == 4
    assert _as_pairs(kept.get(7, rev)) == [(1, 4), (4, 7), (8, 1), (9, 2)]


def test_a_list_with_too_many_changes_noted_is_dropped() -> None:
    kept = KeptLists()
    kept.put(7, 0, *_list((1, 5)))
    for n in range(MOST_NOTED + 1):
        kept.changed(7, n, n + 1, 10 + n, 1)
    assert kept.get(7, MOST_NOTED) is None and kept.get(7, MOST_NOTED + 1) is None
    assert len(kept) == 0 and kept.held == 0


def test_a_write_from_another_revision_derives_nothing() -> None:
    kept = KeptLists()
    kept.put(7, 100, *_list((1, 5)))
    kept.changed(7, 150, 200, 3, 6)  # the list was changed elsewhere before: 100 is not 150
    assert kept.get(7, 200) is None
    assert _as_pairs(kept.get(7, 100)) == [(1, 5)]


def test_the_least_recently_used_lists_go_first_past_the_bound() -> None:
    kept = KeptLists(most=5)
    kept.put(1, 1, *_list((1, 1), (2, 1)))
    kept.put(2, 1, *_list((1, 1), (2, 1)))
    assert kept.get(1, 1) is not None  # used: 2 is now the least recently used
    kept.put(3, 1, *_list((1, 1), (2, 1)))
    assert kept.get(2, 1) is None
    assert kept.get(1, 1) is not None and kept.get(3, 1) is not None
    assert kept.held == 4
    kept.put(4, 1, *_list(*((d, 1) for d in range(6))))  # larger than the bound: not kept
    assert kept.get(4, 1) is None and kept.held == 4


def test_a_list_read_from_the_table_is_put_in_document_order() -> None:
    kept = KeptLists()
    assert _as_pairs(kept.load(3, 9, "40,7,12", "1,2,3")) == [(7, 2), (12, 3), (40, 1)]
    assert _as_pairs(kept.get(3, 9)) == [(7, 2), (12, 3), (40, 1)]
    assert _as_pairs(kept.load(4, 9, None, None)) == []


# -- through the index ----------------------------------------------------------------------------


def test_cooccurrence_through_kept_lists_equals_sqlites_lookups(backend) -> None:
    plain = SqliteSearchIndex(backend.db, kept_postings=0)
    for words in ("alpha beta", "gamma delta omega", "deploys 数据库 kappa", "alpha beta gamma delta"):
        for every in (False, True):
            expected = _cooccurring(plain, words, every=every)
            assert expected, words  # the corpus makes them meet
            # cold (the lists read whole and kept), then from the kept lists
            assert _cooccurring(backend.index, words, every=every) == expected, words
            assert _kept_at_plan(backend.index, words), words
            assert _cooccurring(backend.index, words, every=every) == expected, words


def test_searches_with_kept_lists_answer_as_without(backend) -> None:
    plain = SqliteSearchIndex(backend.db, kept_postings=0)
    rng = random.Random(11)
    queries = [
        _query(" ".join(rng.sample(WORDS, rng.randint(2, 6))), rng.choice([1, 5, 10]), prefix=rng.random() < 0.3)
        for _ in range(60)
    ]
    expected = _answers(plain, queries)
    assert _answers(backend.index, queries) == expected  # cold
    assert backend.index.kept is not None and len(backend.index.kept) > 0  # the lists were used
    assert _answers(backend.index, queries) == expected  # kept


def test_writes_through_this_index_keep_its_lists_current(backend) -> None:
    index, plain = backend.index, SqliteSearchIndex(backend.db, kept_postings=0)
    words = "alpha beta gamma"
    _cooccurring(index, words)
    assert _kept_at_plan(index, words)
    # When this index adds a memory holding the words, updates one and deletes another
    added = _add(backend, "alpha beta gamma alpha")
    assert _kept_at_plan(index, words)  # derived by the write: nothing read again
    gone = added.model_copy(update={"content": "alpha only", "version": 2})
    with backend.store.unit_of_work():
        backend.store.replace(gone, expected_version=1)
        index.upsert(gone)
    victim = next(h.record for h in index.search(_query("beta gamma", 1)))
    with backend.store.unit_of_work():
        backend.store.delete(SCOPE, victim.id, expected_version=victim.version)
        index.remove(victim)
    assert _kept_at_plan(index, words)
    # Then the kept lists answer as SQLite does
    assert _cooccurring(index, words) == _cooccurring(plain, words)
    assert _cooccurring(index, words, every=True) == _cooccurring(plain, words, every=True)


def test_a_write_through_another_connection_leaves_the_kept_lists_unused(backend, tmp_path: Path) -> None:
    index, plain = backend.index, SqliteSearchIndex(backend.db, kept_postings=0)
    words = "alpha beta gamma"
    # When another process (its own connections, its own lists) adds memories of the words
    other = SqliteBackend(tmp_path / "mnemo.db")
    for step in range(2):
        _cooccurring(index, words)
        assert _kept_at_plan(index, words)
        if step == 0:
            for i in range(5):
                _add(other, "alpha beta gamma", minutes=1000 + i)
        else:  # and then deletes one
            victim = next(h.record for h in other.index.search(_query("alpha gamma", 1)))
            with other.store.unit_of_work():
                other.store.delete(SCOPE, victim.id, expected_version=victim.version)
                other.index.remove(victim)
        # Then this index's lists are not at the revisions the database holds, and its answers are SQLite's
        assert not _kept_at_plan(index, words)
        assert _cooccurring(index, words) == _cooccurring(plain, words)
    other.close()


def test_a_rolled_back_write_leaves_no_list_behind(backend) -> None:
    index = backend.index
    words = "alpha beta gamma"
    before = _cooccurring(index, words)
    # When a write that indexed a memory of the words is rolled back
    record = memory_record("alpha beta gamma", scope=SCOPE, at=NOW)
    with pytest.raises(RuntimeError), backend.store.unit_of_work():
        backend.store.create(record)
        index.upsert(record)
        raise RuntimeError("the call failed after indexing")
    # Then the lists served are those of the database, without the memory
    assert _cooccurring(index, words) == before == _cooccurring(SqliteSearchIndex(backend.db, kept_postings=0), words)


def test_a_dictionary_written_before_revisions_gets_them_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    backend = SqliteBackend(path)
    record = _add(backend, "alpha beta gamma")
    backend.close()
    conn = sqlite3.connect(path)
    for trigger in ("index_terms_rev_insert", "index_terms_rev_update"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("ALTER TABLE index_terms DROP COLUMN rev")
    conn.commit()
    conn.close()
    reopened = SqliteBackend(path)
    columns = {row[1] for row in reopened.db.conn().execute("PRAGMA table_info(index_terms)")}
    assert "rev" in columns
    assert [h.record.id for h in reopened.index.search(_query("alpha gamma"))] == [record.id]
    _add(reopened, "alpha delta")
    revs = {row[0] for row in reopened.db.conn().execute("SELECT rev FROM index_terms WHERE key = 'alpha'")}
    assert revs and 0 not in revs  # a write gives its keys a revision
    reopened.close()


def _index_as_before_revisions(path: Path, record: MemoryRecord, doc: int) -> None:
    """Index a record as the code before revisions did (40306ca's ``insert_document``, verbatim
    statements): counts and postings, no revision — a process of the older version on the file."""
    keys = postings.document_keys(record)
    pairs = json.dumps(list(keys.items()), ensure_ascii=False)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO index_terms (project_id, key, df) SELECT ?, value ->> 0, 1 FROM json_each(?) WHERE 1"
        " ON CONFLICT (project_id, key) DO UPDATE SET df = df + 1",
        (record.project_id, pairs),
    )
    conn.execute(
        "INSERT INTO postings (term, impact, doc) SELECT t.id, j.value ->> 1, ? FROM json_each(?) AS j"
        " CROSS JOIN index_terms t ON t.project_id = ? AND t.key = j.value ->> 0",
        (doc, pairs, record.project_id),
    )
    conn.execute("COMMIT")
    conn.close()


def test_a_write_by_an_older_version_that_sets_no_revision_still_leaves_the_kept_lists_unused(
    backend, tmp_path: Path
) -> None:
    index, plain = backend.index, SqliteSearchIndex(backend.db, kept_postings=0)
    words = "alpha beta gamma zeta"
    _cooccurring(index, words)
    assert _kept_at_plan(index, words)
    # When a process of the version before revisions indexes documents holding the words (one of
    # them a key new to the dictionary)
    for doc in (900_001, 900_002):
        _index_as_before_revisions(tmp_path / "mnemo.db", memory_record("alpha beta gamma zeta", scope=SCOPE), doc)
    # Then the database's triggers gave the keys new revisions: the kept lists go unused
    assert not _kept_at_plan(index, words)
    assert _cooccurring(index, words) == _cooccurring(plain, words)
    assert {900_001, 900_002} <= set(_cooccurring(index, words))
    revs = [row[0] for row in backend.db.conn().execute("SELECT rev FROM index_terms")]
    assert 0 not in revs
