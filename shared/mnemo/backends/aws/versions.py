"""A memory's kept versions: its ``VER#`` items beside it in the memories table.

``VER#<id>#v<version>`` holds an earlier version of the memory (the record as JSON, its content's
bytes, the memory's TTL) and ``VER#<id>#dropped`` counts the versions dropped beyond the bound
(``ports.kept_versions``). They are never ``MEM#`` items, so no stream filter, index, listing or
export sees them; ``DynamoMemoryStore`` keeps, reads and erases them through these functions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mnemo.backends.aws.items import memory_pk, ttl_seconds
from mnemo.models.records import MemoryRecord
from mnemo.ports import Scope, kept_versions


def _version_items(
    client: Any, table: str, scope: Scope, memory_id: str, projection: str | None = None
) -> list[dict[str, Any]]:
    """The memory's ``VER#`` items (its kept versions and its dropped count), newest first."""
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :ver)",
        "ExpressionAttributeValues": {
            ":pk": {"S": memory_pk(scope.workspace_id, scope.project_id)},
            ":ver": {"S": f"VER#{memory_id}#"},
        },
        "ScanIndexForward": False,
        "ConsistentRead": True,
    }
    if projection is not None:
        request["ProjectionExpression"] = projection
        request["ExpressionAttributeNames"] = {"#b": "bytes", "#t": "ttl"}
    items: list[dict[str, Any]] = []
    while True:
        out = client.query(**request)
        items += out.get("Items", [])
        if not out.get("LastEvaluatedKey"):
            return items
        request["ExclusiveStartKey"] = out["LastEvaluatedKey"]


def _delete_items(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), 25):
        pending: dict[str, Any] = {
            table: [{"DeleteRequest": {"Key": {"pk": i["pk"], "sk": i["sk"]}}} for i in items[start : start + 25]]
        }
        while pending:
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}


def erase_history(client: Any, table: str, scope: Scope, memory_id: str) -> None:
    """Every ``VER#`` item of the memory: one ``Query`` (and a ``BatchWriteItem`` per 25 found)."""
    _delete_items(client, table, _version_items(client, table, scope, memory_id, "pk, sk, #b, #t"))


def keep_version(client: Any, table: str, previous: MemoryRecord, *, expires_at: datetime | None, dropped: int) -> None:
    """A ``VER#<id>#<version>`` item beside the memory (the record as JSON, its content's bytes,
    the memory's TTL). Then the bound: the memory's ``VER#`` items read (one ``Query`` of keys and
    sizes), the oldest beyond it deleted and counted in ``VER#<id>#dropped``; items of another
    expiry get the memory's (an update that moved ``expires_at``: expiry erases every version)."""
    scope = Scope(previous.workspace_id, previous.project_id)
    pk = {"S": memory_pk(previous.workspace_id, previous.project_id)}
    ttl = ttl_seconds(expires_at)
    item: dict[str, Any] = {
        "pk": pk,
        "sk": {"S": f"VER#{previous.id}#v{previous.version:010d}"},
        "body": {"S": previous.model_dump_json()},
        "bytes": {"N": str(len(previous.content.encode()))},
    }
    if ttl is not None:
        item["ttl"] = {"N": str(ttl)}
    client.put_item(TableName=table, Item=item)
    items = _version_items(client, table, scope, previous.id, "pk, sk, #b, #t")
    versions = [i for i in items if i["sk"]["S"].rsplit("#", 1)[1].startswith("v")]
    gone = versions[kept_versions(int(i["bytes"]["N"]) for i in versions) :]
    if gone:
        _delete_items(client, table, gone)
    if gone or dropped:
        update: dict[str, Any] = {
            "TableName": table,
            "Key": {"pk": pk, "sk": {"S": f"VER#{previous.id}#dropped"}},
            "UpdateExpression": "ADD dropped :n",
            "ExpressionAttributeValues": {":n": {"N": str(len(gone) + dropped)}},
        }
        if ttl is not None:
            update["UpdateExpression"] += " SET #t = :ttl"
            update["ExpressionAttributeNames"] = {"#t": "ttl"}
            update["ExpressionAttributeValues"][":ttl"] = {"N": str(ttl)}
        client.update_item(**update)
    for held in (i for i in items if i not in gone):
        if (held.get("ttl") or {}).get("N") != (None if ttl is None else str(ttl)):
            change = "REMOVE #t" if ttl is None else "SET #t = :ttl"
            values = {} if ttl is None else {"ExpressionAttributeValues": {":ttl": {"N": str(ttl)}}}
            client.update_item(
                TableName=table,
                Key={"pk": held["pk"], "sk": held["sk"]},
                UpdateExpression=change,
                ExpressionAttributeNames={"#t": "ttl"},
                **values,
            )


def history(
    client: Any, table: str, scope: Scope, memory_id: str, *, below: int, limit: int
) -> tuple[list[MemoryRecord], int]:
    """The memory's kept versions below ``below``, newest first, at most ``limit``, and how many
    were dropped."""
    items = _version_items(client, table, scope, memory_id)
    dropped = sum(int(i.get("dropped", {}).get("N", 0)) for i in items)
    versions = [MemoryRecord.model_validate_json(i["body"]["S"]) for i in items if "body" in i]
    return [v for v in versions if v.version < below][:limit], dropped
