"""The memories table's DynamoDB stream, read as store changes for the indexer
(``mnemo.service.indexer``). Images are the table's own items (``dynamo.memory_item``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mnemo.backends.aws.items import record_from_item
from mnemo.ports import StoreChange


def change_from_stream_record(raw: dict[str, Any]) -> StoreChange | None:
    """One stream record as a change; None for items that are not memories (checkpoints, repair
    markers — the event source mapping filters them out too)."""
    data = raw["dynamodb"]
    if not data.get("Keys", {}).get("sk", {}).get("S", "").startswith("MEM#"):
        return None
    created = data.get("ApproximateCreationDateTime")
    at = datetime.fromtimestamp(float(created), UTC) if created is not None else None
    if raw["eventName"] == "REMOVE":
        return StoreChange("remove", record_from_item(data["OldImage"]), at)
    return StoreChange("upsert", record_from_item(data["NewImage"]), at)
