"""The stream indexer's logic (docs/contract.md §7): apply one change of the record store to the index.

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

from mnemo.models.common import utc_now
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
    """Apply one change; raises ``IndexUnavailable`` (the batch reports the record as failed and
    the stream delivers it again)."""
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
