"""The SQLite index's top-k search agrees with scoring every document, and an index of an older
layout or analysis is rebuilt.

``SqliteSearchIndex.search`` reads only the best postings of each key (the threshold algorithm,
``backends/sqlite/topk/``). These tests hold it to a reference that scores every document of
the project with the same formula, on the edges where reading the top is not enough: filters that
reject the best documents, ties, rare co-occurrences, prefixes, working memories first; with small
round sizes, so that several rounds and the fallbacks run."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mnemo import text
from mnemo.backends.sqlite import SqliteBackend, postings
from mnemo.backends.sqlite.db import INDEX_VERSION
from mnemo.backends.sqlite.index import SqliteSearchIndex
from mnemo.backends.sqlite.postings import SURFACE, document_keys, idf
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexQuery, MemoryFilter, Scope
from mnemo.text import query_terms

from tests.support.records import memory_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCOPE = Scope("ws_1", "prj_1")
OTHER = Scope("ws_1", "prj_2")


@pytest.fixture
def backend(tmp_path: Path) -> SqliteBackend:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    backend.index = SqliteSearchIndex(backend.db, min_size=2, max_size=8)  # many rounds on little data
    yield backend
    backend.close()


def _add(
    backend: SqliteBackend, content: str, *, kind: str | None = None, minutes: int = 0, scope: Scope = SCOPE
) -> MemoryRecord:
    at = NOW - timedelta(days=1) + timedelta(minutes=minutes)
    record = memory_record(content, scope=scope, at=at, kind=kind)
    with backend.store.unit_of_work():
        backend.store.create(record)
        backend.index.upsert(record)
    return record


def _query(q: str, limit: int, *, mode: str = "all", kind: str | None = None, prefix: bool = False, working=False):
    terms = query_terms(q, latin_prefix=prefix)
    return IndexQuery(SCOPE, terms, mode, MemoryFilter(now=NOW, kind=kind), limit, prefer_working=working)


_KEYS: dict[tuple[object, ...], dict[str, int]] = {}


def _keys(record: MemoryRecord) -> dict[str, int]:
    """``document_keys`` once per record version: the random-corpus test asks for 400 records' keys
    in each of its 150 references, and the analysis was four fifths of its time."""
    at = (record.id, record.version, record.content, tuple(record.tags), record.path)
    if at not in _KEYS:
        _KEYS[at] = document_keys(record)
    return _KEYS[at]


def reference(records: list[MemoryRecord], query: IndexQuery) -> list[tuple[str, float]]:
    """Every document of the project scored with the index's formula, filtered and sorted."""
    mine = [r for r in records if r.project_id == query.scope.project_id]
    keys = {r.id: _keys(r) for r in mine}
    df: dict[str, int] = {}
    for doc in keys.values():
        for key in doc:
            df[key] = df.get(key, 0) + 1

    def matches(term: text.QueryTerm, key: str) -> bool:
        if key == term.stem:
            return True
        word = key.removeprefix(SURFACE)
        return term.prefix and word.startswith(term.text)

    term_keys = [{k for k in df if matches(t, k)} for t in query.terms]
    idfs = [idf(max((df[k] for k in ks), default=0), len(mine)) for ks in term_keys]
    scored = []
    for record in mine:
        impacts = [max((keys[record.id].get(k, 0) for k in ks), default=0) for ks in term_keys]
        if (query.mode == "all" and not all(impacts)) or not any(impacts):
            continue
        if query.filter.kind is not None and record.kind != query.filter.kind:
            continue
        score = sum(i * w for i, w in zip(idfs, impacts, strict=True)) / 10_000
        working = query.prefer_working and record.kind == "working"
        scored.append((working, round(score, 9), record.updated_at, record.id))
    scored.sort(reverse=True)
    return [(rid, score) for _, score, _, rid in scored[: query.limit]]


def _answer(backend: SqliteBackend, query: IndexQuery) -> list[tuple[str, float]]:
    return [(h.record.id, round(h.score, 9)) for h in backend.index.search(query)]


def test_a_filter_that_rejects_the_best_documents_still_finds_the_best_matching_records(backend) -> None:
    # Given 300 short (best-scoring) memories of kind "x" and 20 longer ones of kind "y"
    records = [_add(backend, f"alpha {i}", kind="x", minutes=i) for i in range(300)]
    records += [_add(backend, f"alpha beta gamma delta epsilon {i}", kind="y", minutes=i) for i in range(20)]
    # When searching for kind "y" only
    query = _query("alpha", 5, kind="y")
    hits = backend.index.search(query)
    # Then the answer is the reference's: five records of kind "y"
    assert [(h.record.id, round(h.score, 9)) for h in hits] == reference(records, query)
    assert {h.record.kind for h in hits} == {"y"}


def test_equal_scores_past_the_first_postings_come_newest_first(backend) -> None:
    # Given 300 memories with identical content (identical scores), written a minute apart
    records = [_add(backend, "alpha beta", minutes=i) for i in range(300)]
    # When searching with a limit
    hits = backend.index.search(_query("alpha", 10))
    # Then the ten newest come first
    assert [h.record.id for h in hits] == [r.id for r in reversed(records[-10:])]


def test_ties_go_to_the_most_recently_updated_not_the_most_recently_created(backend) -> None:
    # Given 100 memories with identical content, of which the five oldest were updated since
    records = [_add(backend, "alpha beta", minutes=i) for i in range(100)]
    touched = []
    for i, record in enumerate(records[:5]):
        newer = record.model_copy(update={"version": 2, "updated_at": NOW + timedelta(minutes=i)})
        with backend.store.unit_of_work():
            backend.store.replace(newer, expected_version=1)
            backend.index.upsert(newer)
        touched.append(newer)
    # When searching, then the updated ones come first, newest first
    hits = backend.index.search(_query("alpha", 5))
    assert [h.record.id for h in hits] == [r.id for r in reversed(touched)]


def test_two_common_terms_that_rarely_meet_are_found_together(backend) -> None:
    # Given many short memories holding one term or the other, and three long ones holding both
    records = [_add(backend, "alpha", minutes=i) for i in range(120)]
    records += [_add(backend, "beta", minutes=i) for i in range(120)]
    records += [_add(backend, f"alpha and beta in a much longer note number {i}", minutes=i) for i in range(3)]
    # When both are required, and when either will do
    every = _query("alpha beta", 5)
    either = _query("alpha beta", 5, mode="any")
    # Then the strict answer is exactly the three that hold both (the rarer term read to its end)
    assert _answer(backend, every) == reference(records, every)
    assert len(_answer(backend, every)) == 3
    # and the forgiving one, which stops at max_size postings a key, answers from what it read:
    # the best of those, all of which hold a term
    assert {rid for rid, _ in _answer(backend, either)} <= {r.id for r in records}
    assert len(_answer(backend, either)) == 5


def test_prefixes_and_stems_match_the_reference_rule(backend) -> None:
    # Given inflected words and words that merely share a beginning
    records = [
        _add(backend, "Deploys freeze on Fridays", minutes=1),
        _add(backend, "deployment notes for the deployer", minutes=2),
        _add(backend, "we deployed twice", minutes=3),
        _add(backend, "a depot is not a deploy", minutes=4),
        _add(backend, "nothing to see", minutes=5),
    ]
    for q, prefix in (("deployments", False), ("deployments", True), ("deplo", True), ("deploym", True), ("dep", True)):
        query = _query(q, 10, mode="any", prefix=prefix)
        # Then each answers what the reference rule gives, with the same scores
        assert _answer(backend, query) == reference(records, query), q


def test_a_known_word_expands_to_few_longer_words_and_a_partial_one_to_more(backend) -> None:
    # Given words that start with "span": the word itself, and longer ones of different frequencies
    records = {"span": _add(backend, "the span of control")}
    for word, count in (("spanish", 5), ("spanner", 3), ("spaniel", 1)):
        added = [_add(backend, f"a {word} here {i}") for i in range(count)]
        records[word] = added[0]
    # When recall looks for the known word, it matches its stem and the two most frequent longer words
    found = {h.record.id for h in backend.index.search(_query("span", 20, mode="any", prefix=True))}
    assert records["span"].id in found and records["spanish"].id in found and records["spanner"].id in found
    assert records["spaniel"].id not in found
    # and a word being typed ("spa", no memory holds it) matches every longer word, up to eight
    found = {h.record.id for h in backend.index.search(_query("spa", 20, mode="any", prefix=True))}
    assert {r.id for r in records.values()} <= found


def test_working_memories_come_first_however_low_they_score(backend) -> None:
    records = [_add(backend, "alpha", minutes=i) for i in range(50)]
    records += [_add(backend, "alpha " + "filler " * 40, kind="working", minutes=i) for i in range(2)]
    query = _query("alpha", 5, working=True)
    hits = _answer(backend, query)
    assert hits == reference(records, query)
    assert [h.record.kind for h in backend.index.search(query)][:2] == ["working", "working"]


#: index settings that take each path: many rounds; the lookups of co-occurring documents early,
#: late or never; one big first round
SETTINGS = [
    {"min_size": 2, "max_size": 8},
    {"min_size": 2, "max_size": 8, "drive_after": 1},
    {"min_size": 2, "max_size": 64, "drive_after": 2},
    {"min_size": 2, "max_size": 8, "drive": 0},
    {"min_size": 1000, "max_size": 1000},
]


@pytest.mark.slow  # a property search over random corpora
@pytest.mark.parametrize("impacts", ["lookups", "ranges"])
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_random_corpora_and_queries_agree_with_scoring_every_document(backend, settings, impacts, monkeypatch) -> None:
    # (candidates' impacts read by one lookup per key, or by one range per candidate, whatever the keys)
    monkeypatch.setattr(postings, "RANGES_FROM", 10**9 if impacts == "lookups" else 1)
    # Given a random corpus over a small vocabulary (so terms are common and co-occur unevenly),
    # in two projects
    rng = random.Random(16)
    words = ["alpha", "beta", "gamma", "deploys", "deployed", "deployment", "数据", "数据库", "kind", "x1"]
    records = []
    for i in range(400):
        content = " ".join(rng.choice(words[: rng.randint(2, len(words))]) for _ in range(rng.randint(1, 12)))
        kind = rng.choice([None, "a", "b", "working"])
        records.append(_add(backend, content, kind=kind, minutes=i, scope=rng.choice([SCOPE, SCOPE, OTHER])))
    backend.index = SqliteSearchIndex(backend.db, **settings)
    # When random queries run, strict and forgiving, with and without filters
    for _ in range(150):
        q = " ".join(rng.sample(words, rng.randint(1, 3)))
        query = _query(
            q,
            rng.choice([1, 3, 10]),
            mode=rng.choice(["all", "any"]),
            kind=rng.choice([None, "a"]),
            prefix=rng.random() < 0.3,
            working=rng.random() < 0.2,
        )
        if query.mode == "any":
            # the forgiving mode may stop at max_size postings a key: compare with a full read
            full = SqliteSearchIndex(backend.db, **{**settings, "max_size": 10_000})
            assert [(h.record.id, round(h.score, 9)) for h in full.search(query)] == reference(records, query), q
        else:
            assert _answer(backend, query) == reference(records, query), q


def test_a_deleted_or_updated_memory_leaves_no_postings_and_counts(backend) -> None:
    # Given two memories, one then updated and the other deleted
    keep = _add(backend, "alpha beta")
    gone = _add(backend, "alpha gamma")
    updated = keep.model_copy(update={"content": "delta", "version": 2})
    with backend.store.unit_of_work():
        backend.store.replace(updated, expected_version=1)
        backend.index.upsert(updated)
        backend.store.delete(SCOPE, gone.id, expected_version=1)
        backend.index.remove(gone)
    conn = backend.db.conn()
    # Then the dictionary holds only the updated memory's key, once, and one document is counted
    assert [tuple(r) for r in conn.execute("SELECT key, df FROM index_terms")] == [("delta", 1)]
    assert conn.execute("SELECT count(*) FROM postings").fetchone()[0] == 1
    assert conn.execute("SELECT docs FROM index_stats").fetchone()[0] == 1
    assert backend.index.search(_query("alpha", 5)) == []
    assert [h.record.id for h in backend.index.search(_query("delta", 5))] == [keep.id]


def test_indexing_the_version_the_index_holds_again_writes_nothing(backend) -> None:
    # Given a memory indexed at version 1 (as its vector, written after the answer, is re-indexed)
    record = _add(backend, "alpha beta")
    conn = backend.db.conn()

    def state() -> list[tuple[object, ...]]:
        terms = conn.execute("SELECT key, df, rev FROM index_terms ORDER BY key").fetchall()
        return [tuple(r) for r in terms] + [tuple(r) for r in conn.execute("SELECT * FROM postings ORDER BY term")]

    before = state()
    # When version 1 is indexed again, nothing is written (the keys keep their revisions)
    backend.index.upsert(record)
    assert state() == before
    # and version 2 is indexed
    updated = record.model_copy(update={"content": "alpha gamma", "version": 2})
    with backend.store.unit_of_work():
        backend.store.replace(updated, expected_version=1)
    assert [tuple(r)[:2] for r in conn.execute("SELECT key, df FROM index_terms ORDER BY key")] == [
        ("alpha", 1),
        ("gamma", 1),
    ]
    assert [h.record.id for h in backend.index.search(_query("gamma", 5))] == [record.id]


def test_a_database_indexed_in_an_older_layout_is_reindexed_when_opened(tmp_path: Path) -> None:
    # Given a database written by layout 3 (an FTS5 table and its document table, no postings)
    backend = SqliteBackend(tmp_path / "mnemo.db")
    record = _add(backend, "数据库延迟很高 needs a cache")
    conn = backend.db.conn()
    conn.execute("DELETE FROM postings")
    conn.execute("CREATE VIRTUAL TABLE memory_fts USING fts5 (scope, content, tags, path)")
    conn.execute("CREATE TABLE index_rows (project_id TEXT, id TEXT, fts_rowid INTEGER, PRIMARY KEY (project_id, id))")
    conn.execute("PRAGMA user_version = 3")
    backend.close()
    # When it is opened again
    reopened = SqliteBackend(tmp_path / "mnemo.db")
    # Then the index was rebuilt from the records and the old tables are gone
    assert [h.record.id for h in reopened.index.search(_query("延迟", 5))] == [record.id]
    assert [h.record.id for h in reopened.index.search(_query("caches", 5))] == [record.id]
    assert reopened.db.conn().execute("PRAGMA user_version").fetchone()[0] == INDEX_VERSION
    tables = {row[0] for row in reopened.db.conn().execute("SELECT name FROM sqlite_master")}
    assert not tables & {"memory_fts", "index_rows"}
    reopened.close()


def test_an_index_built_with_another_analysis_is_reindexed_when_opened(tmp_path: Path) -> None:
    # Given an index that says it was built by another stemmer
    backend = SqliteBackend(tmp_path / "mnemo.db")
    record = _add(backend, "Deploys freeze on Fridays")
    conn = backend.db.conn()
    conn.execute("DELETE FROM postings")
    conn.execute("UPDATE index_meta SET value = 'mnemo-1/no-stemmer' WHERE name = 'analysis'")
    backend.close()
    # When it is opened again, then it is rebuilt with the current analysis
    reopened = SqliteBackend(tmp_path / "mnemo.db")
    assert [h.record.id for h in reopened.index.search(_query("deployments", 5))] == [record.id]
    analysis = reopened.db.conn().execute("SELECT value FROM index_meta WHERE name = 'analysis'").fetchone()[0]
    assert analysis == text.ANALYSIS
    reopened.close()


def test_no_statement_of_a_write_or_a_search_scans_a_table(tmp_path: Path) -> None:
    """Every statement the index runs is a keyed search (a table scan grows with the corpus: one
    in the insert path once made building 100k memories quadratic)."""
    backend = SqliteBackend(tmp_path / "mnemo.db")
    backend.index = SqliteSearchIndex(backend.db, min_size=2, max_size=8)
    for i in range(30):
        _add(backend, f"alpha beta deploys {i % 3}", kind="working" if i % 5 == 0 else None, minutes=i)
    statements: list[str] = []
    conn = backend.db.conn()
    conn.set_trace_callback(statements.append)
    record = _add(backend, "alpha gamma deployed 数据库", minutes=99)
    for query in (
        _query("alpha beta", 5),
        _query("alpha deploy 数据", 5, mode="any", prefix=True),
        _query("alpha", 5, working=True, kind="working"),
    ):
        backend.index.search(query)
    with backend.store.unit_of_work():
        backend.store.delete(SCOPE, record.id, expected_version=1)
        backend.index.remove(record)
    conn.set_trace_callback(None)
    scans = set()
    for statement in statements:
        if not statement.lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
            continue
        if statement.startswith("SELECT m.seq, m.updated_at, q.term, q.impact FROM memories m CROSS JOIN postings q"):
            # Verdicts.passing, on purpose: the project's records filtered in C, when the filters
            # reject what the best postings hold (bounded by the project, not by its postings)
            continue
        if statement.startswith("SELECT count(*) FROM (SELECT 1 FROM memories m"):
            # SqlPostings.passing_at_most, on purpose: stops at its LIMIT when the filter passes
            # many records, and walks the project in C when it passes few (then passing follows)
            continue
        for row in conn.execute("EXPLAIN QUERY PLAN " + statement):
            detail = row[-1]
            whole_table = detail.startswith("SCAN") and "VIRTUAL TABLE" not in detail
            # a search by project alone walks all of it (index_stats is keyed by project: one row)
            whole_project = detail.endswith("(project_id=?)") and "index_stats" not in detail
            if whole_table or whole_project:
                scans.add((detail, statement))
    assert not scans
    backend.close()


def test_the_postings_primary_key_reads_best_first(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "plan.db")
    backend = SqliteBackend(tmp_path / "plan.db")
    plan = (
        backend.db.conn()
        .execute(
            "EXPLAIN QUERY PLAN SELECT doc, impact FROM postings WHERE term = 1 ORDER BY impact DESC, doc DESC LIMIT 5"
        )
        .fetchall()
    )
    assert "USING PRIMARY KEY (term=?)" in plan[0][-1]
    assert "ORDER BY" not in " ".join(row[-1] for row in plan)  # no sorter: the key's order is the answer's
    backend.close()
    conn.close()


@pytest.mark.parametrize("keys", ["few", "many"])
def test_candidate_lookups_start_from_the_candidates(
    tmp_path: Path, keys: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement that completes the scores of given documents reads them first, then their
    postings through ``postings_doc``: for few keys one lookup per key (``doc`` and ``term``), for
    many each document's postings as one range (by ``doc`` alone, the keys a filter). With several
    plain JOINs SQLite's planner started from a term's whole posting list instead (20-30 ms for 50
    candidates at 100k)."""
    monkeypatch.setattr(postings, "RANGES_FROM", 100 if keys == "few" else 1)
    backend = SqliteBackend(tmp_path / "mnemo.db")
    backend.index = SqliteSearchIndex(backend.db, min_size=2, max_size=8, drive=0)
    for i in range(60):
        words = ["alpha"] * (1 + i % 3) + ["基准测试"] * (i % 2) + ["beta"] * (i % 5 == 0) + [f"filler{i}"] * (i % 7)
        _add(backend, " ".join(words), minutes=i)
    statements: list[str] = []
    conn = backend.db.conn()
    conn.set_trace_callback(statements.append)
    hits = [
        backend.index.search(q) for q in (_query("alpha 基准测试", 5), _query("alpha 基准测试 beta", 5, mode="any"))
    ]
    conn.set_trace_callback(None)
    assert all(hits)
    lookups = [s for s in statements if "AS c CROSS JOIN memories" in s and "postings q" in s]
    assert lookups
    for statement in lookups:
        plan = [row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + statement)]
        assert plan[0].startswith("SCAN c"), plan
        assert not any("PRIMARY KEY (term" in step for step in plan), plan
        steps = [step for step in plan if " q" in step]
        if keys == "many":
            assert steps == ["SEARCH q USING COVERING INDEX postings_doc (doc=?) LEFT-JOIN"]
        else:
            assert len(steps) > 1
            assert all(
                step.endswith("USING COVERING INDEX postings_doc (doc=? AND term=?) LEFT-JOIN") for step in steps
            )
    backend.close()


def test_recall_with_a_filter_the_best_postings_miss_scores_the_records_that_pass(tmp_path: Path) -> None:
    """Past its bounded reads an ``any`` query whose filter rejects every document read goes to
    the records that pass the filter (``Verdicts.passing``) and answers exactly."""
    backend = SqliteBackend(tmp_path / "mnemo.db")
    backend.index = SqliteSearchIndex(backend.db, min_size=2, max_size=8, max_total=16)
    records = [_add(backend, f"alpha beta {i}", kind="x", minutes=i) for i in range(200)]
    records += [_add(backend, f"alpha gamma delta epsilon zeta {i}", kind="y", minutes=i) for i in range(12)]
    records += [_add(backend, f"beta gamma delta epsilon zeta eta {i}", kind="y", minutes=50 + i) for i in range(3)]
    query = _query("alpha beta", 5, mode="any", kind="y")

    hits = backend.index.search(query)

    assert [(h.record.id, round(h.score, 9)) for h in hits] == reference(records, query)
    assert {h.record.kind for h in hits} == {"y"}
    backend.close()
