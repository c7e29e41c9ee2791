"""The AWS backend's side of the cleanup job (``mnemo.ports.Maintenance``): its reads and writes of
the memories table and of the index. Cleanup is not a request path, so it may walk whole tables:

* expiry and the store→index walk page the memories table with a bounded ``Scan`` (memory items
  only), resuming from the persisted ``LastEvaluatedKey``; each page of records is compared with
  the index by one multi-get;
* the index→store walk pages the index with ``search_after`` on (project_id, id), tombstones
  included, and looks the page's records up with ``BatchGetItem`` (strongly consistent);
* repair marks (written by ``DynamoMemoryStore.mark_for_repair``) come from the sparse GSI
  ``repair`` (``REPAIR#0`` … ``REPAIR#7``), shard by shard;
* a tombstone is purged by a delete that carries the ``_seq_no`` / ``_primary_term`` it was read
  with, so a tombstone rewritten since is left alone; an entry without a record gets a tombstone
  at ``version + 1`` (external versioning refuses it if anything newer is there);
* checkpoints are items of the memories table (``pk = MAINTENANCE``, ``sk = CHECKPOINT#<walk>``,
  which no ``MEM#`` query, scan or stream filter ever sees).

It shares the engines' clients, the table's item encoding (``items``) and the index's set-up and
document ids (``mapping``) with the store and index adapters, and calls none of their methods.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError
from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConflictError, NotFoundError

from mnemo.backends.aws.errors import either, index_errors, is_condition_failure, outage
from mnemo.backends.aws.items import REPAIR_INDEX, REPAIR_SHARDS, from_item, is_marker, memory_pk, record_from_item
from mnemo.backends.aws.mapping import IndexSetup, doc_id
from mnemo.backends.errors import translate_errors
from mnemo.models.common import format_ts, utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Comparison, IndexEntry, Page, RepairMark, Scope

CHECKPOINT_PK = "MAINTENANCE"
_BATCH_GET = 100
_ENTRY_FIELDS = ["id", "workspace_id", "project_id", "deleted", "deleted_at", "updated_at", "analysis"]


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
        # a live document of layout 1 recorded no analysis: "" (another analysis than any)
        analysis=None if deleted else str(source.get("analysis") or ""),
    )


@translate_errors(either(outage, index_errors("maintenance")))
class AwsMaintenance:
    def __init__(
        self, dynamodb: Any, table: str, opensearch: OpenSearch, setup: IndexSetup, *, refresh: str = "false"
    ) -> None:
        self.dynamodb = dynamodb
        self.table = table
        self.opensearch = opensearch
        self.setup = setup
        self.refresh = refresh

    # -- the walks ----------------------------------------------------------------------------

    def expired(self, now: datetime, cursor: str | None, limit: int) -> Page[MemoryRecord]:
        return self._scan(cursor, limit, expired_at=now)

    def store_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        page = self._scan(cursor, limit)
        entries = self._entries(page.items)
        items = [Comparison(r, entries.get(doc_id(r.project_id, r.id))) for r in page.items]
        return Page(items, page.cursor, examined=page.examined)

    def index_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        entries, last = self._index_page(cursor, limit)
        records = self._get_many((e.scope, e.memory_id) for e in entries if e.scope and e.memory_id)
        by_doc = {doc_id(r.project_id, r.id): r for r in records}
        return Page([Comparison(by_doc.get(e.ref), e) for e in entries], last)

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
            out = self.dynamodb.query(**request)
            marks.extend(self._mark(item) for item in out.get("Items", []))
            key = out.get("LastEvaluatedKey")
            if not key:
                shard += 1
        done = shard >= REPAIR_SHARDS
        return Page(marks, None if done else json.dumps({"shard": shard, "key": key}))

    def _mark(self, item: dict[str, Any]) -> RepairMark:
        values = from_item(item)
        scope = Scope(values["workspace_id"], values["project_id"])
        memory_id, version = values["id"], int(values["version"])
        # the token names the marked item and the mark, so clear_repair removes exactly this one
        token = f"{values['sk']}|{values['repair_sk']}"
        if values["sk"].startswith("MEM#") and not is_marker(item):
            return RepairMark(scope, memory_id, version, record_from_item(item), token=token)
        # a delete marker, or a REPAIR# item (the record was removed outright, by TTL): the
        # memory is gone, and the mark names the index entry to remove, the one a record of its
        # version would have
        entry = IndexEntry(doc_id(scope.project_id, memory_id), scope, memory_id, version)
        return RepairMark(scope, memory_id, version, None, token=token, entry=entry)

    def clear_repair(self, mark: RepairMark) -> None:
        sk, _, repair_sk = mark.token.partition("|")
        key = {"pk": {"S": memory_pk(mark.scope.workspace_id, mark.scope.project_id)}, "sk": {"S": sk}}
        condition = {
            "ConditionExpression": "repair_sk = :token",
            "ExpressionAttributeValues": {":token": {"S": repair_sk}},
        }
        try:
            if sk.startswith("MEM#"):
                self.dynamodb.update_item(
                    TableName=self.table, Key=key, UpdateExpression="REMOVE repair_pk, repair_sk", **condition
                )
            else:
                self.dynamodb.delete_item(TableName=self.table, Key=key, **condition)
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise  # else: marked again since (or gone): the newer mark stays for the next run

    # -- drops and purges of index entries -----------------------------------------------------

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
        self.setup.ensure()
        dropped = False
        for target in self.setup.write_targets():  # a migration's new index too (reindex)
            migrating = target != self.setup.alias
            try:
                self.opensearch.index(
                    index=target,
                    id=doc_id(entry.scope.project_id, entry.memory_id),
                    body=body,
                    routing=entry.scope.project_id,
                    version=entry.version + 1,
                    version_type="external",
                    refresh=self.refresh,
                    **({"params": {"require_alias": "true"}} if migrating else {}),
                )
            except ConflictError:
                continue  # something newer is there already
            except NotFoundError:
                if not migrating:
                    raise
                self.setup.forget()  # the migration's alias is gone: switched
                continue
            dropped = dropped or not migrating
        return dropped

    def purge(self, entry: IndexEntry) -> bool:
        if entry.scope is None or not entry.token:
            return False
        seq_no, _, primary_term = entry.token.partition(":")
        try:
            self.opensearch.delete(
                index=self.setup.alias,
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
        out = self.dynamodb.get_item(TableName=self.table, Key=self._checkpoint_key(name), ConsistentRead=True)
        cursor = out.get("Item", {}).get("cursor", {}).get("S")
        return str(cursor) if cursor is not None else None

    def save_checkpoint(self, name: str, cursor: str | None) -> None:
        item = {**self._checkpoint_key(name), "updated_at": {"S": format_ts(utc_now())}}
        if cursor is not None:
            item["cursor"] = {"S": cursor}
        self.dynamodb.put_item(TableName=self.table, Item=item)

    # -- reads ------------------------------------------------------------------------------

    def _scan(self, cursor: str | None, limit: int, *, expired_at: datetime | None = None) -> Page[MemoryRecord]:
        """Every tenant's records (only those expired at ``expired_at``, when given), at most ``limit``
        items examined, by a ``Scan`` resumed from ``cursor``; for the cleanup job, never a request."""
        filters: dict[str, Any] = {}
        if expired_at is not None:
            filters = {
                "names": {"#exp": "expires_at"},
                "values": {":now": {"S": format_ts(expired_at)}},
                "clauses": ["#exp <= :now"],
            }
        names = {"#sk": "sk", "#del": "deleted", **filters.pop("names", {})}
        values = {":mem": {"S": "MEM#"}, **filters.pop("values", {})}
        clauses = ["begins_with(#sk, :mem)", "attribute_not_exists(#del)", *filters.pop("clauses", [])]
        request: dict[str, Any] = {
            "TableName": self.table,
            "Limit": limit,
            "FilterExpression": " AND ".join(clauses),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        if cursor:
            request["ExclusiveStartKey"] = json.loads(cursor)
        out = self.dynamodb.scan(**request)
        last = out.get("LastEvaluatedKey")
        records = [record_from_item(item) for item in out.get("Items", [])]
        return Page(records, json.dumps(last) if last else None, examined=int(out.get("ScannedCount", 0)))

    def _get_many(self, keys: Iterable[tuple[Scope, str]]) -> list[MemoryRecord]:
        """The stored records of these (scope, memory id) pairs, strongly consistent, as many as exist."""
        found: list[MemoryRecord] = []
        unique = sorted({(scope.workspace_id, scope.project_id, memory_id) for scope, memory_id in keys})
        pending = [{"pk": {"S": memory_pk(ws, prj)}, "sk": {"S": f"MEM#{mid}"}} for ws, prj, mid in unique]
        while pending:
            batch, pending = pending[:_BATCH_GET], pending[_BATCH_GET:]
            request = {self.table: {"Keys": batch, "ConsistentRead": True}}
            while request:
                out = self.dynamodb.batch_get_item(RequestItems=request)
                items = out.get("Responses", {}).get(self.table, [])
                found.extend(record_from_item(item) for item in items if not is_marker(item))
                request = out.get("UnprocessedKeys") or {}
        return found

    def _entries(self, records: list[MemoryRecord]) -> dict[str, IndexEntry]:
        """What the index holds for each of these records, by document id (absent: nothing)."""
        if not records:
            return {}
        docs = [{"_id": doc_id(r.project_id, r.id), "routing": r.project_id} for r in records]
        try:
            out = self.opensearch.mget(
                index=self.setup.alias, body={"docs": docs}, params={"_source_includes": ",".join(_ENTRY_FIELDS)}
            )
        except NotFoundError:
            return {}  # no index yet
        return {hit["_id"]: _entry(hit) for hit in out.get("docs", []) if hit.get("found")}

    def _index_page(self, cursor: str | None, limit: int) -> tuple[list[IndexEntry], str | None]:
        """Every document, tombstones included, ``limit`` at a time in (project, id) order; the
        cursor resumes after them (None: the walk's end)."""
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
            out = self.opensearch.search(index=self.setup.alias, body=body)
        except NotFoundError:
            return [], None  # no index yet
        hits = out["hits"]["hits"]
        return [_entry(hit) for hit in hits], json.dumps(hits[-1]["sort"]) if len(hits) == limit else None
