"""SQLite adapters for every port, sharing one database file.

One connection per thread (``check_same_thread`` stays on); WAL lets readers run beside the one
writer. Writes take ``BEGIN IMMEDIATE``, so a read-decide-write (a version check, a rate-limit
bucket) is atomic across threads and processes. ``unit_of_work`` nests: a record and its index
row commit in one transaction, which is why an edit is searchable the moment it returns.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from importlib import resources
from pathlib import Path
from typing import Any

from mnemo import text
from mnemo.backends.errors import translate_errors
from mnemo.backends.sqlite.maintenance import SqliteMaintenance
from mnemo.errors import StoreUnavailable
from mnemo.gcra import step
from mnemo.models.common import format_ts
from mnemo.models.records import ApiKey, MemoryRecord, Project, RateLimits, Workspace
from mnemo.ports import (
    IdempotencyMismatch,
    IdempotentResult,
    IndexHit,
    IndexQuery,
    MemoryFilter,
    Page,
    RateClass,
    RateDecision,
    Scope,
    VersionConflict,
)

IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000
#: SQLite result codes that mean "the file cannot be used right now" (extended codes share the prefix)
_OUTAGES = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN", "SQLITE_IOERR")


def outage(exc: BaseException) -> StoreUnavailable | None:
    """A locked, unreadable or vanished database file is an outage (503); other errors are bugs."""
    if isinstance(exc, sqlite3.OperationalError) and (exc.sqlite_errorname or "").startswith(_OUTAGES):
        return StoreUnavailable(cause=str(exc.sqlite_errorname))
    return None


#: bm25 column weights: scope, content, tags, path
_BM25 = "bm25(memory_fts, 0.0, 1.0, 0.6, 0.4)"


def _execute(conn: sqlite3.Connection, statement: str) -> None:
    """BEGIN and COMMIT run in the caller's ``with``, outside any adapter method: translate here."""
    try:
        conn.execute(statement)
    except sqlite3.OperationalError as exc:
        error = outage(exc)
        if error is None:
            raise
        raise error from exc


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced (the base class cannot), so a finished thread's
    connection is closed with the thread instead of living as long as the Database."""


class Database:
    """Thread-local connections to one SQLite file, and the transaction discipline."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # weak: the local server runs each request on a new thread; holding every thread's
        # connection here leaked two file descriptors per request until the process died
        self._all: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self.conn().executescript(_SCHEMA)

    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0, factory=_Connection)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA case_sensitive_like=ON")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            self._local.depth = 0
            with self._lock:
                self._all.add(conn)
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; nested calls join the outermost one."""
        conn = self.conn()
        if self._local.depth:
            self._local.depth += 1
            try:
                yield conn
            finally:
                self._local.depth -= 1
            return
        _execute(conn, "BEGIN IMMEDIATE")
        self._local.depth = 1
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            _execute(conn, "COMMIT")
        finally:
            self._local.depth = 0

    def close(self) -> None:
        with self._lock:
            for conn in list(self._all):
                with suppress(sqlite3.ProgrammingError):  # closed from its own thread already
                    conn.close()
            self._all.clear()


_SCHEMA = resources.files("mnemo.backends.sqlite").joinpath("schema.sql").read_text(encoding="utf-8")


#: ``PRAGMA user_version`` of a database whose full-text index has the current layout; an older
#: one is re-indexed from the records when it is opened (``SqliteBackend.__init__``).
INDEX_VERSION = 2


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


def _filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    clauses = [f"({alias}.expires_at IS NULL OR {alias}.expires_at > ?)"]
    params: list[Any] = [format_ts(flt.now)]
    if flt.kind is not None:
        clauses.append(f"{alias}.kind_fold = ?")
        params.append(flt.kind.casefold())
    if flt.kind_like is not None and flt.kind_like != "%":
        clauses.append(f"{alias}.kind_fold LIKE ? ESCAPE '\\'")
        params.append(flt.kind_like.casefold())
    if flt.path_like is not None and flt.path_like != "%":
        clauses.append(f"{alias}.path_fold LIKE ? ESCAPE '\\'")
        params.append(flt.path_like.casefold())
    for tag in flt.tags_all:
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)")
        params.append(tag)
    if flt.visible_teams is not None or not flt.include_unteamed:
        team_clauses = []
        if flt.include_unteamed:
            team_clauses.append(f"{alias}.team_id IS NULL")
        teams = sorted(flt.visible_teams or ())
        if teams:
            team_clauses.append(f"{alias}.team_id IN ({','.join('?' * len(teams))})")
            params.extend(teams)
        clauses.append("(" + (" OR ".join(team_clauses) or "0") + ")")
    return " AND ".join(clauses), params


def _record(row: sqlite3.Row) -> MemoryRecord:
    return MemoryRecord.model_validate_json(row["body"])


@translate_errors(outage)
class SqliteMemoryStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def unit_of_work(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def create(self, record: MemoryRecord) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO memories (id, workspace_id, project_id, kind_fold, path_fold, team_id, tags,"
                    " expires_at, updated_at, version, body) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    _row_values(record),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(record.id) from None

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        row = (
            self.db.conn()
            .execute(
                "SELECT body FROM memories WHERE id = ? AND workspace_id = ? AND project_id = ?",
                (memory_id, scope.workspace_id, scope.project_id),
            )
            .fetchone()
        )
        return _record(row) if row else None

    def replace(self, record: MemoryRecord, *, expected_version: int) -> None:
        with self.db.write() as conn:
            values = _row_values(record)
            cur = conn.execute(
                "UPDATE memories SET id=?, workspace_id=?, project_id=?, kind_fold=?, path_fold=?, team_id=?,"
                " tags=?, expires_at=?, updated_at=?, version=?, body=?, needs_repair=0"
                " WHERE id = ? AND workspace_id = ? AND project_id = ? AND version = ?",
                (*values, record.id, record.workspace_id, record.project_id, expected_version),
            )
            if cur.rowcount != 1:
                raise VersionConflict(record.id)

    def delete(self, scope: Scope, memory_id: str, *, expected_version: int) -> None:
        with self.db.write() as conn:
            row = conn.execute(
                "DELETE FROM memories WHERE id = ? AND workspace_id = ? AND project_id = ? AND version = ?"
                " RETURNING seq",
                (memory_id, scope.workspace_id, scope.project_id, expected_version),
            ).fetchone()
            if row is None:
                raise VersionConflict(memory_id)
            conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (row["seq"],))

    def recent(self, scope: Scope, flt: MemoryFilter, limit: int) -> list[MemoryRecord]:
        where, params = _filter_sql(flt)
        rows = (
            self.db.conn()
            .execute(
                f"SELECT m.body FROM memories m WHERE m.workspace_id = ? AND m.project_id = ? AND {where}"
                " ORDER BY m.updated_at DESC, m.id DESC LIMIT ?",
                (scope.workspace_id, scope.project_id, *params, limit),
            )
            .fetchall()
        )
        return [_record(r) for r in rows]

    def scan_project(self, scope: Scope, *, cursor: str | None = None, limit: int = 100) -> Page[MemoryRecord]:
        rows = (
            self.db.conn()
            .execute(
                "SELECT body, id FROM memories WHERE workspace_id = ? AND project_id = ? AND id > ?"
                " ORDER BY id LIMIT ?",
                (scope.workspace_id, scope.project_id, cursor or "", limit + 1),
            )
            .fetchall()
        )
        more = len(rows) > limit
        records = [_record(r) for r in rows[:limit]]
        return Page(records, records[-1].id if more else None)

    def mark_for_repair(self, record: MemoryRecord) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE memories SET needs_repair = 1 WHERE id = ? AND project_id = ?", (record.id, record.project_id)
            )


def _row_values(record: MemoryRecord) -> tuple[Any, ...]:
    return (
        record.id,
        record.workspace_id,
        record.project_id,
        (record.kind or "").casefold(),
        (record.path or "").casefold(),
        record.team_id,
        json.dumps(record.tags, ensure_ascii=False),
        format_ts(record.expires_at) if record.expires_at else None,
        format_ts(record.updated_at),
        record.version,
        record.model_dump_json(),
    )


@translate_errors(outage)
class SqliteSearchIndex:
    """FTS5 over analysed terms. Writes join the store's transaction (same connection)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def upsert(self, record: MemoryRecord) -> None:
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT seq, version FROM memories WHERE id = ? AND project_id = ?", (record.id, record.project_id)
            ).fetchone()
            if row is None or row["version"] > record.version:
                return  # deleted meanwhile, or a newer version is already stored and indexed
            conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (row["seq"],))
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

    def rebuild(self) -> None:
        """Re-index every record (after a change of the index layout), in one transaction."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM memory_fts")
            for row in conn.execute("SELECT body FROM memories").fetchall():
                self.upsert(_record(row))
            conn.execute(f"PRAGMA user_version = {INDEX_VERSION}")

    def remove(self, record: MemoryRecord) -> None:
        # The store's delete removes the FTS row in the same transaction; nothing is left here.
        return None

    def search(self, query: IndexQuery) -> list[IndexHit]:
        if not query.terms:
            return []
        if not query.prefer_working:
            hits = self._search_ranked_first(query)
            if hits is not None:
                return hits
        return self._search_joined(query)

    def _search_joined(self, query: IndexQuery) -> list[IndexHit]:
        """Rank and filter in one statement: every match is joined to its record first."""
        where, params = _filter_sql(query.filter)
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
        return [IndexHit(_record(r), -float(r["rank"])) for r in rows]

    def _search_ranked_first(self, query: IndexQuery) -> list[IndexHit] | None:
        """Rank inside FTS5 first, then join and filter only the best candidates.

        Joining every match to its record before sorting cost as much as the ranking itself
        on a common term. Here FTS5 returns the ``k`` best (rowid, score) pairs; their records
        are read and filtered, and ordered by score then newest first. Every match scoring
        strictly better than the k-th candidate is among them, so when ``limit`` of those pass
        the filters they are exactly the answer. Otherwise ``k`` grows; past ``_MAX_CANDIDATES``
        the caller falls back to the joined statement (returns None).
        """
        conn = self.db.conn()
        match = _fts_query(query)
        where, params = _filter_sql(query.filter)
        k = max(4 * query.limit, 64)
        while True:
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
                return [IndexHit(_record(r), -float(rank_of[r[0]])) for r in rows[: query.limit]]
            if k >= _MAX_CANDIDATES:
                return None
            k *= 8


#: beyond this many ranked candidates, a selective filter is better served by the joined query
_MAX_CANDIDATES = 4096


@translate_errors(outage)
class SqliteRateLimiter:
    def __init__(self, db: Database) -> None:
        self.db = db

    def acquire(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        with self.db.write() as conn:
            now_ms = time.time_ns() // 1_000_000
            row = conn.execute(
                "SELECT tat_ms FROM rate_buckets WHERE workspace_id = ? AND rate_class = ?",
                (workspace_id, rate_class),
            ).fetchone()
            result = step(row["tat_ms"] if row else None, now_ms, limit, rate_class)
            if result.decision.allowed:
                conn.execute(
                    "INSERT INTO rate_buckets (workspace_id, rate_class, tat_ms) VALUES (?,?,?)"
                    " ON CONFLICT (workspace_id, rate_class) DO UPDATE SET tat_ms = excluded.tat_ms",
                    (workspace_id, rate_class, result.new_tat_ms),
                )
            return result.decision


@translate_errors(outage)
class SqliteTenantStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def is_empty(self) -> bool:
        return self.db.conn().execute("SELECT 1 FROM workspaces LIMIT 1").fetchone() is None

    def create_workspace(self, workspace: Workspace, default_project: Project) -> None:
        with self.db.write() as conn:
            conn.execute("INSERT INTO workspaces (id, body) VALUES (?, ?)", (workspace.id, workspace.model_dump_json()))
            self.create_project(default_project)

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        row = self.db.conn().execute("SELECT body FROM workspaces WHERE id = ?", (workspace_id,)).fetchone()
        return Workspace.model_validate_json(row["body"]) if row else None

    def list_workspaces(self) -> list[Workspace]:
        rows = self.db.conn().execute("SELECT body FROM workspaces ORDER BY id").fetchall()
        return [Workspace.model_validate_json(r["body"]) for r in rows]

    def set_limits(self, workspace_id: str, limits: RateLimits | None) -> None:
        with self.db.write() as conn:
            workspace = self.get_workspace(workspace_id)
            if workspace is None:
                raise VersionConflict(workspace_id)
            updated = workspace.model_copy(update={"limits": limits})
            conn.execute("UPDATE workspaces SET body = ? WHERE id = ?", (updated.model_dump_json(), workspace_id))

    def create_project(self, project: Project) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO projects (id, workspace_id, slug, body) VALUES (?,?,?,?)",
                    (project.id, project.workspace_id, project.slug, project.model_dump_json()),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(project.slug) from None

    def get_project(self, workspace_id: str, ref: str) -> Project | None:
        row = (
            self.db.conn()
            .execute(
                "SELECT body FROM projects WHERE workspace_id = ? AND (id = ? OR slug = ?)", (workspace_id, ref, ref)
            )
            .fetchone()
        )
        return Project.model_validate_json(row["body"]) if row else None

    def list_projects(self, workspace_id: str) -> list[Project]:
        rows = self.db.conn().execute("SELECT body FROM projects WHERE workspace_id = ? ORDER BY slug", (workspace_id,))
        return [Project.model_validate_json(r["body"]) for r in rows.fetchall()]

    def create_key(self, key: ApiKey) -> None:
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO api_keys (id, workspace_id, body) VALUES (?,?,?)",
                    (key.id, key.workspace_id, key.model_dump_json()),
                )
            except sqlite3.IntegrityError:
                raise VersionConflict(key.id) from None

    def get_key(self, key_id: str) -> ApiKey | None:
        row = self.db.conn().execute("SELECT body FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        return ApiKey.model_validate_json(row["body"]) if row else None

    def list_keys(self, workspace_id: str) -> list[ApiKey]:
        rows = self.db.conn().execute("SELECT body FROM api_keys WHERE workspace_id = ? ORDER BY id", (workspace_id,))
        return [ApiKey.model_validate_json(r["body"]) for r in rows.fetchall()]

    def revoke_key(self, workspace_id: str, key_id: str) -> bool:
        with self.db.write() as conn:
            key = self.get_key(key_id)
            if key is None or key.workspace_id != workspace_id:
                return False
            revoked = key.model_copy(update={"revoked": True})
            conn.execute("UPDATE api_keys SET body = ? WHERE id = ?", (revoked.model_dump_json(), key_id))
            return True


@translate_errors(outage)
class SqliteIdempotencyStore:
    """Keys and first results in one table; ``run_once`` holds the write transaction around the
    check, the computation and the store, so a concurrent duplicate waits and then replays."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def run_once(
        self, workspace_id: str, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        with self.db.write():
            prior = self.get(workspace_id, key)
            if prior is not None:
                if prior.fingerprint != fingerprint:
                    raise IdempotencyMismatch(key)
                return dict(prior.response)
            response = compute()
            self.put(workspace_id, key, IdempotentResult(fingerprint, response))
            return response

    def get(self, workspace_id: str, key: str) -> IdempotentResult | None:
        row = (
            self.db.conn()
            .execute(
                "SELECT fingerprint, response FROM idempotency WHERE workspace_id = ? AND key = ? AND created_ms > ?",
                (workspace_id, key, _now_ms() - IDEMPOTENCY_TTL_MS),
            )
            .fetchone()
        )
        return IdempotentResult(row["fingerprint"], json.loads(row["response"])) if row else None

    def put(self, workspace_id: str, key: str, result: IdempotentResult) -> None:
        with self.db.write() as conn:
            now = _now_ms()
            cur = conn.execute(
                "INSERT INTO idempotency (workspace_id, key, fingerprint, response, created_ms) VALUES (?,?,?,?,?)"
                " ON CONFLICT (workspace_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,"
                " response = excluded.response, created_ms = excluded.created_ms WHERE created_ms <= ?",
                (workspace_id, key, result.fingerprint, json.dumps(result.response), now, now - IDEMPOTENCY_TTL_MS),
            )
            if cur.rowcount != 1:
                raise VersionConflict(key)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class SqliteBackend:
    """All ports over one database file."""

    def __init__(self, path: str | Path) -> None:
        try:
            self.db = Database(path)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open the SQLite store at {path}: {exc}", cause=type(exc).__name__) from exc
        self.store = SqliteMemoryStore(self.db)
        self.index = SqliteSearchIndex(self.db)
        self.limiter = SqliteRateLimiter(self.db)
        self.tenants = SqliteTenantStore(self.db)
        self.idempotency = SqliteIdempotencyStore(self.db)
        self.maintenance = SqliteMaintenance(self.db)
        if self.db.conn().execute("PRAGMA user_version").fetchone()[0] < INDEX_VERSION:
            self.index.rebuild()

    def close(self) -> None:
        self.db.close()
