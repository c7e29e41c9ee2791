"""The project's newest memories from the ``recent`` GSI (``recent_sk = <updated_at>#<id>``).

The GSI is eventually consistent: ``DynamoMemoryStore.recent`` puts the change log's recent
changes (``changes.py``) over what :func:`listed` reads here, so a listing right after a write
shows it, and never an older copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mnemo.backends.aws.items import (
    MAX_LISTING_ITEMS,
    RECENT_INDEX,
    filter_expression,
    matches,
    memory_pk,
    record_from_item,
)
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.ports import MemoryFilter, Scope


def listed(
    client: Any, table: str, scope: Scope, flt: MemoryFilter, limit: int, *, skip: set[str]
) -> list[MemoryRecord]:
    """Up to ``limit`` records from the GSI that pass ``flt``, but those in ``skip``."""
    expression, names, values = filter_expression(flt)
    values[":pk"] = {"S": memory_pk(scope.workspace_id, scope.project_id)}
    # the window is a range of the GSI's sort key ("<updated_at>#<id>"): after ≤ key < before
    key = "pk = :pk"
    if flt.updated_after is not None and flt.updated_before is not None:
        key += " AND recent_sk BETWEEN :after AND :before"  # no key equals a bare timestamp
    elif flt.updated_after is not None:
        key += " AND recent_sk >= :after"
    elif flt.updated_before is not None:
        key += " AND recent_sk < :before"
    if flt.updated_after is not None:
        values[":after"] = {"S": format_ts(flt.updated_after)}
    if flt.updated_before is not None:
        values[":before"] = {"S": format_ts(flt.updated_before)}
    selective = bool(flt.kind or flt.tags_all or flt.visible_teams is not None or flt.kind_like or flt.path_like)
    page = max(200, limit * 4) if selective else limit + 16 + len(skip)
    out: list[MemoryRecord] = []
    for item in _query_pages(client, table, key, expression, names, values, page):
        if item["id"]["S"] in skip:
            continue  # changed within the window: its current item is merged instead
        record = record_from_item(item)
        if matches(record, flt):
            out.append(record)
            if len(out) == limit:
                break
    return out


def _query_pages(
    client: Any, table: str, key: str, expression: str, names: dict[str, str], values: dict[str, Any], page: int
) -> Iterator[dict[str, Any]]:
    request: dict[str, Any] = {
        "TableName": table,
        "IndexName": RECENT_INDEX,
        "KeyConditionExpression": key,
        "FilterExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
        "ScanIndexForward": False,
        "Limit": page,
    }
    read = 0
    while True:
        out = client.query(**request)
        yield from out.get("Items", [])
        read += int(out.get("ScannedCount", 0))
        last = out.get("LastEvaluatedKey")
        if not last or read >= MAX_LISTING_ITEMS:
            return
        request["ExclusiveStartKey"] = last
