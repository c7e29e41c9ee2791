"""The AWS backend's side of the cleanup job (``mnemo.ports.Maintenance``).

Cleanup is not a request path, so it may walk whole tables:

* expiry and the store→index walk page the memories table with a bounded ``Scan`` (memory items
  only), resuming from the persisted ``LastEvaluatedKey``; each page of records is compared with
  the index by one ``_mget``;
* the index→store walk pages the index with ``search_after`` on (project_id, id), tombstones
  included, and looks the page's records up with ``BatchGetItem`` (strongly consistent);
* repair marks come from the sparse GSI ``repair`` (``REPAIR#0`` … ``REPAIR#7``), shard by shard;
* a tombstone is purged by a delete that carries the ``_seq_no`` / ``_primary_term`` it was read
  with, so a tombstone rewritten since is left alone; an entry without a record gets a tombstone
  at ``version + 1`` (external versioning refuses it if anything newer is there);
* checkpoints are items ``pk = MAINTENANCE``, ``sk = CHECKPOINT#<walk>`` in the memories table
  (no ``MEM#`` key: scans, listings and the stream indexer never see them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError
from opensearchpy.exceptions import ConflictError, NotFoundError, TransportError

from mnemo.backends.aws.dynamo import (
    REPAIR_INDEX,
    REPAIR_SHARDS,
    from_item,
    is_condition_failure,
    memory_pk,
    record_from_item,
)
from mnemo.backends.aws.opensearch import OpenSearchIndex, _outage, doc_id
from mnemo.errors import IndexUnavailable
from mnemo.models.common import format_ts, utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Comparison, IndexEntry, Page, RepairMark, Scope

CHECKPOINT_PK = "MAINTENANCE"
_ENTRY_FIELDS = ["id", "workspace_id", "project_id", "deleted", "deleted_at", "updated_at"]
_BATCH_GET = 100


@contextmanager
def _index_call() -> Iterator[None]:
    try:
        yield
    except TransportError as exc:
        if _outage(exc):
            raise IndexUnavailable(cause=f"OpenSearch maintenance failed ({exc.status_code})") from exc
        raise


def _parse_ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _entry(hit: dict[str, Any]) -> IndexEntry:
    source = hit.get("_source") or {}
    deleted = bool(source.get("deleted"))
    workspace_id, project_id, memory_id = source.get("workspace_id"), source.get("project_id"), source.get("id")
    return IndexEntry(
        ref=hit["_id"],
        scope=Scope(workspace_id, project_id) if workspace_id and project_id else None,
        memory_id=memory_id,
        version=int(hit["_version"]) if "_version" in hit else None,
        deleted=deleted,
        # tombstones written before ``deleted_at`` existed age from their record's last update
        deleted_at=_parse_ts(source.get("deleted_at") or source.get("updated_at")) if deleted else None,
        token=f"{hit['_seq_no']}:{hit['_primary_term']}" if "_seq_no" in hit else "",
    )


class AwsMaintenance:
    def __init__(self, client: Any, table: str, index: OpenSearchIndex) -> None:
        self.client = client
        self.table = table
        self.index = index

    # -- the store ----------------------------------------------------------------------------

    def _scan(self, cursor: str | None, limit: int, **filters: Any) -> tuple[list[MemoryRecord], str | None, int]:
        names = {"#sk": "sk", **filters.pop("names", {})}
        values = {":mem": {"S": "MEM#"}, **filters.pop("values", {})}
        request: dict[str, Any] = {
            "TableName": self.table,
            "Limit": limit,
            "FilterExpression": " AND ".join(["begins_with(#sk, :mem)", *filters.pop("clauses", [])]),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        if cursor:
            request["ExclusiveStartKey"] = json.loads(cursor)
        out = self.client.scan(**request)
        last = out.get("LastEvaluatedKey")
        records = [record_from_item(item) for item in out.get("Items", [])]
        return records, json.dumps(last) if last else None, int(out.get("ScannedCount", 0))

    def expired(self, now: datetime, cursor: str | None, limit: int) -> Page[MemoryRecord]:
        records, last, scanned = self._scan(
            cursor,
            limit,
            names={"#exp": "expires_at"},
            values={":now": {"S": format_ts(now)}},
            clauses=["#exp <= :now"],
        )
        return Page(records, last, examined=scanned)

    def store_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        records, last, scanned = self._scan(cursor, limit)
        entries = self._mget(records)
        items = [Comparison(r, entries.get(doc_id(r.project_id, r.id))) for r in records]
        return Page(items, last, examined=scanned)

    def _mget(self, records: list[MemoryRecord]) -> dict[str, IndexEntry]:
        if not records:
            return {}
        docs = [{"_id": doc_id(r.project_id, r.id), "routing": r.project_id} for r in records]
        try:
            with _index_call():
                out = self.index.client.mget(
                    index=self.index.alias, body={"docs": docs}, params={"_source_includes": ",".join(_ENTRY_FIELDS)}
                )
        except NotFoundError:
            return {}  # no index yet
        return {hit["_id"]: _entry(hit) for hit in out.get("docs", []) if hit.get("found")}

    # -- repair marks -------------------------------------------------------------------------

    def repair_marks(self, cursor: str | None, limit: int) -> Page[RepairMark]:
        state: dict[str, Any] = json.loads(cursor) if cursor else {"shard": 0, "key": None}
        shard: int = int(state["shard"])
        key: dict[str, Any] | None = state["key"]
        marks: list[RepairMark] = []
        while shard < REPAIR_SHARDS and len(marks) < limit:
            request: dict[str, Any] = {
                "TableName": self.table,
                "IndexName": REPAIR_INDEX,
                "KeyConditionExpression": "repair_pk = :rpk",
                "ExpressionAttributeValues": {":rpk": {"S": f"REPAIR#{shard}"}},
                "Limit": limit - len(marks),
            }
            if key:
                request["ExclusiveStartKey"] = key
            out = self.client.query(**request)
            marks.extend(self._mark(item) for item in out.get("Items", []))
            key = out.get("LastEvaluatedKey")
            if not key:
                shard += 1
        done = shard >= REPAIR_SHARDS
        return Page(marks, None if done else json.dumps({"shard": shard, "key": key}))

    def _mark(self, item: dict[str, Any]) -> RepairMark:
        values = from_item(item)
        scope = Scope(values["workspace_id"], values["project_id"])
        memory_id, version, token = values["id"], int(values["version"]), values["repair_sk"]
        if values["sk"].startswith("MEM#"):
            return RepairMark(scope, memory_id, version, record_from_item(item), token=token)
        # a marker left by a delete whose index write failed: the record is gone
        entry = IndexEntry(doc_id(scope.project_id, memory_id), scope, memory_id, version)
        return RepairMark(scope, memory_id, version, None, entry=entry, token=token)

    def clear_repair(self, mark: RepairMark) -> None:
        key = {
            "pk": {"S": memory_pk(mark.scope.workspace_id, mark.scope.project_id)},
            "sk": {"S": f"MEM#{mark.memory_id}" if mark.record is not None else f"REPAIR#{mark.memory_id}"},
        }
        condition = {
            "ConditionExpression": "repair_sk = :token",
            "ExpressionAttributeValues": {":token": {"S": mark.token}},
        }
        try:
            if mark.record is not None:
                self.client.update_item(
                    TableName=self.table, Key=key, UpdateExpression="REMOVE repair_pk, repair_sk", **condition
                )
            else:
                self.client.delete_item(TableName=self.table, Key=key, **condition)
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise  # else: marked again since (or gone): the newer mark stays for the next run

    # -- the index ----------------------------------------------------------------------------

    def index_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        body: dict[str, Any] = {
            "size": limit,
            "query": {"match_all": {}},
            "sort": [{"project_id": "asc"}, {"id": "asc"}],
            "_source": _ENTRY_FIELDS,
            "version": True,
            "seq_no_primary_term": True,
        }
        if cursor:
            body["search_after"] = json.loads(cursor)
        try:
            with _index_call():
                out = self.index.client.search(index=self.index.alias, body=body)
        except NotFoundError:
            return Page([], None)  # no index yet
        hits = out["hits"]["hits"]
        entries = [_entry(hit) for hit in hits]
        records = self._batch_get([e for e in entries if e.scope is not None and e.memory_id is not None])
        items = [Comparison(records.get(e.ref), e) for e in entries]
        last = json.dumps(hits[-1]["sort"]) if len(hits) == limit else None
        return Page(items, last)

    def _batch_get(self, entries: list[IndexEntry]) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        keys = {
            (e.scope.workspace_id, e.scope.project_id, e.memory_id)  # type: ignore[union-attr]
            for e in entries
        }
        pending = [
            {"pk": {"S": memory_pk(ws, prj)}, "sk": {"S": f"MEM#{mid}"}}
            for ws, prj, mid in sorted(keys)  # type: ignore[arg-type]
        ]
        while pending:
            batch, pending = pending[:_BATCH_GET], pending[_BATCH_GET:]
            request = {self.table: {"Keys": batch, "ConsistentRead": True}}
            while request:
                out = self.client.batch_get_item(RequestItems=request)
                for item in out.get("Responses", {}).get(self.table, []):
                    record = record_from_item(item)
                    found[doc_id(record.project_id, record.id)] = record
                request = out.get("UnprocessedKeys") or {}
        return found

    def drop(self, entry: IndexEntry) -> bool:
        if entry.scope is None or entry.memory_id is None or entry.version is None:
            return False
        now = format_ts(utc_now())
        body = {
            "id": entry.memory_id,
            "workspace_id": entry.scope.workspace_id,
            "project_id": entry.scope.project_id,
            "updated_at": now,
            "deleted": True,
            "deleted_at": now,
        }
        try:
            with _index_call():
                self.index.ensure()
                self.index.client.index(
                    index=self.index.alias,
                    id=doc_id(entry.scope.project_id, entry.memory_id),
                    body=body,
                    routing=entry.scope.project_id,
                    version=entry.version + 1,
                    version_type="external",
                    refresh=self.index.refresh,
                )
        except ConflictError:
            return False  # something newer is there already
        return True

    def purge(self, entry: IndexEntry) -> bool:
        if entry.scope is None or not entry.token:
            return False
        seq_no, _, primary_term = entry.token.partition(":")
        try:
            with _index_call():
                self.index.client.delete(
                    index=self.index.alias,
                    id=entry.ref,
                    routing=entry.scope.project_id,
                    if_seq_no=int(seq_no),
                    if_primary_term=int(primary_term),
                )
        except (ConflictError, NotFoundError):
            return False  # rewritten or purged since
        return True

    # -- checkpoints --------------------------------------------------------------------------

    def _checkpoint_key(self, name: str) -> dict[str, Any]:
        return {"pk": {"S": CHECKPOINT_PK}, "sk": {"S": f"CHECKPOINT#{name}"}}

    def checkpoint(self, name: str) -> str | None:
        out = self.client.get_item(TableName=self.table, Key=self._checkpoint_key(name), ConsistentRead=True)
        cursor = out.get("Item", {}).get("cursor", {}).get("S")
        return str(cursor) if cursor is not None else None

    def save_checkpoint(self, name: str, cursor: str | None) -> None:
        item = {**self._checkpoint_key(name), "updated_at": {"S": format_ts(utc_now())}}
        if cursor is not None:
            item["cursor"] = {"S": cursor}
        self.client.put_item(TableName=self.table, Item=item)
