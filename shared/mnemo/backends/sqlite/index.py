"""The full-text index: FTS5 over the analysed terms of ``mnemo.text``, in the store's database.

Every term is indexed with a six-character prefix derived from its project (see ``_scoped_text``),
through FTS5's ``ascii`` tokenizer, which keeps non-ASCII bytes inside tokens, so each analysed
term — a word, or a CJK bigram — stays one token. An FTS row's rowid is its memory's ``seq``; the
index's own document table ``index_rows`` (project, memory id → rowid, version) is how it finds a
record's row again after the record is gone, as OpenSearch finds a document by its ``_id``. Index
writes join the caller's transaction (the same connection), so a record and its index row commit
together.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mnemo import text
from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.db import INDEX_VERSION, Database, outage, record_of
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.like import is_match_all
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexHit, IndexQuery, MemoryFilter

#: bm25 column weights: scope, content, tags, path
_BM25 = "bm25(memory_fts, 0.0, 1.0, 0.6, 0.4)"


def _scope_token(project_id: str) -> str:
    return "p" + project_id.removeprefix("prj_").lower()


def _term_prefix(project_id: str) -> str:
    """Six hex digits derived from the project id, prefixed to every indexed term."""
    return hashlib.blake2s(project_id.encode(), digest_size=3).hexdigest()


def _scoped_text(prefix: str, value: str) -> str:
    """Analysed terms, each prefixed with the project's ``_term_prefix`` (always six characters,
    so unambiguous). A term's posting list then holds one project's rows: a search does not walk
    other projects' rows, and needs no "in this project" phrase — matching such a phrase, present
    in every row, cost a pass over the whole project per query (≈ 9 ms at 100k rows, for its
    ranking IDF as much as for the AND). Two projects sharing a prefix (one chance in 16 million
    per pair) only share posting lists: the join on ``memories.project_id`` keeps results apart."""
    return " ".join(prefix + term for term in text.terms(value))


def _fts_query(query: IndexQuery) -> str:
    prefix = _term_prefix(query.scope.project_id)
    joiner = " AND " if query.mode == "all" else " OR "
    # No column filter: prefixed terms start with a hex digit, the scope column's token with "p",
    # so only content, tags and path can match (the filter cost ~5 % on common terms).
    return joiner.join(f'"{prefix}{t.text}"' + ("*" if t.prefix else "") for t in query.terms)


@translate_errors(outage)
class SqliteSearchIndex:
    def __init__(self, db: Database) -> None:
        self.db = db

    def upsert(self, record: MemoryRecord) -> None:
        """Index the stored record's current version (a newer stored version is left as it is)."""
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT seq, version FROM memories WHERE id = ? AND project_id = ?", (record.id, record.project_id)
            ).fetchone()
            if row is None or row["version"] > record.version:
                return  # deleted meanwhile, or a newer version is already stored and indexed
            self._drop_row(conn, record.project_id, record.id)
            conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (row["seq"],))  # a row no document names
            prefix = _term_prefix(record.project_id)
            conn.execute(
                "INSERT INTO memory_fts (rowid, scope, content, tags, path) VALUES (?,?,?,?,?)",
                (
                    row["seq"],
                    _scope_token(record.project_id),
                    _scoped_text(prefix, record.content),
                    _scoped_text(prefix, " ".join(record.tags)),
                    _scoped_text(prefix, record.path or ""),
                ),
            )
            conn.execute(
                "INSERT INTO index_rows (workspace_id, project_id, id, fts_rowid, version) VALUES (?,?,?,?,?)",
                (record.workspace_id, record.project_id, record.id, row["seq"], record.version),
            )

    def remove(self, record: MemoryRecord) -> None:
        """Make the record unsearchable, unless the index holds a newer version of it."""
        with self.db.write() as conn:
            held = conn.execute(
                "SELECT version FROM index_rows WHERE project_id = ? AND id = ?", (record.project_id, record.id)
            ).fetchone()
            if held is not None and held["version"] <= record.version:
                self._drop_row(conn, record.project_id, record.id)

    @staticmethod
    def _drop_row(conn: Any, project_id: str, memory_id: str) -> None:
        found = conn.execute(
            "DELETE FROM index_rows WHERE project_id = ? AND id = ? RETURNING fts_rowid", (project_id, memory_id)
        ).fetchone()
        if found is not None:
            conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (found["fts_rowid"],))

    def rebuild(self) -> None:
        """Re-index every record (after a change of the index layout), in one transaction."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM memory_fts")
            conn.execute("DELETE FROM index_rows")
            for row in conn.execute("SELECT body FROM memories").fetchall():
                self.upsert(record_of(row))
            conn.execute(f"PRAGMA user_version = {INDEX_VERSION}")

    def search(self, query: IndexQuery) -> list[IndexHit]:
        if not query.terms:
            return []
        if not query.prefer_working and not _narrows(query.filter):
            hits = self._search_ranked_first(query)
            if hits is not None:
                return hits
        return self._search_joined(query)

    def _search_joined(self, query: IndexQuery) -> list[IndexHit]:
        """Rank and filter in one statement: every match is joined to its record first."""
        where, params = filter_sql(query.filter)
        order = f"{_BM25}, m.updated_at DESC"
        if query.prefer_working:
            order = f"(m.kind_fold = 'working') DESC, {order}"
        rows = (
            self.db.conn()
            .execute(
                f"SELECT m.body, {_BM25} AS rank FROM memory_fts JOIN memories m ON m.seq = memory_fts.rowid"
                f" WHERE memory_fts MATCH ? AND m.workspace_id = ? AND m.project_id = ? AND {where}"
                f" ORDER BY {order} LIMIT ?",
                (_fts_query(query), query.scope.workspace_id, query.scope.project_id, *params, query.limit),
            )
            .fetchall()
        )
        return [IndexHit(record_of(r), -float(r["rank"])) for r in rows]

    def _search_ranked_first(self, query: IndexQuery) -> list[IndexHit] | None:
        """Rank inside FTS5 first, then join and filter only the best candidates.

        Joining every match to its record before sorting cost as much as the ranking itself
        on a common term. Here FTS5 returns the ``k`` best (rowid, score) pairs; their records
        are read and filtered, and ordered by score then newest first. Every match scoring
        strictly better than the k-th candidate is among them, so when ``limit`` of those pass
        the filters they are exactly the answer. Otherwise one more round asks for as many
        candidates as the first round's pass rate says ``limit`` needs (twice that, for margin);
        when that is over ``_MAX_CANDIDATES``, or nothing passed, or the second round falls short
        too, the caller falls back to the joined statement (returns None). Each round ranks every
        match again, so rounds are few: growing ``k`` eightfold up to 4096 cost four full rankings
        and the join on a selective filter (≈ 4 × 39 ms of CPU for 64 common prefix terms at 10k).
        """
        conn = self.db.conn()
        match = _fts_query(query)
        where, params = filter_sql(query.filter)
        k = max(4 * query.limit, 64)
        for round_ in (1, 2):
            candidates = conn.execute(
                f"SELECT rowid, {_BM25} FROM memory_fts WHERE memory_fts MATCH ? ORDER BY 2 LIMIT ?", (match, k)
            ).fetchall()
            if not candidates:
                return []
            complete = len(candidates) < k
            bound = candidates[-1][1]
            rank_of = dict(candidates)
            rows = conn.execute(
                # CROSS JOIN keeps this order: by rowid from the candidates, never a project scan
                f"SELECT m.seq, m.updated_at, m.body FROM json_each(?) AS c CROSS JOIN memories m"
                f" ON m.seq = c.value WHERE m.workspace_id = ? AND m.project_id = ? AND {where}",
                (json.dumps(list(rank_of)), query.scope.workspace_id, query.scope.project_id, *params),
            ).fetchall()
            if not complete:
                rows = [r for r in rows if rank_of[r[0]] < bound]  # a tie at the bound may continue past k
            if complete or len(rows) >= query.limit:
                rows.sort(key=lambda r: r[1], reverse=True)  # newest first among equal scores
                rows.sort(key=lambda r: rank_of[r[0]])
                return [IndexHit(record_of(r), -float(rank_of[r[0]])) for r in rows[: query.limit]]
            if round_ == 2 or not rows:
                return None
            k = 2 * k * query.limit // len(rows)
            if k > _MAX_CANDIDATES:
                return None
        return None


def _narrows(flt: MemoryFilter) -> bool:
    """Whether the caller's own filters (kind, tags, LIKE patterns, a team) leave out memories.
    Then the joined statement goes first: it scores only the matches that pass them, where
    ranking first scores every match and may find few of the best passing (a selective pattern
    cost a full ranking before the fallback did the work again). Visibility alone — teams the key
    may see, expiry — passes nearly everything, and ranking first serves it best."""
    return bool(
        flt.kind is not None
        or flt.tags_all
        or not is_match_all(flt.kind_like)
        or not is_match_all(flt.path_like)
        or not flt.include_unteamed
    )


#: beyond this many ranked candidates, a selective filter is better served by the joined query
_MAX_CANDIDATES = 4096
