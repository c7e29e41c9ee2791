"""DynamoDB adapters: the memory record store and the tenant store.

Key design (every memory key lives inside its workspace and project):

* memories table — ``pk = WS#<ws>#PRJ#<prj>``, ``sk = MEM#<id>``; get by id is one ``GetItem``.
  The local secondary index ``recent`` (``pk``, ``lsi1sk = <updated_at>#<id>``) serves "newest
  first" listings as one ``Query`` — an LSI rather than a GSI because an LSI can be read with
  ``ConsistentRead``, so a listing right after a write sees it (read-your-writes, like SQLite).
  The sparse GSI ``repair`` (``repair_pk = REPAIR#<0-7>``, ``repair_sk = <marked_at>#<id>``)
  holds only records whose index write failed, for the cleanup job to find without a Scan.
* tenants table — workspace ``WS#<ws>/META``; project ``WS#<ws>/PRJ#<prj>`` plus a slug claim
  ``WS#<ws>/SLUG#<slug>`` written in the same transaction (slugs unique per workspace); API key
  ``KEY#<key id>/KEY`` (a key is looked up before its workspace is known). The GSI ``list``
  (``gsi1pk``, ``gsi1sk``) lists workspaces (``WORKSPACES``) and a workspace's keys
  (``KEYS#<ws>``) without a Scan.

Items hold the record's fields as plain attributes (the DynamoDB stream's images are readable by
the indexer through :func:`record_from_item`), plus ``kind_fold`` for filters, ``ttl`` (epoch
seconds) for DynamoDB's TTL and ``version`` for conditional writes.
"""

from __future__ import annotations

import math
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError
from pydantic import BaseModel

from mnemo.backends.errors import translate_errors
from mnemo.errors import StoreUnavailable
from mnemo.like import is_match_all, like_matches
from mnemo.models.common import format_ts
from mnemo.models.records import ApiKey, MemoryRecord, Project, RateLimits, Workspace
from mnemo.ports import MemoryFilter, Page, Scope, VersionConflict

RECENT_INDEX = "recent"
REPAIR_INDEX = "repair"
LIST_INDEX = "list"
REPAIR_SHARDS = 8
#: workspaces and projects remembered per process (see DynamoTenantStore)
TENANT_CACHE_SIZE = 1024
#: a listing reads at most this many items (pages of ``Query``) before it answers with what it has
MAX_LISTING_ITEMS = 5000

_ser = TypeSerializer()
_de = TypeDeserializer()


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: _ser.serialize(v) for k, v in values.items() if v is not None}


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _de.deserialize(v) for k, v in item.items()}


#: DynamoDB error codes that mean "overloaded or briefly down", not "your request is wrong"
OUTAGE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "ThrottlingException",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


def outage(exc: BaseException) -> StoreUnavailable | None:
    """Throttling, 5xx and connection failures of DynamoDB are outages (503); other errors are bugs."""
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        return StoreUnavailable(cause=f"DynamoDB {code}") if code in OUTAGE_CODES else None
    if isinstance(exc, BotoConnectionError | ConnectTimeoutError | ReadTimeoutError):
        return StoreUnavailable(cause=f"DynamoDB {type(exc).__name__}")
    return None


def is_condition_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") in {
        "ConditionalCheckFailedException",
        "TransactionCanceledException",
    }


# -- memories -------------------------------------------------------------------------------


def memory_pk(workspace_id: str, project_id: str) -> str:
    return f"WS#{workspace_id}#PRJ#{project_id}"


def memory_key(scope: Scope, memory_id: str) -> dict[str, Any]:
    return {"pk": {"S": memory_pk(scope.workspace_id, scope.project_id)}, "sk": {"S": f"MEM#{memory_id}"}}


def ttl_seconds(expires_at: datetime | None) -> int | None:
    return math.ceil(expires_at.timestamp()) if expires_at is not None else None


def memory_item(record: MemoryRecord) -> dict[str, Any]:
    updated = format_ts(record.updated_at)
    return to_item(
        {
            "pk": memory_pk(record.workspace_id, record.project_id),
            "sk": f"MEM#{record.id}",
            "lsi1sk": f"{updated}#{record.id}",
            "id": record.id,
            "workspace_id": record.workspace_id,
            "project_id": record.project_id,
            "content": record.content,
            "kind": record.kind,
            "kind_fold": record.kind.casefold() if record.kind is not None else None,
            "tags": list(record.tags),
            "path": record.path,
            "team_id": record.team_id,
            "source": record.source,
            "expires_at": format_ts(record.expires_at) if record.expires_at else None,
            "ttl": ttl_seconds(record.expires_at),
            "version": record.version,
            "created_at": format_ts(record.created_at),
            "updated_at": updated,
        }
    )


_RECORD_FIELDS = tuple(MemoryRecord.model_fields)


def record_from_item(item: dict[str, Any]) -> MemoryRecord:
    """A record from a table item or a stream image (DynamoDB JSON)."""
    values = from_item(item)
    fields = {name: values.get(name) for name in _RECORD_FIELDS if name in values}
    fields["tags"] = list(values.get("tags") or [])
    fields["version"] = int(values["version"])
    return MemoryRecord.model_validate(fields)


def matches(record: MemoryRecord, flt: MemoryFilter) -> bool:
    """The filter in Python: the DynamoDB FilterExpression's twin, plus the LIKE patterns it
    cannot express. Applied to every listed record, so a listing never widens the filter."""
    if record.expired(flt.now):
        return False
    kind = (record.kind or "").casefold()
    if flt.kind is not None and kind != flt.kind.casefold():
        return False
    if any(tag not in record.tags for tag in flt.tags_all):
        return False
    for pattern, value in ((flt.kind_like, record.kind), (flt.path_like, record.path)):
        if not is_match_all(pattern) and not like_matches(pattern or "%", value):
            return False
    if record.team_id is None:
        return flt.include_unteamed
    return flt.visible_teams is None or record.team_id in flt.visible_teams


def filter_expression(flt: MemoryFilter) -> tuple[str, dict[str, str], dict[str, Any]]:
    names: dict[str, str] = {"#exp": "expires_at"}
    values: dict[str, Any] = {":now": {"S": format_ts(flt.now)}}
    clauses = ["(attribute_not_exists(#exp) OR #exp > :now)"]
    if flt.kind is not None:
        names["#kf"] = "kind_fold"
        values[":kind"] = {"S": flt.kind.casefold()}
        clauses.append("#kf = :kind")
    for i, tag in enumerate(flt.tags_all):
        names["#tags"] = "tags"
        values[f":tag{i}"] = {"S": tag}
        clauses.append(f"contains(#tags, :tag{i})")
    if flt.visible_teams is not None or not flt.include_unteamed:
        names["#team"] = "team_id"
        team_clauses = ["attribute_not_exists(#team)"] if flt.include_unteamed else []
        teams = sorted(flt.visible_teams or ())
        for i, team in enumerate(teams):
            values[f":team{i}"] = {"S": team}
        if teams:
            team_clauses.append(f"#team IN ({', '.join(f':team{i}' for i in range(len(teams)))})")
        clauses.append("(" + (" OR ".join(team_clauses) or "attribute_exists(#never)") + ")")
        if not team_clauses:
            names["#never"] = "__never__"
    return " AND ".join(clauses), names, values


@translate_errors(outage)
class DynamoMemoryStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def unit_of_work(self) -> AbstractContextManager[None]:
        return nullcontext()  # the conditional write is the commit point

    def create(self, record: MemoryRecord) -> None:
        try:
            self.client.put_item(
                TableName=self.table,
                Item=memory_item(record),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(record.id) from None
            raise

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        out = self.client.get_item(TableName=self.table, Key=memory_key(scope, memory_id), ConsistentRead=True)
        item = out.get("Item")
        return record_from_item(item) if item else None

    def replace(self, record: MemoryRecord, *, expected_version: int) -> None:
        # A whole-item put: it also drops a repair mark, as the new version gets indexed now.
        try:
            self.client.put_item(
                TableName=self.table,
                Item=memory_item(record),
                ConditionExpression="#v = :expected",
                ExpressionAttributeNames={"#v": "version"},
                ExpressionAttributeValues={":expected": {"N": str(expected_version)}},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(record.id) from None
            raise

    def delete(self, scope: Scope, memory_id: str, *, expected_version: int) -> None:
        try:
            self.client.delete_item(
                TableName=self.table,
                Key=memory_key(scope, memory_id),
                ConditionExpression="#v = :expected",
                ExpressionAttributeNames={"#v": "version"},
                ExpressionAttributeValues={":expected": {"N": str(expected_version)}},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(memory_id) from None
            raise

    def recent(self, scope: Scope, flt: MemoryFilter, limit: int) -> list[MemoryRecord]:
        expression, names, values = filter_expression(flt)
        values[":pk"] = {"S": memory_pk(scope.workspace_id, scope.project_id)}
        selective = bool(flt.kind or flt.tags_all or flt.visible_teams is not None or flt.kind_like or flt.path_like)
        page = max(200, limit * 4) if selective else limit + 16
        out: list[MemoryRecord] = []
        for item in self._query_pages(expression, names, values, page):
            record = record_from_item(item)
            if matches(record, flt):
                out.append(record)
                if len(out) == limit:
                    break
        return out

    def _query_pages(
        self, expression: str, names: dict[str, str], values: dict[str, Any], page: int
    ) -> Iterator[dict[str, Any]]:
        request: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": RECENT_INDEX,
            "KeyConditionExpression": "pk = :pk",
            "FilterExpression": expression,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": False,
            "ConsistentRead": True,
            "Limit": page,
        }
        read = 0
        while True:
            out = self.client.query(**request)
            yield from out.get("Items", [])
            read += int(out.get("ScannedCount", 0))
            last = out.get("LastEvaluatedKey")
            if not last or read >= MAX_LISTING_ITEMS:
                return
            request["ExclusiveStartKey"] = last

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
        records = [record_from_item(item) for item in items]
        # More follows when the page overflowed, or when DynamoDB stopped early at 1 MB of items
        # (4 KiB contents make that possible before ``limit``) while still inside the MEM# range.
        last_key = (out.get("LastEvaluatedKey") or {}).get("sk", {}).get("S", "")
        more = len(records) > limit or (bool(records) and last_key.startswith("MEM#"))
        records = records[:limit]
        return Page(records, records[-1].id if more else None)

    def mark_for_repair(self, record: MemoryRecord) -> None:
        """Flag the record for the cleanup job (sparse GSI ``repair``). When the record is gone
        (its delete could not reach the index), a standalone marker item carries the repair."""
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

    def marked_for_repair(self, shard: int, limit: int = 100) -> list[dict[str, Any]]:
        """Items flagged for repair in one shard, oldest mark first (for the cleanup job)."""
        out = self.client.query(
            TableName=self.table,
            IndexName=REPAIR_INDEX,
            KeyConditionExpression="repair_pk = :rpk",
            ExpressionAttributeValues={":rpk": {"S": f"REPAIR#{shard}"}},
            Limit=limit,
        )
        return [from_item(item) for item in out.get("Items", [])]


# -- tenants --------------------------------------------------------------------------------


def _body(model: BaseModel) -> dict[str, Any]:
    return {"body": {"S": model.model_dump_json()}}


@translate_errors(outage)
class DynamoTenantStore:
    """Tenants in one table. Every call reads its workspace (limits) and project: found workspaces
    and projects are remembered per process for ``cache_s`` seconds, which saves ~3 GetItems a
    call on a warm instance. Only hits are cached (a new project is visible at once everywhere);
    projects never change; a limits change reaches other instances within ``cache_s``. API keys
    are never cached: a revoked key is refused on its next call."""

    def __init__(self, client: Any, table: str, *, cache_s: float = 5.0) -> None:
        self.client = client
        self.table = table
        self.cache_s = cache_s
        self._cache: OrderedDict[tuple[str, str], tuple[float, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def _get(self, pk: str, sk: str, *, cached: bool = False) -> dict[str, Any] | None:
        now = time.monotonic()
        if cached and self.cache_s > 0:
            with self._lock:
                hit = self._cache.get((pk, sk))
            if hit is not None and hit[0] > now:
                return hit[1]
        out = self.client.get_item(TableName=self.table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True)
        item: dict[str, Any] | None = out.get("Item")
        if cached and item is not None and self.cache_s > 0:
            with self._lock:
                self._cache[(pk, sk)] = (now + self.cache_s, item)
                self._cache.move_to_end((pk, sk))
                while len(self._cache) > TENANT_CACHE_SIZE:
                    self._cache.popitem(last=False)
        return item

    def _forget(self, pk: str, sk: str) -> None:
        with self._lock:
            self._cache.pop((pk, sk), None)

    def _list(self, gsi1pk: str, limit: int | None = None) -> list[dict[str, Any]]:
        request: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": LIST_INDEX,
            "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": gsi1pk}},
        }
        if limit is not None:
            request["Limit"] = limit
        items: list[dict[str, Any]] = []
        while True:
            out = self.client.query(**request)
            items.extend(out.get("Items", []))
            if limit is not None or "LastEvaluatedKey" not in out:
                return items
            request["ExclusiveStartKey"] = out["LastEvaluatedKey"]

    def _transact(self, items: list[dict[str, Any]], conflict: str) -> None:
        try:
            self.client.transact_write_items(TransactItems=items)
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(conflict) from None
            raise

    def _project_puts(self, project: Project) -> list[dict[str, Any]]:
        pk = {"S": f"WS#{project.workspace_id}"}
        return [
            {
                "Put": {
                    "TableName": self.table,
                    "Item": {"pk": pk, "sk": {"S": f"PRJ#{project.id}"}, **_body(project)},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "TableName": self.table,
                    "Item": {"pk": pk, "sk": {"S": f"SLUG#{project.slug}"}, **_body(project)},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]

    def is_empty(self) -> bool:
        return not self._list("WORKSPACES", limit=1)

    def create_workspace(self, workspace: Workspace, default_project: Project) -> None:
        """The project and its slug claim first (one BatchWriteItem: fresh ids and a new workspace
        cannot collide, so no transaction is needed), then the workspace item, conditionally:
        the workspace exists only once it is complete."""
        pk = {"S": f"WS#{workspace.id}"}
        body = _body(default_project)
        requests: list[dict[str, Any]] = [
            {"PutRequest": {"Item": {"pk": pk, "sk": {"S": f"PRJ#{default_project.id}"}, **body}}},
            {"PutRequest": {"Item": {"pk": pk, "sk": {"S": f"SLUG#{default_project.slug}"}, **body}}},
        ]
        pending: dict[str, Any] = {self.table: requests}
        for _ in range(5):
            pending = self.client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
        else:
            raise VersionConflict(workspace.id)
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "pk": pk,
                    "sk": {"S": "META"},
                    "gsi1pk": {"S": "WORKSPACES"},
                    "gsi1sk": {"S": workspace.id},
                    **_body(workspace),
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(workspace.id) from None
            raise

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        item = self._get(f"WS#{workspace_id}", "META", cached=True)
        return Workspace.model_validate_json(item["body"]["S"]) if item else None

    def list_workspaces(self) -> list[Workspace]:
        found = [Workspace.model_validate_json(i["body"]["S"]) for i in self._list("WORKSPACES")]
        return sorted(found, key=lambda w: w.id)

    def set_limits(self, workspace_id: str, limits: RateLimits | None) -> None:
        self._forget(f"WS#{workspace_id}", "META")
        item = self._get(f"WS#{workspace_id}", "META")
        if item is None:
            raise VersionConflict(workspace_id)
        workspace = Workspace.model_validate_json(item["body"]["S"])
        updated = workspace.model_copy(update={"limits": limits})
        try:
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": f"WS#{workspace_id}"}, "sk": {"S": "META"}},
                UpdateExpression="SET #b = :body",
                ExpressionAttributeNames={"#b": "body"},
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":body": {"S": updated.model_dump_json()}},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(workspace_id) from None
            raise
        self._forget(f"WS#{workspace_id}", "META")

    def create_project(self, project: Project) -> None:
        self._transact(self._project_puts(project), project.slug)

    def get_project(self, workspace_id: str, ref: str) -> Project | None:
        # Slugs are [a-z0-9-]: a ref starting with "prj_" can only be an id.
        sk = f"PRJ#{ref}" if ref.startswith("prj_") else f"SLUG#{ref}"
        item = self._get(f"WS#{workspace_id}", sk, cached=True)
        return Project.model_validate_json(item["body"]["S"]) if item else None

    def list_projects(self, workspace_id: str) -> list[Project]:
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": f"WS#{workspace_id}"}, ":prefix": {"S": "PRJ#"}},
            "ConsistentRead": True,
        }
        found: list[Project] = []
        while True:
            out = self.client.query(**request)
            found.extend(Project.model_validate_json(i["body"]["S"]) for i in out.get("Items", []))
            if "LastEvaluatedKey" not in out:
                return sorted(found, key=lambda p: p.slug)
            request["ExclusiveStartKey"] = out["LastEvaluatedKey"]

    def create_key(self, key: ApiKey) -> None:
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "pk": {"S": f"KEY#{key.id}"},
                    "sk": {"S": "KEY"},
                    "gsi1pk": {"S": f"KEYS#{key.workspace_id}"},
                    "gsi1sk": {"S": key.id},
                    **_body(key),
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(key.id) from None
            raise

    def get_key(self, key_id: str) -> ApiKey | None:
        item = self._get(f"KEY#{key_id}", "KEY")
        return ApiKey.model_validate_json(item["body"]["S"]) if item else None

    def list_keys(self, workspace_id: str) -> list[ApiKey]:
        found = [ApiKey.model_validate_json(i["body"]["S"]) for i in self._list(f"KEYS#{workspace_id}")]
        return sorted(found, key=lambda k: k.id)

    def revoke_key(self, workspace_id: str, key_id: str) -> bool:
        key = self.get_key(key_id)
        if key is None or key.workspace_id != workspace_id:
            return False
        revoked = key.model_copy(update={"revoked": True})
        try:
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": f"KEY#{key_id}"}, "sk": {"S": "KEY"}},
                UpdateExpression="SET #b = :body",
                ExpressionAttributeNames={"#b": "body"},
                ConditionExpression="attribute_exists(pk) AND gsi1pk = :ws",
                ExpressionAttributeValues={
                    ":body": {"S": revoked.model_dump_json()},
                    ":ws": {"S": f"KEYS#{workspace_id}"},
                },
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True
