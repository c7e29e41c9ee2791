"""The project's change log in the memories table: written before each write, read back by key.

Before a write changes a memory, its entry goes into the project's change log
(``items.change_item``: id and change time, in a partition of the store's ``log_bucket_s``), so
the change is findable the moment the write returns: :func:`recent_changes` reads the log's
partitions consistently and the changed items by key — the changes the index may not show yet,
for the search adapter and the store's ``recent`` listing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mnemo.backends.aws.items import RecentChange, change_item, log_buckets, log_pk, memory_key, recent_change
from mnemo.models.common import format_ts, utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Scope

#: pages of ``recent_changes`` after its first one (a burst of changes overflowed it)
_RECENT_PAGE_MAX = 500
#: keys a ``BatchGetItem`` takes
_BATCH_GET = 100


def log(client: Any, table: str, scope: Scope, memory_id: str, at: datetime, bucket_s: int) -> None:
    """The change log entry of a write about to happen, at the change's time (``updated_at``,
    or the delete's: the time the former LSI sorted it by, so a record written with an older
    ``updated_at``, an import's, is no recent change either)."""
    client.put_item(TableName=table, Item=change_item(scope, memory_id, at, bucket_s))


def log_marks(client: Any, table: str, marks: Sequence[MemoryRecord], bucket_s: int) -> None:
    """The change log entries of the marks, at the time they are marked (``superseded_at``;
    a mark keeps ``updated_at``): a search right after the write reads them among the recent
    changes, so a memory superseded a moment ago is left out before the index has its mark."""
    for mark in marks:
        log(
            client, table, Scope(mark.workspace_id, mark.project_id), mark.id, mark.superseded_at or utc_now(), bucket_s
        )


def recent_changes(
    client: Any, table: str, scope: Scope, since: datetime, first_page: int, most: int, *, bucket_s: int
) -> tuple[list[RecentChange], bool]:
    """The project's memories changed (written or deleted) at or after ``since``, newest first,
    each as its item is now: the change log's partitions of the window read consistently
    (one ``Query`` of ``first_page`` entries each, more pages only when a burst overflowed
    it), then the changed items by key (``BatchGetItem``, consistent), at most ``most``
    memories. Returns the changes and whether they are all of them (False: ``most`` was
    reached)."""
    ids, complete = _changed_ids(client, table, scope, since, first_page, most, bucket_s)
    items = _get_items(client, table, scope, ids)
    return [recent_change(memory_id, items.get(memory_id)) for memory_id in ids], complete


def _changed_ids(
    client: Any, table: str, scope: Scope, since: datetime, first_page: int, most: int, bucket_s: int
) -> tuple[list[str], bool]:
    """The ids the change log names at or after ``since``, newest first, each once."""
    ids: dict[str, None] = {}
    for bucket in log_buckets(since, utc_now(), bucket_s):
        request: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": "pk = :pk AND sk >= :since",
            "ExpressionAttributeValues": {":pk": {"S": log_pk(scope, bucket)}, ":since": {"S": format_ts(since)}},
            "ProjectionExpression": "#id",
            "ExpressionAttributeNames": {"#id": "id"},
            "ScanIndexForward": False,
            "ConsistentRead": True,
            "Limit": first_page,
        }
        while True:
            out = client.query(**request)
            for item in out.get("Items", []):
                ids.setdefault(item["id"]["S"])
                if len(ids) >= most:
                    return list(ids), False
            last = out.get("LastEvaluatedKey")
            if not last:
                break
            request["ExclusiveStartKey"] = last
            request["Limit"] = _RECENT_PAGE_MAX
    return list(ids), True


def _get_items(client: Any, table: str, scope: Scope, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The items of these memories (markers included), read consistently, by id."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), _BATCH_GET):
        keys = [memory_key(scope, memory_id) for memory_id in ids[start : start + _BATCH_GET]]
        pending: dict[str, Any] = {table: {"Keys": keys, "ConsistentRead": True}}
        while pending:
            out = client.batch_get_item(RequestItems=pending)
            for item in out.get("Responses", {}).get(table, []):
                found[item["id"]["S"]] = item
            pending = out.get("UnprocessedKeys") or {}
    return found
