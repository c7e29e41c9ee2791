"""The SQLite index's postings: what a record is indexed as, how its keys are scored, and the
tables that hold them (``schema.sql``), written, dropped, rebuilt and read.

Tables:

* ``index_terms`` — a project's dictionary: ``key`` → id, document frequency and revision (a new
  random number whenever the key's postings change: what ``kept`` keys its lists by). A key is a stem
  (a CJK term or a number is its own stem); an English word that differs from its stem is also
  indexed as ``=`` + the word, so ``recall``'s prefixes match words as they are written
  (``deploym`` finds ``deployment``, whose stem is ``deploy``).
* ``postings`` (``term``, ``impact``, ``doc``) — the primary key orders each key's documents by
  impact, best first; the index ``postings_doc`` (``doc``, ``term``) serves random access and
  deletes. ``doc`` is the memory's ``seq``.
* ``index_docs`` — the index's own document table (project, memory id → doc, version): how it
  finds a record's postings again after the record is gone, as OpenSearch finds a document by its
  ``_id``.
* ``index_stats`` — documents per project (the N of the IDF).

**Scoring.** BM25 (k1 1.2, b 0.75) with the field weights of the OpenSearch backend (content 1,
tags 0.6, path 0.4, summed into one weighted frequency, as FTS5's ``bm25`` did). A key's *impact*
in a document is its BM25 term weight without the IDF, × ``SCALE``; the length is normalised
against a fixed pivot (``PIVOT`` terms) instead of the project's average, so a document's impacts
depend on the document alone and never go stale. The IDF, ``ln(1 + (N - df + ½) / (df + ½))``, is
applied at query time. A query term matching several keys (a prefix, or a stem and the words that
start with the term) takes the best of them (``plan``).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from mnemo import text
from mnemo.backends.sqlite.db import INDEX_VERSION, record_of
from mnemo.backends.sqlite.kept import KeptLists, Postings, new_rev
from mnemo.backends.sqlite.topk import Term
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexQuery

#: BM25 parameters, the field weights (content, tags, path), the length pivot and the fixed-point scale
K1, B = 1.2, 0.75
FIELD_WEIGHTS = (1.0, 0.6, 0.4)
PIVOT = 40.0
SCALE = 10_000
#: more than any impact (at most ``SCALE * (K1 + 1)``): the bound of a key not read yet
CEILING = SCALE * 3

#: the prefix of a key that holds a word as written (only words that differ from their stem)
SURFACE = "="

#: a prefix matches at most this many keys (the most frequent), beside the term's own stem; a word
#: the project holds (its stem is a key: its inflections match already) at most ``MAX_EXPANSIONS_KNOWN``
MAX_EXPANSIONS, MAX_EXPANSIONS_KNOWN = 8, 2

#: the characters after which no other sorts: ``key < prefix + _TOP`` bounds a prefix range
_TOP = "\U0010ffff"


def document_keys(record: MemoryRecord) -> dict[str, int]:
    """The index keys of one record, each with its impact (see the module docstring)."""
    fields = (text.terms(record.content), text.terms(" ".join(record.tags)), text.terms(record.path or ""))
    length = sum(len(words) for words in fields)
    weighted: dict[str, float] = defaultdict(float)
    for weight, words in zip(FIELD_WEIGHTS, fields, strict=True):
        for word, stem in zip(words, text.stems(words), strict=True):
            weighted[stem] += weight
            if stem != word:
                weighted[SURFACE + word] += weight
    norm = K1 * (1 - B + B * length / PIVOT)
    return {key: max(1, round(SCALE * f * (K1 + 1) / (f + norm))) for key, f in weighted.items()}


def idf(df: int, docs: int) -> float:
    return math.log(1 + (max(docs, df) - df + 0.5) / (df + 0.5))


# -- writes ------------------------------------------------------------------------------------


def insert_document(conn: sqlite3.Connection, record: MemoryRecord, doc: int, kept: KeptLists | None = None) -> None:
    """Index a record as document ``doc`` (its memory's ``seq``); the caller dropped any other. Each
    of its keys gets a new revision, and ``kept`` the lists it holds of them with ``doc`` in."""
    keys = document_keys(record)
    if keys:
        pairs = json.dumps(list(keys.items()), ensure_ascii=False)
        rev = new_rev()
        held = []
        if kept is not None and len(kept):
            held = conn.execute(
                "SELECT t.id, t.rev, j.value ->> 1 FROM json_each(?) AS j"
                " CROSS JOIN index_terms t ON t.project_id = ? AND t.key = j.value ->> 0",
                (pairs, record.project_id),
            ).fetchall()
        conn.execute(
            "INSERT INTO index_terms (project_id, key, df, rev) SELECT ?, value ->> 0, 1, ? FROM json_each(?) WHERE 1"
            " ON CONFLICT (project_id, key) DO UPDATE SET df = df + 1, rev = excluded.rev",
            (record.project_id, rev, pairs),
        )
        conn.execute(
            "INSERT INTO postings (term, impact, doc) SELECT t.id, j.value ->> 1, ? FROM json_each(?) AS j"
            " CROSS JOIN index_terms t ON t.project_id = ? AND t.key = j.value ->> 0",  # json_each outer
            (doc, pairs, record.project_id),
        )
        if kept is not None:
            for key, old, impact in held:
                kept.changed(key, old, rev, doc, impact)
    conn.execute(
        "INSERT INTO index_docs (workspace_id, project_id, id, doc, version) VALUES (?,?,?,?,?)",
        (record.workspace_id, record.project_id, record.id, doc, record.version),
    )
    conn.execute(
        "INSERT INTO index_stats (project_id, docs) VALUES (?, 1)"
        " ON CONFLICT (project_id) DO UPDATE SET docs = docs + 1",
        (record.project_id,),
    )


def drop_document(conn: sqlite3.Connection, project_id: str, memory_id: str, kept: KeptLists | None = None) -> bool:
    """Remove a memory's document (its postings, its dictionary counts, its row); False when the
    index held none."""
    found = conn.execute(
        "DELETE FROM index_docs WHERE project_id = ? AND id = ? RETURNING doc", (project_id, memory_id)
    ).fetchone()
    if found is None:
        return False
    drop_postings(conn, found["doc"], kept)
    conn.execute("UPDATE index_stats SET docs = docs - 1 WHERE project_id = ?", (project_id,))
    return True


def drop_postings(conn: sqlite3.Connection, doc: int, kept: KeptLists | None = None) -> None:
    """Remove the postings of document ``doc`` (and the dictionary's counts of them); each of its
    keys gets a new revision, and ``kept`` the lists it holds of them without ``doc``."""
    held = conn.execute(
        "SELECT p.term, t.rev FROM postings p CROSS JOIN index_terms t ON t.id = p.term WHERE p.doc = ?", (doc,)
    ).fetchall()
    if not held:
        return
    ids = json.dumps([term for term, _ in held])
    rev = new_rev()
    conn.execute("DELETE FROM postings WHERE doc = ?", (doc,))
    conn.execute("UPDATE index_terms SET df = df - 1, rev = ? WHERE id IN (SELECT value FROM json_each(?))", (rev, ids))
    conn.execute("DELETE FROM index_terms WHERE df <= 0 AND id IN (SELECT value FROM json_each(?))", (ids,))
    if kept is not None:
        for term, old in held:
            kept.changed(term, old, rev, doc, None)


def rebuild(conn: sqlite3.Connection) -> None:
    """Re-index every record from the memories table (after a change of the index layout or the
    analysis) and record the layout and the analysis; the caller holds the write transaction."""
    conn.execute("DROP TABLE IF EXISTS memory_fts")  # layouts 1-3: FTS5 and its document table
    conn.execute("DROP TABLE IF EXISTS index_rows")
    for table in ("postings", "index_terms", "index_docs", "index_stats"):
        conn.execute(f"DELETE FROM {table}")
    for row in conn.execute("SELECT seq, body FROM memories ORDER BY seq").fetchall():
        insert_document(conn, record_of(row), row["seq"])
    conn.execute(
        "INSERT INTO index_meta (name, value) VALUES ('analysis', ?)"
        " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (text.ANALYSIS,),
    )
    conn.execute(f"PRAGMA user_version = {INDEX_VERSION}")


def outdated(conn: sqlite3.Connection) -> bool:
    """Whether the postings were built with another layout or analysis (then ``rebuild``)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] < INDEX_VERSION:
        return True
    row = conn.execute("SELECT value FROM index_meta WHERE name = 'analysis'").fetchone()
    return row is None or row[0] != text.ANALYSIS


# -- query planning ----------------------------------------------------------------------------


def plan(conn: sqlite3.Connection, query: IndexQuery) -> tuple[list[Term], int, dict[int, int]]:
    """The query's terms as the index sees them, the project's document count, and the revision of
    each key the terms match."""
    project = query.scope.project_id
    docs_row = conn.execute("SELECT docs FROM index_stats WHERE project_id = ?", (project,)).fetchone()
    docs = docs_row[0] if docs_row else 0
    out = []
    revs: dict[int, int] = {}
    for term in query.terms:
        keys: dict[int, int] = {}
        row = conn.execute(
            "SELECT id, df, rev FROM index_terms WHERE project_id = ? AND key = ?", (project, term.stem)
        ).fetchone()
        if row is not None:
            keys[row[0]] = row[1]
            revs[row[0]] = row[2]
        if term.prefix:
            most = MAX_EXPANSIONS_KNOWN if keys else MAX_EXPANSIONS
            keys.update(_expansions(conn, project, term, exclude=keys, most=most, revs=revs))
        out.append(Term(term.text, keys, idf(max(keys.values(), default=0), docs)))
    return out, docs, revs


def _expansions(
    conn: sqlite3.Connection,
    project: str,
    term: text.QueryTerm,
    exclude: dict[int, int],
    most: int,
    revs: dict[int, int],
) -> dict[int, int]:
    """The keys a prefix term matches beyond its stem: stems (and CJK terms) that start with it,
    and words as written that start with it whose stem is not among those; the ``most`` most
    frequent (their revisions noted in ``revs``)."""
    ranges = [(term.text, term.text + _TOP)]
    if not text.is_cjk(term.text):
        ranges.append((SURFACE + term.text, SURFACE + term.text + _TOP))
    found: list[tuple[int, int, str, int]] = []
    for low, high in ranges:
        found += conn.execute(
            "SELECT df, id, key, rev FROM index_terms WHERE project_id = ? AND key >= ? AND key < ?"
            " ORDER BY df DESC LIMIT ?",
            (project, low, high, 4 * most),
        ).fetchall()
    stems = {key for _, _, key, _ in found if not key.startswith(SURFACE)} | {term.stem}
    chosen = [
        (df, key_id)
        for df, key_id, key, _ in found
        if key_id not in exclude and not (key.startswith(SURFACE) and text.stem(key[1:]) in stems)
    ]
    chosen.sort(reverse=True)
    revs.update((key_id, rev) for _, key_id, _, rev in found)
    return {key_id: df for df, key_id in chosen[:most]}


# -- reads for the top-k engine ----------------------------------------------------------------


def _in(keys: Sequence[int]) -> str:
    """``IN (?,?,…)`` for a term's keys: the statement's text depends only on how many there are."""
    return "IN (" + ",".join("?" * len(keys)) + ")"


#: candidates' impacts (``SqlPostings.impacts``) for this many keys or more are read as one range of
#: ``postings_doc`` per candidate, for fewer by one lookup per key
RANGES_FROM = 5

#: a co-occurrence call goes through the kept lists (``kept``) when it would make at least this
#: many lookups; fewer cost SQLite less than the numpy calls per key cost
KEPT_FROM = 64
#: and reads lists not kept yet when they hold at most this many postings per lookup it spares: a
#: posting read whole (and parsed) costs about a seventh of a lookup of SQLite's co-occurrence join
#: at 100,000 memories (``python -m bench.kept_lists``: bench/results/2026-12-05-kept-lists-100k.md),
#: so a cold call costs no more than SQLite's lookups would, and the lists are kept for the next
LOAD_PER_LOOKUP = 4


class SqlPostings:
    """The engine's :class:`~mnemo.backends.sqlite.topk.PostingSource` over the tables: one
    project's postings, its records filtered by ``where`` (over ``memories m``), each call one
    statement inside SQLite — but the co-occurrence lookups, which go through the lists the
    process keeps (``kept``, by the revisions ``revs`` the plan read) where that costs less."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        where: str,
        params: tuple[Any, ...],
        kept: KeptLists | None = None,
        plan: Sequence[Term] = (),
        revs: dict[int, int] | None = None,
    ) -> None:
        self.conn = conn
        self.where = where  # the filter over ``memories m``
        self.params = params  # the scope's (workspace, project) and the filter's parameters
        self.kept = kept
        self.revs = revs or {}
        self.dfs = {key: df for term in plan for key, df in term.keys.items()}

    def read(self, key: int, offset: int, count: int) -> list[tuple[int, int]]:
        return self.conn.execute(
            "SELECT doc, impact FROM postings WHERE term = ? ORDER BY impact DESC, doc DESC LIMIT ? OFFSET ?",
            (key, count, offset),
        ).fetchall()

    def cooccurring(
        self, driver: Sequence[int], joined: Sequence[Sequence[int]], required: int, *, every: bool
    ) -> Iterable[Sequence[Any]]:
        if self.kept is not None:
            rows = self._kept_cooccurring(driver, joined, required, every=every)
            if rows is not None:
                return rows
        # The driver's postings, each joined to the others' through ``postings_doc`` (a join costs
        # a third of a correlated subquery). CROSS JOIN: SQLite's inner join that keeps this order
        # (the driver's postings first); with several plain JOINs the planner may start from
        # another term's whole posting list
        join = "CROSS JOIN" if every else "LEFT JOIN"
        joins = "".join(
            f" {join if n < required else 'LEFT JOIN'} postings q{n} ON q{n}.doc = p.doc AND q{n}.term {_in(keys)}"
            for n, keys in enumerate(joined)
        )
        held = "" if every else " AND (" + " OR ".join(f"q{n}.impact IS NOT NULL" for n in range(required)) + ")"
        columns = ", ".join(f"q{n}.impact" for n in range(len(joined)))
        sql = f"SELECT p.doc, p.impact, {columns} FROM postings p{joins} WHERE p.term {_in(driver)}{held}"
        return self.conn.execute(sql, [*(key for keys in joined for key in keys), *driver])

    def _kept_cooccurring(
        self, driver: Sequence[int], joined: Sequence[Sequence[int]], required: int, *, every: bool
    ) -> Iterable[Sequence[Any]] | None:
        """``cooccurring`` through the kept lists: each joined key's list searched for the driver's
        documents at once (0: not held). None when SQLite's lookups cost less: few of them, or lists
        not kept yet that hold more postings than the lookups they would spare."""
        postings = sum(self.dfs.get(key, 0) for key in driver)
        lookups = postings * sum(len(keys) for keys in joined)
        if lookups < KEPT_FROM:
            return None
        keys = [*driver, *(key for keys in joined for key in keys)]
        lists = self._lists(keys, postings + LOAD_PER_LOOKUP * lookups)
        if lists is None:
            return None
        parts = [lists[key] for key in driver]
        docs = np.concatenate([d for d, _ in parts])
        impacts = np.concatenate([i for _, i in parts])
        found = [_held(lists, keys, docs) for keys in joined]
        if required:
            held = np.vstack(found[:required]) > 0
            chosen = held.all(axis=0) if every else held.any(axis=0)
            docs, impacts, found = docs[chosen], impacts[chosen], [f[chosen] for f in found]
        return zip(docs.tolist(), impacts.tolist(), *(f.tolist() for f in found), strict=True)

    def _lists(self, keys: Sequence[int], budget: int) -> dict[int, Postings] | None:
        """The lists of these keys at the plan's revisions: kept ones, and the others read whole (and
        kept) if they hold at most ``budget`` postings in all; None otherwise."""
        assert self.kept is not None
        out: dict[int, Postings] = {}
        missing = []
        for key in keys:
            rev = self.revs.get(key)
            if rev is None:
                return None
            held = self.kept.get(key, rev)
            if held is None:
                missing.append(key)
            else:
                out[key] = held
        if sum(self.dfs.get(key, budget + 1) for key in missing) > budget:
            return None
        for key in missing:
            docs, impacts = self.conn.execute(
                "SELECT group_concat(doc), group_concat(impact) FROM postings WHERE term = ?", (key,)
            ).fetchone()
            out[key] = self.kept.load(key, self.revs[key], docs, impacts)
        return out

    def filtered(self, docs: Sequence[int]) -> Iterable[tuple[int, str]]:
        sql = (
            "SELECT m.seq, m.updated_at FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value"
            f" WHERE m.workspace_id = ? AND m.project_id = ? AND {self.where}"
        )
        return self.conn.execute(sql, (json.dumps(list(docs)), *self.params))

    def impacts(
        self, docs: Sequence[int], terms: Sequence[Sequence[int]], *, every: bool
    ) -> Iterable[tuple[int, str, int | None, int | None]]:
        # The candidates first (CROSS JOIN keeps the order: with plain JOINs the planner started from
        # a key's whole posting list, 20-30 ms for 50 candidates of memory_search "prearkflirwal
        # 基准测试" at 100k, now 1), then their postings through postings_doc: for a few keys one
        # lookup each (``every``: a candidate missing a term is left out here, before its rows are
        # made); for more, each candidate's postings as one range, the keys a filter (``+term``).
        # A memory holds a few dozen keys; replayed calls at 100,000 (each way in a pass of its own):
        # from 5 keys the range costs a quarter to two fifths less (memory_add's ``similar`` asks ~16),
        # below them up to two thirds more (a recall's 2-3).
        keys = list(dict.fromkeys(key for term in terms for key in term))
        head = "FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value"
        where = f"WHERE m.workspace_id = ? AND m.project_id = ? AND {self.where}"
        if len(keys) >= RANGES_FROM:
            sql = (
                f"SELECT m.seq, m.updated_at, q.term, q.impact {head}"
                f" LEFT JOIN postings q ON q.doc = m.seq AND +q.term {_in(keys)} {where}"
            )
            return self.conn.execute(sql, (json.dumps(list(docs)), *keys, *self.params))
        joins = "".join(f" LEFT JOIN postings q{i} ON q{i}.doc = m.seq AND q{i}.term = ?" for i in range(len(keys)))
        columns = ", ".join(f"q{i}.impact" for i in range(len(keys)))
        held = ""
        if every:
            column = {key: f"q{i}.impact" for i, key in enumerate(keys)}
            held = "".join(" AND (" + " OR ".join(f"{column[key]} IS NOT NULL" for key in term) + ")" for term in terms)
        sql = f"SELECT m.seq, m.updated_at, {columns} {head}{joins} {where}{held}"
        return _per_key(self.conn.execute(sql, (json.dumps(list(docs)), *keys, *self.params)), keys)

    def passing_at_most(self, most: int) -> int:
        sql = (
            "SELECT count(*) FROM (SELECT 1 FROM memories m"
            f" WHERE m.workspace_id = ? AND m.project_id = ? AND {self.where} LIMIT ?)"
        )
        return int(self.conn.execute(sql, (*self.params, most)).fetchone()[0])

    def matching(self, keys: Sequence[int]) -> Iterable[tuple[int, str, int, int]]:
        sql = (
            "SELECT m.seq, m.updated_at, q.term, q.impact FROM memories m CROSS JOIN postings q"
            f" ON q.doc = m.seq AND q.term {_in(keys)} WHERE m.workspace_id = ? AND m.project_id = ? AND {self.where}"
        )
        return self.conn.execute(sql, (*keys, *self.params))


def _per_key(rows: Iterable[Sequence[Any]], keys: Sequence[int]) -> Iterator[tuple[int, str, int | None, int | None]]:
    """Rows (doc, updated_at, impact of each key or None) as ``impacts`` gives them: one per key held,
    or one with None when the document holds none."""
    for doc, updated_at, *found in rows:
        held: list[tuple[int | None, int | None]] = [
            (key, impact) for key, impact in zip(keys, found, strict=True) if impact is not None
        ]
        for key, impact in held or [(None, None)]:
            yield doc, updated_at, key, impact


def _held(lists: dict[int, Postings], keys: Sequence[int], docs: np.ndarray) -> np.ndarray:
    """Per document of ``docs``: its best impact in these keys' lists (0: none holds it)."""
    best = np.zeros(len(docs), dtype=np.int32)
    for key in keys:
        held, impacts = lists[key]
        if not len(held):
            continue
        at = np.searchsorted(held, docs)
        np.minimum(at, len(held) - 1, out=at)
        np.maximum(best, np.where(held[at] == docs, impacts[at], 0), out=best)
    return best
