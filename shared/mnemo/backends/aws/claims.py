"""The store's conditional writes: a memory's write with its claim and marks, as one transaction.

A claim (``MemoryStore.create``) is an item ``pk = WS#…#PRJ#…``, ``sk = CLAIM#<fingerprint>`` beside
the project's memories; it names the memory that holds it (``memory_id``) and expires with it
(``ttl``). A write that changes claims is one ``TransactWriteItems``: the memory's conditional put
or delete and the claim's conditional put or delete, so a claim and its memory never disagree and
of two identical adds one commits and the other finds the claim taken — a conditional write, not
a read-then-write. Only when a condition fails (the claim is held, or held by another) does a call
read and try again (:func:`write_claimed`, the one retry loop of ``create`` and ``replace``). No
``MEM#`` query, scan, change log read, GSI or stream filter sees claim items.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from botocore.exceptions import ClientError

from mnemo import text
from mnemo.backends.aws.errors import is_condition_failure
from mnemo.backends.aws.items import embedding_attributes, memory_item, memory_pk, ttl_seconds
from mnemo.errors import StoreUnavailable
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Scope, VersionConflict

#: a claim changed under a write (another write took or gave it up meanwhile): tries before giving up
_CLAIM_ATTEMPTS = 4


class Store(Protocol):
    """What the writes use of the store: its client, its table and its consistent read."""

    client: Any
    table: str

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None: ...


def claim_of(record: MemoryRecord) -> str:
    return text.fingerprint(record.content, record.kind, record.path, record.team_id)


def _written(record: MemoryRecord) -> dict[str, Any]:
    """The attributes a write of ``record`` sets that no other write at its version changes."""
    item = memory_item(record)
    for name in embedding_attributes(record):
        del item[name]
    return item


def _failed(exc: ClientError) -> list[str]:
    """Per action of a cancelled transaction, its cancellation code ("None" when it was fine)."""
    return [str(reason.get("Code") or "None") for reason in exc.response.get("CancellationReasons", [])]


class Found(enum.Enum):
    """What a write whose condition failed finds in the table (:func:`found`)."""

    THIS_WRITE = "this write"  # it had landed: the SDK retried it after it committed
    OTHER_WRITE = "another write"  # a conflict
    NOTHING = "nothing"  # the item that failed the condition is gone again


def _claim_key(record: MemoryRecord, claim: str) -> dict[str, Any]:
    return {"pk": {"S": memory_pk(record.workspace_id, record.project_id)}, "sk": {"S": f"CLAIM#{claim}"}}


def _claim_put(table: str, record: MemoryRecord, claim: str, *, taking_from: str | None = None) -> dict[str, Any]:
    """The put of ``record``'s claim: only when the claim is free, or (``taking_from``) still held
    by that record (one that expired)."""
    item = {**_claim_key(record, claim), "memory_id": {"S": record.id}}
    ttl = ttl_seconds(record.expires_at)
    if ttl is not None:
        item["ttl"] = {"N": str(ttl)}  # DynamoDB's TTL removes it with its memory
    put: dict[str, Any] = {"TableName": table, "Item": item}
    if taking_from is None:
        put["ConditionExpression"] = "attribute_not_exists(pk)"
    else:
        put["ConditionExpression"] = "memory_id = :holder"
        put["ExpressionAttributeValues"] = {":holder": {"S": taking_from}}
    return {"Put": put}


def claim_delete(table: str, record: MemoryRecord, claim: str) -> dict[str, Any]:
    """The delete of ``record``'s claim, only if ``record`` holds it."""
    return {
        "Delete": {
            "TableName": table,
            "Key": _claim_key(record, claim),
            "ConditionExpression": "memory_id = :me",
            "ExpressionAttributeValues": {":me": {"S": record.id}},
        }
    }


def _holder(store: Store, record: MemoryRecord, claim: str) -> tuple[str | None, bool]:
    """Who holds ``claim`` in the record's project (None: nobody), and whether that memory is
    live (stored and not expired)."""
    out = store.client.get_item(TableName=store.table, Key=_claim_key(record, claim), ConsistentRead=True)
    holder = (out.get("Item") or {}).get("memory_id", {}).get("S")
    if holder is None:
        return None, False
    held = store.get(Scope(record.workspace_id, record.project_id), holder)
    return holder, held is not None and not held.expired(utc_now())


def transact(client: Any, actions: list[dict[str, Any]]) -> list[str] | None:
    """Run the actions as one transaction; None when it committed, else each action's
    cancellation code."""
    try:
        client.transact_write_items(TransactItems=actions)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
            raise
        return _failed(exc) or ["Unknown"] * len(actions)
    return None


def versioned_put(table: str, record: MemoryRecord, expected_version: int) -> dict[str, Any]:
    """The put of ``record`` only over the stored version ``expected_version``, not a delete marker."""
    return {
        "TableName": table,
        "Item": memory_item(record),
        "ConditionExpression": "#v = :expected AND attribute_not_exists(#del)",
        "ExpressionAttributeNames": {"#v": "version", "#del": "deleted"},
        "ExpressionAttributeValues": {":expected": {"N": str(expected_version)}},
    }


def write_claimed(
    store: Store,
    record: MemoryRecord,
    write: dict[str, Any],
    claim: str | None,
    *,
    release: dict[str, Any] | None = None,
    marks: Sequence[MemoryRecord] = (),
    held: Callable[[str], bool],
    creating: bool = False,
) -> None:
    """The memory's conditional ``write``, the ``marks`` (each over its previous version), its
    claim taken (``claim``; None: none) and ``release``, its old claim's delete, in one
    transaction. When a condition fails, read and try again, at most ``_CLAIM_ATTEMPTS`` times:
    the write's → :class:`VersionConflict` (unless this very write had landed: done; or,
    ``creating``, the item that failed it is gone again: try again); a mark's →
    :class:`VersionConflict` of that mark (it changed meanwhile); the release's → the record
    did not hold its old claim: go on without it; the claim's → who holds it: nobody (given up
    meanwhile) or an expired memory (whose claim passes to this one) → take it; a live memory
    → ``held(holder)``, True when it finished the write itself, False to write without the
    claim. Any other cancellation (``TransactionConflict``: another transaction on these
    items) → try again. Out of tries → :class:`StoreUnavailable` (503): nothing of this write
    stands, so the call may be retried."""
    taking_from: str | None = None
    take = claim is not None
    mark_puts = [{"Put": versioned_put(store.table, mark, mark.version - 1)} for mark in marks]
    for _ in range(_CLAIM_ATTEMPTS):
        actions = [write, *mark_puts]
        if release is not None:
            actions.append(release)
        if take and claim is not None:
            actions.append(_claim_put(store.table, record, claim, taking_from=taking_from))
        failed = transact(store.client, actions)
        if failed is None:
            return
        if failed[0] == "ConditionalCheckFailed":
            outcome = found(store, record)
            if outcome is Found.THIS_WRITE:
                return  # the SDK's retry of this very transaction, which had committed
            if outcome is Found.OTHER_WRITE or not creating:
                raise VersionConflict(record.id)  # another write, or the memory is gone
            continue  # what failed a new memory's condition is gone again: try again
        for mark, code in zip(marks, failed[1 : 1 + len(marks)], strict=True):
            if code == "ConditionalCheckFailed":
                raise VersionConflict(mark.id)
        if release is not None and failed[1 + len(marks)] == "ConditionalCheckFailed":
            release = None  # it did not hold its old claim
        if take and failed[-1] == "ConditionalCheckFailed" and claim is not None:
            holder, live = _holder(store, record, claim)
            if live and holder is not None:
                if held(holder):
                    return
                take, taking_from = False, None
            else:
                taking_from = holder  # None: a free claim
    # nothing of this write committed (or what did is gone again): a retry of the call is safe
    raise StoreUnavailable(cause=f"DynamoDB: the write of {record.id} kept meeting other writes")


def put_new(store: Store, record: MemoryRecord) -> None:
    """``record`` put without a claim where no memory is (or a delete marker is)."""
    for _ in range(_CLAIM_ATTEMPTS):
        try:
            store.client.put_item(
                TableName=store.table,
                Item=memory_item(record),
                ConditionExpression="attribute_not_exists(pk) OR attribute_exists(#del)",
                ExpressionAttributeNames={"#del": "deleted"},
            )
            return
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
        outcome = found(store, record)
        if outcome is Found.THIS_WRITE:
            return
        if outcome is Found.OTHER_WRITE:
            raise VersionConflict(record.id)
    raise StoreUnavailable(cause=f"DynamoDB: the write of {record.id} kept meeting other writes")


def found(store: Store, record: MemoryRecord) -> Found:
    """What the table holds where ``record``'s conditional write failed: this very write (the
    SDK retried it after it had committed: a dropped connection, a read timeout; real DynamoDB
    answers a retried transaction by its ``ClientRequestToken``, moto and a ``PutItem`` do
    not), another one, or nothing. "This write" is the item at the record's version and
    change time with the record's fields, whatever the writes that keep the version have done
    to it since (the cleanup job's vector, a repair mark): compared item for item, a vector
    written between the commit and the retry made a write that had landed a conflict."""
    stored = store.get(Scope(record.workspace_id, record.project_id), record.id)
    if stored is None:
        return Found.NOTHING
    if _written(stored) == _written(record):
        return Found.THIS_WRITE
    return Found.OTHER_WRITE
