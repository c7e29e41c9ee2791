"""The SQLite ``SearchIndex``: an inverted index of ``mnemo.text``'s analysis, in the store's
database, with each term's postings ordered best first so a query reads only the top of each list.

Three modules, one job each: ``postings`` (what a record is indexed as, the tables, their writes,
rebuilds and reads), ``topk`` (the top-k engine, pure: Fagin's threshold algorithm over any
``PostingSource``) and this adapter, which runs them in the database's transactions and answers
the port. It also offers the cleanup job and the tests the index's documents (``entries``,
``walk``, ``drop``), so no other module reads its tables.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite import postings
from mnemo.backends.sqlite.db import Database, decode, outage
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.backends.sqlite.kept import MOST_POSTINGS, KeptLists
from mnemo.backends.sqlite.topk import (
    DRIVE,
    DRIVE_AFTER,
    MAX_LOOKUPS,
    MAX_SIZE,
    MAX_TOTAL,
    MIN_SIZE,
    Budgets,
    Hit,
    Term,
    top_k,
)
from mnemo.backends.sqlite.vectors import VectorSearch
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexEntry, IndexHit, IndexQuery, Page, Scope, VectorQuery

#: a key inserted without a revision, or whose count changes while its revision does not (a writer
#: that does not set revisions), gets a random one; this code always sets one (``postings``). Made
#: by ``migrate``, once the column exists (a trigger naming a missing column fails when it fires)
_REV_TRIGGERS = {
    "index_terms_rev_insert": "CREATE TRIGGER IF NOT EXISTS index_terms_rev_insert AFTER INSERT ON index_terms"
    " WHEN NEW.rev = 0 BEGIN UPDATE index_terms SET rev = random() WHERE id = NEW.id; END",
    "index_terms_rev_update": "CREATE TRIGGER IF NOT EXISTS index_terms_rev_update AFTER UPDATE OF df ON index_terms"
    " WHEN NEW.rev = OLD.rev BEGIN UPDATE index_terms SET rev = random() WHERE id = NEW.id; END",
}

_ENTRY_COLUMNS = "x.workspace_id, x.project_id, x.id, x.doc, x.version"


def _entry(row: Sequence[Any]) -> IndexEntry:
    """The index document of a row of :data:`_ENTRY_COLUMNS`."""
    workspace_id, project_id, memory_id, doc, version = row[:5]
    return IndexEntry(ref=str(doc), scope=Scope(workspace_id, project_id), memory_id=memory_id, version=version)


@translate_errors(outage)
class SqliteSearchIndex:
    def __init__(
        self,
        db: Database,
        *,
        min_size: int = MIN_SIZE,
        max_size: int = MAX_SIZE,
        max_total: int = MAX_TOTAL,
        max_lookups: int = MAX_LOOKUPS,
        drive: int = DRIVE,
        drive_after: int = DRIVE_AFTER,
        kept_postings: int = MOST_POSTINGS,
    ) -> None:
        self.db = db
        self.vectors = VectorSearch(db)
        self.budgets = Budgets(min_size, max_size, max_total, max_lookups, drive, drive_after)
        #: posting lists kept in the process for the co-occurrence lookups (``kept``; 0: none)
        self.kept = KeptLists(kept_postings) if kept_postings else None

    def upsert(self, record: MemoryRecord) -> None:
        """Index the stored record's current version (a newer stored version is left as it is, and
        the version the index holds already too)."""
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT seq, version FROM memories WHERE id = ? AND project_id = ?", (record.id, record.project_id)
            ).fetchone()
            if row is None or row["version"] > record.version:
                return  # deleted meanwhile, or a newer version is already stored and indexed
            held = conn.execute(
                "SELECT doc, version FROM index_docs WHERE project_id = ? AND id = ?", (record.project_id, record.id)
            ).fetchone()
            if held is not None and held["doc"] == row["seq"] and held["version"] == record.version:
                # indexed at this version already: a version's words never change (every change of
                # content, tags or path is a new version), and SQLite keeps a vector with the record,
                # not here — the upsert after a memory's vector is written re-indexed its words for nothing
                return
            postings.drop_document(conn, record.project_id, record.id, self.kept)
            postings.drop_postings(conn, row["seq"], self.kept)  # postings no document names
            postings.insert_document(conn, record, row["seq"], self.kept)

    def remove(self, record: MemoryRecord) -> None:
        """Make the record unsearchable, unless the index holds a newer version of it."""
        with self.db.write() as conn:
            held = conn.execute(
                "SELECT version FROM index_docs WHERE project_id = ? AND id = ?", (record.project_id, record.id)
            ).fetchone()
            if held is not None and held["version"] <= record.version:
                postings.drop_document(conn, record.project_id, record.id, self.kept)

    def rebuild(self) -> None:
        """Re-index every record (after a change of the index layout or the analysis), in one
        transaction."""
        if self.kept is not None:
            self.kept.clear()  # (their revisions are gone with the dictionary: only memory is freed)
        with self.db.write() as conn:
            postings.rebuild(conn)

    def migrate(self) -> None:
        """Give a dictionary written before revisions its ``rev`` column (0 for every key: no list
        is kept yet) and the triggers that give a key a new revision when a writer that does not
        set one changes it — a process of an older version still open on the same file (an agent's
        ``mnemo mcp`` started before the upgrade): its writes would otherwise leave kept lists stale."""
        conn = self.db.conn()
        triggers = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        if "rev" in self._term_columns(conn) and set(_REV_TRIGGERS) <= triggers:
            return
        with self.db.write() as conn:
            if "rev" not in self._term_columns(conn):  # another process may have added it
                conn.execute("ALTER TABLE index_terms ADD COLUMN rev INTEGER NOT NULL DEFAULT 0")
            for statement in _REV_TRIGGERS.values():
                conn.execute(statement)

    @staticmethod
    def _term_columns(conn: sqlite3.Connection) -> set[str]:
        return {row[1] for row in conn.execute("PRAGMA table_info(index_terms)")}

    def outdated(self) -> bool:
        """Whether the index was built with another layout or analysis (then ``rebuild``)."""
        return postings.outdated(self.db.conn())

    # -- the index's documents (the cleanup job's walks and drops) -------------------------------

    def entries(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], IndexEntry]:
        """The documents the index holds of these memories, by (project id, memory id)."""
        pairs = json.dumps([list(key) for key in keys])
        rows = (
            self.db.conn()
            .execute(
                f"SELECT {_ENTRY_COLUMNS} FROM json_each(?) AS k"
                " CROSS JOIN index_docs x ON x.project_id = k.value ->> 0 AND x.id = k.value ->> 1",
                (pairs,),
            )
            .fetchall()
        )
        return {(row[1], row[2]): _entry(row) for row in rows}

    def entries_of(self, memory_id: str) -> list[IndexEntry]:
        """The documents of a memory id in any project (a scan: for tests and repairs by hand)."""
        rows = self.db.conn().execute(f"SELECT {_ENTRY_COLUMNS} FROM index_docs x WHERE x.id = ?", (memory_id,))
        return [_entry(row) for row in rows.fetchall()]

    def walk(self, cursor: str | None, limit: int) -> Page[IndexEntry]:
        """The index's documents in (project id, memory id) order, ``limit`` a page."""
        after_project, after_id = json.loads(cursor) if cursor else ("", "")
        rows = (
            self.db.conn()
            .execute(
                f"SELECT {_ENTRY_COLUMNS} FROM index_docs x WHERE (x.project_id, x.id) > (?, ?)"
                " ORDER BY x.project_id, x.id LIMIT ?",
                (after_project, after_id, limit),
            )
            .fetchall()
        )
        last = json.dumps([rows[-1][1], rows[-1][2]]) if len(rows) == limit else None
        return Page([_entry(row) for row in rows], last)

    def drop(self, project_id: str, memory_id: str) -> bool:
        """Remove a memory's document whatever its version; False when the index held none."""
        with self.db.write() as conn:
            return postings.drop_document(conn, project_id, memory_id, self.kept)

    # -- search ---------------------------------------------------------------------------------

    def ensure(self) -> None:
        """Nothing to do: the index's tables are made with the store's."""

    def prepare(self, wait_s: float) -> None:
        """Nothing to do: the index's tables are made with the store's (``outdated`` and
        ``rebuild`` are the start-up's)."""

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        return self.vectors.similar(query)

    def search(self, query: IndexQuery) -> list[IndexHit]:
        if not query.terms:
            return []
        conn = self.db.conn()
        plan, docs, revs = postings.plan(conn, query)
        if query.mode == "all" and not all(term.keys for term in plan):
            return []  # a term no memory of the project holds
        if not any(term.keys for term in plan):
            return []
        if not query.prefer_working:
            return self._top(query, plan, revs, docs, "", query.limit)
        hits = self._top(query, plan, revs, docs, " AND m.kind_fold = 'working'", query.limit)
        if len(hits) < query.limit:
            hits += self._top(query, plan, revs, docs, " AND m.kind_fold <> 'working'", query.limit - len(hits))
        return hits

    def _top(
        self, query: IndexQuery, plan: list[Term], revs: dict[int, int], docs: int, extra: str, limit: int
    ) -> list[IndexHit]:
        where, params = filter_sql(query.filter)
        conn = self.db.conn()
        scope = (query.scope.workspace_id, query.scope.project_id)
        source = postings.SqlPostings(conn, where + extra, (*scope, *params), self.kept, plan, revs)
        best = top_k(
            source, plan, mode=query.mode, limit=limit, docs=docs, ceiling=postings.CEILING, budgets=self.budgets
        )
        return self._hits(best)

    def _hits(self, best: Sequence[Hit]) -> list[IndexHit]:
        if not best:
            return []
        bodies = dict(
            self.db.conn()
            .execute(
                "SELECT m.seq, m.body FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value",
                (json.dumps([doc for doc, _, _ in best]),),
            )
            .fetchall()
        )
        return [
            IndexHit(decode(bodies[doc]), score / postings.SCALE, matched=matched)
            for doc, score, matched in best
            if doc in bodies
        ]
