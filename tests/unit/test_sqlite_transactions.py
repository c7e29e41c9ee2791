"""``Database.write()`` nesting: an inner block is a SAVEPOINT of the outer transaction; and where
each connection keeps its statement journals."""

from __future__ import annotations

import json
import sqlite3
from contextlib import suppress
from pathlib import Path

import pytest
from mnemo.backends.sqlite.db import Database


class Boom(Exception):
    pass


def _checkpoint(conn: sqlite3.Connection, name: str) -> None:
    conn.execute("INSERT INTO maintenance_checkpoints (name, cursor, updated_ms) VALUES (?, NULL, 0)", (name,))


def _names(db: Database) -> list[str]:
    return [row["name"] for row in db.conn().execute("SELECT name FROM maintenance_checkpoints ORDER BY name")]


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(tmp_path / "t.db")


def test_an_inner_failure_caught_by_the_outer_block_leaves_none_of_its_writes(db):
    with db.write() as conn:
        _checkpoint(conn, "a-outer-before")
        with suppress(Boom), db.write() as inner:
            _checkpoint(inner, "b-inner-1")
            _checkpoint(inner, "b-inner-2")
            raise Boom
        _checkpoint(conn, "c-outer-after")

    assert _names(db) == ["a-outer-before", "c-outer-after"]


def test_a_failure_two_levels_down_undoes_only_its_own_level(db):
    with db.write() as conn:
        with db.write() as middle:
            _checkpoint(middle, "a-middle")
            with suppress(Boom), db.write() as inner:
                _checkpoint(inner, "b-inner")
                raise Boom
            _checkpoint(middle, "c-middle-after")
        _checkpoint(conn, "d-outer")

    assert _names(db) == ["a-middle", "c-middle-after", "d-outer"]


def test_inner_writes_that_succeeded_go_with_an_outer_failure(db):
    with pytest.raises(Boom), db.write() as conn:
        with db.write() as inner:
            _checkpoint(inner, "inner")
        _checkpoint(conn, "outer")
        raise Boom

    assert _names(db) == []


def test_after_a_caught_inner_failure_the_next_transaction_starts_clean(db):
    with db.write(), suppress(Boom), db.write() as inner:
        _checkpoint(inner, "undone")
        raise Boom
    with db.write() as conn:
        _checkpoint(conn, "next")

    assert _names(db) == ["next"]
    assert not db.conn().in_transaction


def test_every_thread_s_connection_keeps_statement_journals_in_memory(db):
    """temp_store=MEMORY on each connection: a statement journal that outgrows SQLite's 64 KiB spill
    stays in memory instead of a temp file per write (bench/results/2026-12-05-temp-store.md)."""
    import threading

    seen: list[int] = []
    worker = threading.Thread(target=lambda: seen.append(db.conn().execute("PRAGMA temp_store").fetchone()[0]))
    worker.start()
    worker.join(timeout=30)
    assert seen == [2]
    assert db.conn().execute("PRAGMA temp_store").fetchone()[0] == 2


def test_a_large_statement_failing_midway_is_undone_alone_with_its_journal_in_memory(db):
    """A statement of some MB over pages the transaction changed already (its journal far beyond the
    spill size) fails on its last row: it alone is undone, the transaction's earlier writes commit."""
    rows = [[f"big-{i:05d}", "x" * 2000] for i in range(2000)] + [["a-kept", "duplicate"]]
    with db.write() as conn:
        _checkpoint(conn, "a-kept")
        for i in range(200):
            _checkpoint(conn, f"early-{i:03d}")
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "INSERT INTO maintenance_checkpoints (name, cursor, updated_ms)"
                " SELECT value ->> 0, value ->> 1, 0 FROM json_each(?)",
                (json.dumps(rows),),
            )
    names = _names(db)
    assert names[0] == "a-kept" and len(names) == 201
    assert all(n.startswith(("a-kept", "early-")) for n in names)
