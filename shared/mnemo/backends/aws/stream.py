"""The memories table's DynamoDB stream, read as store changes for the indexer
(``mnemo.service.indexer``). Images are the table's own items (``items.memory_item``).

What each stream record means for the index:

==========================================  ===============================================
record                                      change
==========================================  ===============================================
INSERT of a memory                          upsert the new image
MODIFY to a new version                     upsert the new image
MODIFY of a delete marker back to a memory  upsert the new image (an id used again)
MODIFY of a memory into a delete marker     remove the old image (a tombstone at version + 1)
REMOVE of a memory (TTL of an expired one)  remove the old image
MODIFY at the same version                  nothing: only a repair mark was set or cleared
REMOVE of a delete marker (its TTL)         nothing: the delete's MODIFY tombstoned it
any item whose ``sk`` is not ``MEM#…``      nothing (checkpoints, ``REPAIR#`` items; the
                                            event source mapping filters them out too)
==========================================  ===============================================

So each change of a memory is indexed exactly once.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mnemo.backends.aws.items import is_marker, record_from_item
from mnemo.ports import StoreChange


def change_from_stream_record(raw: dict[str, Any]) -> StoreChange | None:
    """One stream record as a change of a memory, or None when it changes nothing the index holds."""
    data = raw["dynamodb"]
    if not data.get("Keys", {}).get("sk", {}).get("S", "").startswith("MEM#"):
        return None
    created = data.get("ApproximateCreationDateTime")
    at = datetime.fromtimestamp(float(created), UTC) if created is not None else None
    old, new = data.get("OldImage"), data.get("NewImage")
    if raw["eventName"] == "REMOVE":
        return None if old is None or is_marker(old) else StoreChange("remove", record_from_item(old), at)
    if new is None:
        return None
    if is_marker(new):  # a delete (or, at the same version, a mark on a delete marker)
        return None if old is None or is_marker(old) else StoreChange("remove", record_from_item(old), at)
    if old is not None and not is_marker(old) and old.get("version") == new.get("version"):
        return None  # the same version: a repair mark set or cleared
    return StoreChange("upsert", record_from_item(new), at)
