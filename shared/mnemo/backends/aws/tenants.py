"""The tenant store: workspaces, projects (slug unique per workspace) and API keys in one table.

* workspace ``WS#<ws>/META``; project ``WS#<ws>/PRJ#<prj>`` plus a slug claim ``WS#<ws>/SLUG#<slug>``
  written in the same transaction; API key ``KEY#<key id>/KEY`` (a key is looked up before its
  workspace is known); OAuth principal ``PRN#<principal id>/PRN`` (likewise). The GSI ``list``
  (``gsi1pk``, ``gsi1sk``) lists workspaces (``WORKSPACES``), a workspace's keys (``KEYS#<ws>``)
  and its principals (``PRINCIPALS#<ws>``) without a Scan.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from botocore.exceptions import ClientError
from pydantic import BaseModel

from mnemo.backends.aws.errors import is_condition_failure, outage
from mnemo.backends.errors import translate_errors
from mnemo.models.records import ApiKey, Principal, Project, RateLimits, Workspace
from mnemo.ports import VersionConflict

LIST_INDEX = "list"
#: workspaces and projects remembered per process (see DynamoTenantStore)
TENANT_CACHE_SIZE = 1024


def _body(model: BaseModel) -> dict[str, Any]:
    return {"body": {"S": model.model_dump_json()}}


@translate_errors(outage)
class DynamoTenantStore:
    """Tenants in one table. Every call reads its workspace (limits) and project: found workspaces
    and projects are remembered per process for ``cache_s`` seconds, which saves ~3 GetItems a
    call on a warm instance. Only hits are cached (a new project is visible at once everywhere);
    projects never change; a change of limits or secret check reaches other instances within ``cache_s``. API keys
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
        self._update_workspace(workspace_id, {"limits": limits})

    def set_secret_check(self, workspace_id: str, on: bool) -> None:
        self._update_workspace(workspace_id, {"secret_check": on})

    def _update_workspace(self, workspace_id: str, changes: dict[str, Any]) -> None:
        self._forget(f"WS#{workspace_id}", "META")
        item = self._get(f"WS#{workspace_id}", "META")
        if item is None:
            raise VersionConflict(workspace_id)
        workspace = Workspace.model_validate_json(item["body"]["S"])
        updated = workspace.model_copy(update=changes)
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

    def create_principal(self, principal: Principal) -> None:
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "pk": {"S": f"PRN#{principal.id}"},
                    "sk": {"S": "PRN"},
                    "gsi1pk": {"S": f"PRINCIPALS#{principal.workspace_id}"},
                    "gsi1sk": {"S": principal.id},
                    **_body(principal),
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise VersionConflict(principal.id) from None
            raise

    def get_principal(self, principal_id: str) -> Principal | None:
        # never cached, like keys: a removed binding is refused on its next call
        item = self._get(f"PRN#{principal_id}", "PRN")
        return Principal.model_validate_json(item["body"]["S"]) if item else None

    def list_principals(self, workspace_id: str) -> list[Principal]:
        found = [Principal.model_validate_json(i["body"]["S"]) for i in self._list(f"PRINCIPALS#{workspace_id}")]
        return sorted(found, key=lambda p: p.id)

    def remove_principal(self, workspace_id: str, principal_id: str) -> bool:
        try:
            self.client.delete_item(
                TableName=self.table,
                Key={"pk": {"S": f"PRN#{principal_id}"}, "sk": {"S": "PRN"}},
                ConditionExpression="attribute_exists(pk) AND gsi1pk = :ws",
                ExpressionAttributeValues={":ws": {"S": f"PRINCIPALS#{workspace_id}"}},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True
