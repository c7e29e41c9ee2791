"""The record store: memories in one DynamoDB table (keys and encoding in ``items.py``).

Every change of a memory is one conditional write of its item (a put; a delete is an update that
leaves a delete marker, ``items.delete_marker_update``), alone or in one transaction with its
claim and, for a write that supersedes others, their marks (each a put conditional on the marked
item's previous version: at most 1 + 20 marks + 2 claim actions, well inside the transaction's
100): the claims and the transaction's retry loop are ``claims.py``. The table's stream carries
the write to the index (``stream.py`` and the indexer). Before it, the write puts its entry in the
project's change log (``changes.py``), so the change is findable the moment the write returns:
:meth:`DynamoMemoryStore.recent_changes` reads it (for the search adapter), and
:meth:`~DynamoMemoryStore.recent` merges the same over the eventually consistent ``recent`` GSI
(``listing.py``). Kept versions are ``versions.py``. The table has no LSI, so no write can fail
because a project grew (docs/scale.md, "Lifting the 10 GB wall").

The cleanup job's reads and writes of the table (scans, the repair marks' GSI, batch reads,
checkpoints) are the maintenance adapter's (``maintenance.py``); ``mark_for_repair``, which the
stream indexer calls, is the store's.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, timedelta
from typing import Any, Protocol

from botocore.exceptions import ClientError

from mnemo.backends.aws import changes, claims, listing, versions
from mnemo.backends.aws.errors import is_condition_failure, outage
from mnemo.backends.aws.items import (
    LISTING_WINDOW_S,
    LOG_BUCKET_S,
    MAX_LISTING_CHANGES,
    REPAIR_SHARDS,
    RecentChange,
    delete_marker_update,
    embedding_attributes,
    is_marker,
    matches,
    memory_item,
    memory_key,
    memory_pk,
    record_from_item,
)
from mnemo.backends.errors import translate_errors
from mnemo.models.common import format_ts, utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Duplicate, MemoryFilter, Page, Scope, VersionConflict


class NeighbourSource(Protocol):
    def neighbours(
        self,
        scope: Scope,
        anchors: Sequence[MemoryRecord],
        flt: MemoryFilter,
        *,
        per_side: int = 1,
        same_session: bool = True,
    ) -> dict[str, list[MemoryRecord]]: ...


@translate_errors(outage)
class DynamoMemoryStore:
    def __init__(self, client: Any, table: str, *, log_bucket_s: int = LOG_BUCKET_S) -> None:
        self.client = client
        self.table = table
        #: the change log's partition length (``items.LOG_BUCKET_S``; tests shorten it to cross
        #: partitions in seconds)
        self.log_bucket_s = log_bucket_s
        #: what answers ``neighbours`` (``AwsBackend`` wires its search index: the table has no
        #: order by session or creation time, the index holds every record in full)
        self.neighbour_source: NeighbourSource | None = None

    def unit_of_work(self) -> AbstractContextManager[None]:
        return nullcontext()  # the conditional write is the commit point

    def neighbours(
        self,
        scope: Scope,
        anchors: Sequence[MemoryRecord],
        flt: MemoryFilter,
        *,
        per_side: int = 1,
        same_session: bool = True,
    ) -> dict[str, list[MemoryRecord]]:
        """Asked of the search index (one ``_msearch`` for all anchors: ``OpenSearchIndex.neighbours``)."""
        if self.neighbour_source is None:
            raise RuntimeError("no neighbour source is wired (AwsBackend wires its search index)")
        return self.neighbour_source.neighbours(scope, anchors, flt, per_side=per_side, same_session=same_session)

    def _log(self, scope: Scope, memory_id: str, at: datetime, marks: Sequence[MemoryRecord] = ()) -> None:
        """The change log's entries of a write about to happen and of its marks (``changes.log``)."""
        changes.log(self.client, self.table, scope, memory_id, at, self.log_bucket_s)
        changes.log_marks(self.client, self.table, marks, self.log_bucket_s)

    def create(self, record: MemoryRecord, *, dedupe: bool = False, marks: Sequence[MemoryRecord] = ()) -> None:
        self._log(Scope(record.workspace_id, record.project_id), record.id, record.updated_at, marks)
        claim = claims.claim_of(record)
        put = {
            "Put": {
                "TableName": self.table,
                "Item": memory_item(record),
                # a delete marker's id may be used again (an import restoring a deleted memory)
                "ConditionExpression": "attribute_not_exists(pk) OR attribute_exists(#del)",
                "ExpressionAttributeNames": {"#del": "deleted"},
            }
        }

        def held(holder: str) -> bool:
            if dedupe:
                raise Duplicate(holder)
            if marks:
                return False  # a duplicate that was asked for, with its marks: the transaction, no claim
            claims.put_new(self, record)  # a duplicate that was asked for: stored, without the claim
            return True

        claims.write_claimed(self, record, put, claim, marks=marks, held=held, creating=True)

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        out = self.client.get_item(TableName=self.table, Key=memory_key(scope, memory_id), ConsistentRead=True)
        item = out.get("Item")
        return record_from_item(item) if item and not is_marker(item) else None

    def replace(
        self,
        record: MemoryRecord,
        *,
        expected_version: int,
        previous: MemoryRecord | None = None,
        marks: Sequence[MemoryRecord] = (),
    ) -> None:
        # A whole-item put: it also drops a repair mark, as the new version gets indexed now.
        self._log(Scope(record.workspace_id, record.project_id), record.id, record.updated_at, marks)
        put = claims.versioned_put(self.table, record, expected_version)
        claim = claims.claim_of(record)
        old = claims.claim_of(previous) if previous is not None else claim
        if old == claim and not marks:
            try:
                self.client.put_item(**put)
            except ClientError as exc:
                if not is_condition_failure(exc):
                    raise
                if claims.found(self, record) is not claims.Found.THIS_WRITE:
                    raise VersionConflict(record.id) from None
            return
        if old == claim:  # the claims stay: the record and its marks, one transaction
            claims.write_claimed(self, record, {"Put": put}, None, marks=marks, held=lambda _: False)
            return
        # the fingerprint changes: give up the old claim (if held) and take the new one (if free;
        # a live memory's claim stays its own, and this version goes without one)
        claims.write_claimed(
            self,
            record,
            {"Put": put},
            claim,
            release=claims.claim_delete(self.table, record, old),
            marks=marks,
            held=lambda _: False,
        )

    def delete(
        self, scope: Scope, memory_id: str, *, expected_version: int, record: MemoryRecord | None = None
    ) -> None:
        """The memory becomes a delete marker (``items.delete_marker_update``: one ``UpdateItem``),
        which the stream turns into a tombstone and searches see among the recent changes; with
        its claim, when it holds it (one transaction)."""
        now = utc_now()
        self._log(scope, memory_id, now)
        update = {"TableName": self.table, **delete_marker_update(scope, memory_id, expected_version, now)}
        failed: list[str] | None = None
        if record is not None:
            failed = claims.transact(
                self.client, [{"Update": update}, claims.claim_delete(self.table, record, claims.claim_of(record))]
            )
            if failed is not None and failed[0] == "ConditionalCheckFailed":
                raise VersionConflict(memory_id)
        if record is None or failed is not None:
            try:
                self.client.update_item(**update)
            except ClientError as exc:
                if is_condition_failure(exc):
                    raise VersionConflict(memory_id) from None
                raise
        versions.erase_history(self.client, self.table, scope, memory_id)

    def keep_version(self, previous: MemoryRecord, *, expires_at: datetime | None, dropped: int = 0) -> None:
        """The memory's earlier version kept beside it, within the bound (``versions.keep_version``)."""
        versions.keep_version(self.client, self.table, previous, expires_at=expires_at, dropped=dropped)

    def history(self, scope: Scope, memory_id: str, *, below: int, limit: int) -> tuple[list[MemoryRecord], int]:
        return versions.history(self.client, self.table, scope, memory_id, below=below, limit=limit)

    def recent_changes(
        self, scope: Scope, since: datetime, first_page: int, most: int
    ) -> tuple[list[RecentChange], bool]:
        """The project's memories changed at or after ``since``, newest first, as their items are
        now, and whether they are all of them: the change log read back (``changes.recent_changes``)."""
        return changes.recent_changes(
            self.client, self.table, scope, since, first_page, most, bucket_s=self.log_bucket_s
        )

    def recent(self, scope: Scope, flt: MemoryFilter, limit: int) -> list[MemoryRecord]:
        """The project's newest memories that pass ``flt``: pages of the ``recent`` GSI, with the
        changes of the last :data:`~items.LISTING_WINDOW_S` (read consistently, as a search reads
        them) put over it, so a listing right after a write shows it, and never an older copy."""
        latest, _ = self.recent_changes(
            scope, utc_now() - timedelta(seconds=LISTING_WINDOW_S), 100, MAX_LISTING_CHANGES
        )
        changed = {change.memory_id for change in latest}
        listed = listing.listed(self.client, self.table, scope, flt, limit, skip=changed)
        listed += [c.record for c in latest if c.record is not None and matches(c.record, flt)]
        listed.sort(key=lambda record: (record.updated_at, record.id), reverse=True)
        return listed[:limit]

    def scan_project(self, scope: Scope, *, cursor: str | None = None, limit: int = 100) -> Page[MemoryRecord]:
        """The project's records in id order (for export): a ``Query`` on its own partition
        (``MEM#`` items sort before ``REPAIR#`` markers), never a Scan."""
        out = self.client.query(
            TableName=self.table,
            KeyConditionExpression="pk = :pk AND sk > :after",
            ExpressionAttributeValues={
                ":pk": {"S": memory_pk(scope.workspace_id, scope.project_id)},
                ":after": {"S": f"MEM#{cursor or ''}"},
            },
            ConsistentRead=True,
            Limit=limit + 1,
        )
        items = [item for item in out.get("Items", []) if item["sk"]["S"].startswith("MEM#")]
        # More follows when the page overflowed, or when DynamoDB stopped early at 1 MB of items
        # (4 KiB contents make that possible before ``limit``) while still inside the MEM# range.
        last_key = (out.get("LastEvaluatedKey") or {}).get("sk", {}).get("S", "")
        more = len(items) > limit or (bool(items) and last_key.startswith("MEM#"))
        items = items[:limit]
        cursor = items[-1]["sk"]["S"].removeprefix("MEM#") if more else None
        # delete markers hold a page place (the cursor passes them) but are no records
        return Page([record_from_item(item) for item in items if not is_marker(item)], cursor)

    def set_embedding(self, record: MemoryRecord) -> bool:
        """The record's vector into its item, if the item is still at ``record.version`` (the
        stream then re-indexes it at that version, vector included)."""
        scope = Scope(record.workspace_id, record.project_id)
        attributes = embedding_attributes(record)
        values: dict[str, Any] = {":v": {"N": str(record.version)}}
        if attributes:
            update = "SET embedding = :e, embedding_model = :m"
            values |= {":e": attributes["embedding"], ":m": attributes["embedding_model"]}
        else:
            update = "REMOVE embedding, embedding_model"
        try:
            self.client.update_item(
                TableName=self.table,
                Key=memory_key(scope, record.id),
                UpdateExpression=update,
                ConditionExpression="version = :v",
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def mark_for_repair(self, record: MemoryRecord) -> None:
        """Flag the memory for the cleanup job (sparse GSI ``repair``): the stream indexer does when
        the index cannot take a change. The mark goes on the memory's item (a delete marker too);
        when the item is gone (removed outright, by TTL), a standalone ``REPAIR#`` item carries it."""
        shard = zlib.crc32(record.id.encode()) % REPAIR_SHARDS
        marks = {
            ":rpk": {"S": f"REPAIR#{shard}"},
            ":rsk": {"S": f"{format_ts(record.updated_at)}#{record.id}"},
        }
        scope = Scope(record.workspace_id, record.project_id)
        try:
            self.client.update_item(
                TableName=self.table,
                Key=memory_key(scope, record.id),
                UpdateExpression="SET repair_pk = :rpk, repair_sk = :rsk",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues=marks,
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
            self.client.put_item(
                TableName=self.table,
                Item={
                    "pk": {"S": memory_pk(record.workspace_id, record.project_id)},
                    "sk": {"S": f"REPAIR#{record.id}"},
                    "id": {"S": record.id},
                    "workspace_id": {"S": record.workspace_id},
                    "project_id": {"S": record.project_id},
                    "version": {"N": str(record.version)},
                    "deleted": {"BOOL": True},
                    "repair_pk": marks[":rpk"],
                    "repair_sk": marks[":rsk"],
                },
            )
