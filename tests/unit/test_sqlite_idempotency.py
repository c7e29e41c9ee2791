"""The SQLite backend's idempotency records are Powertools' (``backends/idempotency.py`` over
``SqlitePersistenceLayer``), and a file written before them keeps its keys: a result stored under
the former ``idempotency`` table (one row per workspace and key) still replays after the upgrade,
for the rest of its 24 hours; a claim in progress and an expired result are dropped with the table."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from mnemo.backends.sqlite import SqliteBackend
from mnemo.ports import IdempotencyMismatch, VersionConflict

FORMER = """CREATE TABLE idempotency (
    workspace_id TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, response TEXT NOT NULL,
    created_ms INTEGER NOT NULL, in_progress_until_ms INTEGER, PRIMARY KEY (workspace_id, key)) WITHOUT ROWID"""


def _never() -> dict:
    raise AssertionError("a stored result was computed again")


def test_a_result_stored_before_the_upgrade_replays_after_it(tmp_path: Path) -> None:
    # Given a file whose former table holds a result (an hour old), a result 25 hours old and a claim
    path = tmp_path / "mnemo.db"
    SqliteBackend(path).close()
    now = int(time.time() * 1000)
    with sqlite3.connect(path) as conn:
        conn.execute(FORMER)
        rows = [
            ("ws_a", "k-recent", "fp-1", json.dumps({"memory": {"id": "mem_1"}}), now - 3_600_000, None),
            ("ws_a", "k-old", "fp-2", json.dumps({"memory": {"id": "mem_2"}}), now - 25 * 3_600_000, None),
            ("ws_a", "k-claimed", "fp-3", "", now, now + 60_000),
        ]
        conn.executemany("INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?)", rows)

    # When the backend opens it
    backend = SqliteBackend(path)
    try:
        store = backend.idempotency
        assert isinstance(store.persistence, BasePersistenceLayer)

        # Then the recent result replays, and only with its own arguments and workspace
        assert store.run_once("ws_a", "k-recent", "fp-1", _never) == {"memory": {"id": "mem_1"}}
        with pytest.raises(IdempotencyMismatch):
            store.run_once("ws_a", "k-recent", "fp-other", _never)
        assert store.run_once("ws_b", "k-recent", "fp-1", lambda: {"fresh": True}) == {"fresh": True}
        # the expired result and the claim were not carried over: their keys run afresh
        assert store.run_once("ws_a", "k-old", "fp-2", lambda: {"again": 2}) == {"again": 2}
        assert store.run_once("ws_a", "k-claimed", "fp-3", lambda: {"again": 3}) == {"again": 3}
        tables = {row[0] for row in backend.db.conn().execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "idempotency" not in tables and "idempotency_records" in tables
    finally:
        backend.close()

    # and it opens again without the former table
    SqliteBackend(path).close()


def test_a_claim_in_progress_is_a_conflict_and_a_failed_call_frees_its_key(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    try:
        store = backend.idempotency

        def inner() -> dict:
            with pytest.raises(VersionConflict):  # the same key while the first call runs
                store.run_once("ws_a", "k", "fp", _never)
            raise RuntimeError("the add failed")

        with pytest.raises(RuntimeError):
            store.run_once("ws_a", "k", "fp", inner)
        assert store.run_once("ws_a", "k", "fp", lambda: {"second": True}) == {"second": True}
        assert store.run_once("ws_a", "k", "fp", _never) == {"second": True}
    finally:
        backend.close()
