"""The stream indexer's logic (docs/contract.md §7): apply one change of the record store to the index.

This is the one path by which the store's changes reach the index on AWS: the service writes only
the table, and the table's stream brings each change here once.

The index's external versions make this idempotent and order-safe: a change replayed, or
delivered after a newer one, is refused by the index and counts as done. A remove writes a
tombstone at the removed version + 1 (``SearchIndex.remove``), so an older write arriving later
cannot bring the memory back — for as long as the tombstone lives. The cleanup job purges
tombstones after their retention; a change older than ``verify_after`` (well under that
retention) is therefore checked against the store first: its record's current version is indexed
instead, or nothing when the record is gone.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from mnemo.errors import IndexUnavailable
from mnemo.models.common import utc_now
from mnemo.observability import logger
from mnemo.ports import Ports, Scope, StoreChange

#: half the cleanup job's default tombstone retention
DEFAULT_VERIFY_AFTER = timedelta(minutes=5)

Outcome = Literal["indexed", "removed", "skipped"]


def apply_change(
    ports: Ports,
    change: StoreChange,
    *,
    now: datetime | None = None,
    verify_after: timedelta = DEFAULT_VERIFY_AFTER,
) -> Outcome:
    """Apply one change. When the index cannot take it, the memory is marked for repair and
    ``IndexUnavailable`` is raised: the batch reports the record as failed and the stream delivers
    it again; should the stream give up (retries exhausted, the record too old), the cleanup job's
    repair walk finds the mark."""
    try:
        return _apply(ports, change, now=now, verify_after=verify_after)
    except IndexUnavailable as exc:
        logger.warning(
            "index write failed; marked for repair", extra={"memory_id": change.record.id, "cause": exc.cause}
        )
        ports.store.mark_for_repair(change.record)
        raise


def _apply(ports: Ports, change: StoreChange, *, now: datetime | None, verify_after: timedelta) -> Outcome:
    record = change.record
    if change.action == "remove":
        ports.index.remove(record)
        return "removed"
    if change.at is None or (now or utc_now()) - change.at > verify_after:
        current = ports.store.get(Scope(record.workspace_id, record.project_id), record.id)
        if current is None:
            return "skipped"  # deleted since: its own remove keeps the index right
        record = current if current.version > record.version else record
    ports.index.upsert(record)
    return "indexed"
