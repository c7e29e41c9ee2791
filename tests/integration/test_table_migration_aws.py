"""Moving a memories table off the former ``recent`` LSI (``mnemo.backends.aws.migrate``).

A table of the former layout (the ``recent`` LSI on ``pk``, ``lsi1sk``) is filled with a
project's items as the former code wrote them; the copy job moves them into a table of today's
layout, stopped half-way and resumed, then run again after more writes on both sides. moto
server (the session's stack, tests/conftest.py).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest
from mnemo.backends.aws import AwsBackend, Tables
from mnemo.backends.aws.items import memory_pk
from mnemo.backends.aws.migrate import TableCopy, main
from mnemo.embedding import default_embedder
from mnemo.local.tables import TABLES
from mnemo.models.common import utc_now
from mnemo.ports import MemoryFilter, Scope
from mnemo.service.pipeline import Service

from tests.contract.conftest import new_tenant

pytestmark = [pytest.mark.slow, pytest.mark.aws]

#: the memories table as template.yaml declared it before issue 29
LEGACY_TABLE: dict[str, Any] = {
    "AttributeDefinitions": [
        {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "lsi1sk", "repair_pk", "repair_sk")
    ],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "BillingMode": "PAY_PER_REQUEST",
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "repair",
            "KeySchema": [
                {"AttributeName": "repair_pk", "KeyType": "HASH"},
                {"AttributeName": "repair_sk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
    "LocalSecondaryIndexes": [
        {
            "IndexName": "recent",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "lsi1sk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
}


def _legacy(item: dict[str, Any]) -> dict[str, Any]:
    """An item of today's layout as the former code wrote it: ``lsi1sk`` instead of ``recent_sk``
    (on a delete marker: its delete's time)."""
    out = dict(item)
    key = out.pop("recent_sk", None)
    if "deleted" in out:
        out["lsi1sk"] = {"S": f"{out['deleted_at']['S']}#{out['id']['S']}"}
    elif key is not None:
        out["lsi1sk"] = key
    return out


def _scan(client: Any, table: str) -> list[dict[str, Any]]:
    items, request = [], {"TableName": table}
    while True:
        out = client.scan(**request)
        items += out["Items"]
        if "LastEvaluatedKey" not in out:
            return items
        request["ExclusiveStartKey"] = out["LastEvaluatedKey"]


@pytest.fixture
def tables(aws_stack):
    """A legacy table holding one project's memories, claims and a delete marker, written through
    today's code on a scratch table and turned into the former layout; and an empty new table."""
    run = uuid.uuid4().hex[:8]
    scratch = Tables(**{**Tables.from_settings(aws_stack).__dict__, "memories": f"mig-scratch-{run}"})
    client = AwsBackend.from_settings(aws_stack).dynamodb
    legacy, target = f"mig-legacy-{run}", f"mig-target-{run}"
    client.create_table(TableName=legacy, **LEGACY_TABLE)
    for name in (scratch.memories, target):
        client.create_table(TableName=name, **TABLES["MemoriesTable"])
    backend = AwsBackend.from_settings(aws_stack)
    backend = AwsBackend(backend.dynamodb, backend.index, scratch)
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    memories = [tenant.call("memory_add", content=f"migrated fact {i}").memory for i in range(24)]
    tenant.call("memory_update", id=memories[0].id, content="migrated fact 0, edited")
    tenant.call("memory_delete", id=memories[1].id)
    items = [i for i in _scan(client, scratch.memories) if not i["pk"]["S"].startswith("CHG#")]
    for item in items:
        client.put_item(TableName=legacy, Item=_legacy(item))
    scope = Scope(tenant.workspace_id, tenant.project.id)
    yield client, legacy, target, scope, tenant, memories, len(items)
    for name in (legacy, target, scratch.memories):
        client.delete_table(TableName=name)


def _target_backend(aws_stack, target: str) -> AwsBackend:
    base = AwsBackend.from_settings(aws_stack)
    return AwsBackend(base.dynamodb, base.index, replace(Tables.from_settings(aws_stack), memories=target))


def test_a_copy_stopped_half_way_resumes_and_the_new_table_serves_the_project(aws_stack, tables):
    client, legacy, target, scope, _, memories, count = tables
    job = TableCopy(client, legacy, target, segments=2, page=5)

    # When the copy stops after one page per segment, then runs again to the end, then once more
    first = job.copy(max_pages=1)
    second = job.copy()
    third = job.copy()

    # Then the first run copied part, the second the rest and nothing twice, the third nothing
    # (a segment may be empty: moto, like DynamoDB, splits a Scan by partition key, and one
    # project's items share one)
    assert len(first.done) < 2 and 0 < first.put < count
    assert second.done == [0, 1] and first.put + second.put == count and second.kept == 0
    assert third.put == third.kept == 0 and third.done == [0, 1]
    # and the new table serves the project: the listing newest first (from its GSI), the edit
    # and the delete as they were, every memory item with the GSI key instead of the LSI's
    store = _target_backend(aws_stack, target).store
    listed = store.recent(scope, MemoryFilter(now=utc_now()), 100)
    assert {r.id for r in listed} == {m.id for m in memories} - {memories[1].id}
    assert store.get(scope, memories[0].id).content == "migrated fact 0, edited"
    assert store.get(scope, memories[1].id) is None
    copied = [i for i in _scan(client, target) if i["sk"]["S"].startswith("MEM#")]
    assert all("lsi1sk" not in i for i in copied)
    assert all(("recent_sk" in i) != ("deleted" in i) for i in copied)


def test_a_second_pass_brings_late_writes_of_the_old_table_and_keeps_the_new_tables_own(aws_stack, tables):
    client, legacy, target, scope, _, memories, _ = tables
    # Given a first pass by the command line, then an edit through the new table (the functions
    # switched) ...
    endpoint = ["--endpoint-url", aws_stack.dynamodb_endpoint_url]
    assert main(["--source", legacy, "--target", target, "--segments", "2", *endpoint]) == 0
    new = _target_backend(aws_stack, target)
    edited = new.store.get(scope, memories[2].id)
    later = edited.model_copy(
        update={"content": "edited in the new table", "version": edited.version + 1, "updated_at": utc_now()}
    )
    new.store.replace(later, expected_version=edited.version)

    # ... and late writes to the old one: an edit of that memory, an edit of another, a delete
    def legacy_item(memory_id: str) -> dict[str, Any]:
        key = {"pk": {"S": memory_pk(scope.workspace_id, scope.project_id)}, "sk": {"S": f"MEM#{memory_id}"}}
        return dict(client.get_item(TableName=legacy, Key=key)["Item"])

    for memory, content in ((memories[2], "late edit in the old table"), (memories[3], "late edit, copied")):
        item = legacy_item(memory.id) | {"content": {"S": content}, "version": {"N": str(memory.version + 1)}}
        client.put_item(TableName=legacy, Item=item)
    kept = ("pk", "sk", "id", "workspace_id", "project_id", "version")
    marker = {k: v for k, v in legacy_item(memories[4].id).items() if k in kept}
    marker |= {"deleted": {"BOOL": True}, "deleted_at": {"S": "2026-12-01T00:00:00.000Z"}}
    client.put_item(TableName=legacy, Item=marker)

    # When the copy runs again under a new run name
    result = TableCopy(client, legacy, target, run="catch-up", segments=2).copy()

    # Then the late edit and the late delete arrived, the new table's own edit stayed
    assert result.done == [0, 1]
    assert new.store.get(scope, memories[2].id).content == "edited in the new table"
    assert new.store.get(scope, memories[3].id).content == "late edit, copied"
    assert new.store.get(scope, memories[4].id) is None
    assert memories[4].id not in {r.id for r in new.store.recent(scope, MemoryFilter(now=utc_now()), 100)}
