"""Idempotency keys for ``memory_add`` in the SQLite file: the flow of ``backends/idempotency.py``
(Powertools' idempotency utility, as on AWS) over :class:`SqlitePersistenceLayer`, Powertools'
``BasePersistenceLayer`` filled with four short statements on ``idempotency_records`` — never a
transaction held across the add, whose embedding would keep every other writer of the file
waiting.

``_put_record`` is DynamoDB's conditional put: in one write transaction it reads the row and
writes the claim only when no row holds the key (none, an expired one, or a claim in progress
whose time ran out), else hands the holder back as ``IdempotencyItemAlreadyExistsError`` does.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import STATUS_CONSTANTS, BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from mnemo.backends.errors import translate_errors
from mnemo.backends.idempotency import PowertoolsIdempotency, unwrapping
from mnemo.backends.sqlite.db import Database, now_ms, outage
from mnemo.ports import IDEMPOTENCY_IN_PROGRESS_S, IDEMPOTENCY_TTL_S

_COLUMNS = "id, status, expiration, in_progress_expiration, data, validation"


def _record(row: sqlite3.Row) -> DataRecord:
    return DataRecord(
        idempotency_key=row["id"],
        status=row["status"],
        expiry_timestamp=row["expiration"],
        in_progress_expiry_timestamp=row["in_progress_expiration"],
        response_data=row["data"] or "",
        payload_hash=row["validation"] or "",
    )


def _holds(row: sqlite3.Row, now_s: int, now_in_ms: int) -> bool:
    """Whether the row still holds its key: the negation of DynamoDB's put condition in
    Powertools (no item, or expired, or in progress with its claim time run out)."""
    if row["expiration"] < now_s:
        return False
    until = row["in_progress_expiration"]
    return not (row["status"] == STATUS_CONSTANTS["INPROGRESS"] and until is not None and until < now_in_ms)


class SqlitePersistenceLayer(BasePersistenceLayer):
    """Powertools' persistence layer on the store's SQLite file."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db

    def _get_record(self, idempotency_key: Any) -> DataRecord:
        row = (
            self.db.conn()
            .execute(f"SELECT {_COLUMNS} FROM idempotency_records WHERE id = ?", (idempotency_key,))
            .fetchone()
        )
        if row is None:
            raise IdempotencyItemNotFoundError
        return _record(row)

    def _put_record(self, data_record: DataRecord) -> None:
        now_in_ms = now_ms()
        with self.db.write() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM idempotency_records WHERE id = ?", (data_record.idempotency_key,)
            ).fetchone()
            if row is None or not _holds(row, now_in_ms // 1000, now_in_ms):
                conn.execute(
                    f"INSERT OR REPLACE INTO idempotency_records ({_COLUMNS}) VALUES (?, ?, ?, ?, NULL, ?)",
                    (
                        data_record.idempotency_key,
                        data_record.status,
                        data_record.expiry_timestamp,
                        data_record.in_progress_expiry_timestamp,
                        data_record.payload_hash if self.payload_validation_enabled else None,
                    ),
                )
                return
        old = _record(row)
        self._validate_payload(data_payload=data_record, stored_data_record=old)  # as DynamoDB's layer does
        raise IdempotencyItemAlreadyExistsError(old_data_record=old)

    def _update_record(self, data_record: DataRecord) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE idempotency_records SET data = ?, expiration = ?, status = ?, validation = ? WHERE id = ?",
                (
                    data_record.response_data,
                    data_record.expiry_timestamp,
                    data_record.status,
                    data_record.payload_hash if self.payload_validation_enabled else None,
                    data_record.idempotency_key,
                ),
            )

    def _delete_record(self, data_record: DataRecord) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM idempotency_records WHERE id = ?", (data_record.idempotency_key,))


@translate_errors(unwrapping(outage))
class SqliteIdempotencyStore(PowertoolsIdempotency):
    def __init__(self, db: Database, *, in_progress_ms: int = IDEMPOTENCY_IN_PROGRESS_S * 1000) -> None:
        super().__init__(SqlitePersistenceLayer(db), in_progress_ms=in_progress_ms)
        self.db = db

    run_once = PowertoolsIdempotency.run_once  # under translate_errors

    def migrate(self) -> None:
        """Move the results of a file written before Powertools' records (the ``idempotency`` table:
        one row per workspace and key) into ``idempotency_records``, keyed as Powertools keys them,
        so a key used before the upgrade still replays for its 24 hours; claims in progress are
        dropped (their calls ended with the process that made them). Then drop the old table."""
        conn = self.db.conn()
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'idempotency'").fetchone() is None:
            return
        columns = {row[1] for row in conn.execute("PRAGMA table_info(idempotency)")}
        claimed = "in_progress_until_ms IS NULL" if "in_progress_until_ms" in columns else "1"
        with self.db.write() as conn:
            rows = conn.execute(
                f"SELECT workspace_id, key, fingerprint, response, created_ms FROM idempotency WHERE {claimed}"
            ).fetchall()
            now_s = int(time.time())
            for row in rows:
                expiration = row["created_ms"] // 1000 + IDEMPOTENCY_TTL_S
                if expiration < now_s:
                    continue
                record_key, payload = self.hashed(row["workspace_id"], row["key"], row["fingerprint"])
                conn.execute(
                    f"INSERT OR IGNORE INTO idempotency_records ({_COLUMNS}) VALUES (?, ?, ?, NULL, ?, ?)",
                    (record_key, STATUS_CONSTANTS["COMPLETED"], expiration, row["response"], payload),
                )
            conn.execute("DROP TABLE idempotency")
