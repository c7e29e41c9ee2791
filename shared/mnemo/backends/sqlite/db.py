"""The embedded backend's database: one SQLite file (WAL), thread-local connections, the
transaction discipline every adapter shares, and the engine's outages as ``StoreUnavailable``.

One connection per thread (``check_same_thread`` stays on); WAL lets readers run beside the one
writer. Writes take ``BEGIN IMMEDIATE``, so a read-decide-write (a version check, a rate-limit
bucket) is atomic across threads and processes. ``write()`` nests (a SAVEPOINT inside the outer
transaction): a record and its index row commit in one transaction, which is why an edit is
searchable the moment it returns, and an inner block that fails leaves none of its writes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import resources
from pathlib import Path

from mnemo.errors import StoreUnavailable
from mnemo.models.records import Embedding, MemoryRecord

#: how much of the database file a connection maps into memory (address space, not RAM)
MMAP_BYTES = 1 << 30

#: A host that waits between calls (``Database.checkpoint_when_due``) checkpoints the write-ahead
#: log itself once its connection has changed this many rows since it last did (a memory_add
#: changes ~100 rows in ~120 pages: its record, its postings and their keys; any call one more, its
#: rate bucket; so about as often as SQLite's own checkpoint, and seldom after reads alone: once
#: every 64 commits, reads made checkpoints due, and the read after one pays for the pages it moved)...
CHECKPOINT_AFTER = 1000
#: ...and SQLite's own checkpoint, inside the commit that takes the log past this many pages (1,000
#: by default), stays as the backstop for a host too busy to wait. At 100,000 memories an add writes
#: ~120 pages: the default checkpoint ran inside every eighth or so add, tens of ms of copying and
#: syncing (bench/results/2026-12-05-checkpoint-between-calls.md).
BACKSTOP_PAGES = 10_000

#: SQLite result codes that mean "the file cannot be used right now" (extended codes share the prefix)
_OUTAGES = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN", "SQLITE_IOERR")


def outage(exc: BaseException, operation: str = "") -> StoreUnavailable | None:
    """A locked, unreadable or vanished database file is an outage (503); other errors are bugs."""
    if isinstance(exc, sqlite3.OperationalError) and (exc.sqlite_errorname or "").startswith(_OUTAGES):
        return StoreUnavailable(cause=str(exc.sqlite_errorname))
    return None


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
            # Searches look up postings and records at random (backends/sqlite/topk/): pages read
            # through a memory map cost them less than read() calls. The map is dropped when another
            # connection has written (the next read remaps it), which costs writes less than it spares
            # searches (bench/results/2026-12-05-every-tool-100k-int8-and-mmap.md).
            conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            # Statement journals in memory, never a file: indexing a memory upserts its terms in one
            # statement whose journal outgrew SQLite's 64 KiB spill, a temp file per write
            # (bench/results/2026-12-05-temp-store.md).
            conn.execute("PRAGMA temp_store=MEMORY")
            self._local.conn = conn
            self._local.depth = 0
            self._local.checkpointed_at = 0  # the connection's total_changes at the host's last checkpoint
            self._local.tidied = False  # the host checkpoints between calls (the backstop is set)
            with self._lock:
                self._all.add(conn)
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction. A nested call runs in a SAVEPOINT of the outermost one: its writes
        commit with that transaction, and when it fails they are undone — all of them — even if an
        outer block catches the error and goes on (sqlite-utils' ``Database.atomic()`` nests alike)."""
        conn = self.conn()
        depth: int = self._local.depth
        if depth:
            savepoint = f"nested_{depth}"
            _execute(conn, f"SAVEPOINT {savepoint}")
            self._local.depth = depth + 1
            try:
                yield conn
            except BaseException:
                conn.execute(f"ROLLBACK TO {savepoint}")
                conn.execute(f"RELEASE {savepoint}")
                raise
            else:
                _execute(conn, f"RELEASE {savepoint}")
            finally:
                self._local.depth = depth
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

    def checkpoint_when_due(self) -> bool:
        """For a host that waits between calls, on the thread that serves them (its connection):
        checkpoint the write-ahead log once the connection changed ``CHECKPOINT_AFTER`` rows since
        the last time (``total_changes``), rather than inside a write. The first call sets this connection's own
        checkpoint to ``BACKSTOP_PAGES``. PASSIVE: it waits for no reader or writer (what a reader
        still needs is left for the next). Whether it checkpointed."""
        conn = self.conn()
        if self._local.depth:
            return False  # inside a transaction: not between calls
        if not self._local.tidied:
            conn.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_PAGES}")
            self._local.tidied = True
        if conn.total_changes - self._local.checkpointed_at < CHECKPOINT_AFTER:
            return False
        self._local.checkpointed_at = conn.total_changes
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.OperationalError as exc:
            if outage(exc) is None:
                raise
            return False  # busy or unreadable now: the next wait (or the backstop) checkpoints
        return True

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: its statements see one state of the database (inside a write
        transaction, that one's)."""
        conn = self.conn()
        if self._local.depth:
            yield conn
            return
        _execute(conn, "BEGIN")
        self._local.depth = 1  # a write inside it cannot start its own transaction
        try:
            yield conn
        finally:
            self._local.depth = 0
            _execute(conn, "COMMIT")

    def close(self) -> None:
        with self._lock:
            for conn in list(self._all):
                with suppress(sqlite3.ProgrammingError):  # closed from its own thread already
                    conn.close()
            self._all.clear()


_SCHEMA = resources.files("mnemo.backends.sqlite").joinpath("schema.sql").read_text(encoding="utf-8")


#: ``PRAGMA user_version`` of a database whose full-text index has the current layout; an older
#: one (or one built with another ``mnemo.text.ANALYSIS``, recorded in ``index_meta``) is
#: re-indexed from the records when it is opened (``SqliteBackend.__init__``).
#: 3: the index keeps its own document table, ``index_rows`` (``index.py``).
#: 4: an impact-ordered inverted index of stems and words (``postings``) replaces FTS5.
INDEX_VERSION = 4


#: how many decoded records :func:`decode` keeps (a few MB: bodies are at most 4 KiB of content).
#: More spares hybrid recall some CPU at 10,000 memories, but every full collection of the garbage
#: collector walks what is kept, which lengthened the pauses at 100,000 memories more than it spared
#: (bench/results/2026-12-05-paired-decode-cache.md, 2026-12-05-gc-decode-cache.md)
DECODED_KEPT = 4096
_decoded: dict[str, MemoryRecord] = {}
_decoded_lock = threading.Lock()


def decode(body: str) -> MemoryRecord:
    """The record a stored JSON body holds. The last DECODED_KEPT bodies' records are kept, keyed
    by the body's text: the same text is the same record (records are frozen), and a change to a
    memory is a new text, so nothing is ever stale. A search reads the same memories again and
    again (recall decodes its 200 candidates: ~6 µs each with pydantic, ~1 µs found here;
    bench/results/2026-12-03-callsplit-before.md)."""
    record = _decoded.get(body)
    if record is None:
        record = MemoryRecord.model_validate_json(body)
        with _decoded_lock:
            while len(_decoded) >= DECODED_KEPT:
                del _decoded[next(iter(_decoded))]  # the oldest first
            _decoded[body] = record
    return record


def record_of(row: sqlite3.Row) -> MemoryRecord:
    """A record from its stored JSON body (the source of truth; the other columns serve queries),
    with its vector when the row was read with ``vec`` and ``vec_model`` (:data:`VECTOR_COLUMNS`)."""
    record = decode(row["body"])
    if "vec" in row.keys() and row["vec"] is not None:  # noqa: SIM118 - sqlite3.Row has no __contains__ for names
        return record.model_copy(update={"embedding": Embedding.from_bytes(row["vec_model"], row["vec"])})
    return record


#: what a query selects (table alias ``m``) for :func:`record_of` to return a record with its vector
VECTOR_COLUMNS = "m.body, m.vec, m.vec_model"


def now_ms() -> int:
    return time.time_ns() // 1_000_000
