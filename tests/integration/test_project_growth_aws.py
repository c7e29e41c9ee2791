"""No write fails because a project grew (issue 29, docs/scale.md "Lifting the 10 GB wall").

DynamoDB caps an item collection — the items of one partition key — at 10 GB only in a table
with a local secondary index (ItemCollectionSizeLimitExceededException). moto enforces no size
limit, so these tests prove the layout instead: the memories table has no LSI, and the one key
that gathers a project's recent writes (the change log's) holds one time bucket's writes and
no more, while listings and read-your-writes still hold across buckets and over a GSI that
lags. moto server + a real OpenSearch node (tests/conftest.py).
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from mnemo.backends.aws.items import RECENT_INDEX, memory_pk
from mnemo.backends.aws.store import DynamoMemoryStore
from mnemo.embedding import default_embedder
from mnemo.models.common import utc_now
from mnemo.models.records import RateLimits
from mnemo.ports import MemoryFilter, Scope
from mnemo.service.pipeline import Service

from tests.contract.conftest import new_tenant

pytestmark = [pytest.mark.slow, pytest.mark.aws]


def _items_by_partition(client: Any, table: str, prefix: str) -> Counter[str]:
    """How many items each partition key starting with ``prefix`` holds (a Scan: tests only)."""
    counts: Counter[str] = Counter()
    request: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": "begins_with(pk, :p)",
        "ExpressionAttributeValues": {":p": {"S": prefix}},
    }
    while True:
        out = client.scan(**request)
        counts.update(item["pk"]["S"] for item in out["Items"])
        if "LastEvaluatedKey" not in out:
            return counts
        request["ExclusiveStartKey"] = out["LastEvaluatedKey"]


class LaggingRecentIndex:
    """The ``recent`` GSI as it looks while it lags (real GSIs are eventually consistent; moto's
    is not): from :meth:`freeze` on, every ``Query`` of it answers what it answered then."""

    def __init__(self, client: Any) -> None:
        self.frozen: list[dict[str, Any]] | None = None
        events = client.meta.events
        events.register("before-call.dynamodb.Query", self._before)
        events.register("after-call.dynamodb.Query", self._after)

    def freeze(self, store: DynamoMemoryStore, scope: Scope) -> None:
        out = store.client.query(
            TableName=store.table,
            IndexName=RECENT_INDEX,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": memory_pk(scope.workspace_id, scope.project_id)}},
            ScanIndexForward=False,
        )
        self.frozen = out["Items"]

    def _before(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["recent_gsi"] = params.get("IndexName") == RECENT_INDEX

    def _after(self, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if self.frozen is not None and context.get("recent_gsi"):
            parsed["Items"] = list(self.frozen)
            parsed.pop("LastEvaluatedKey", None)


def test_the_memories_table_has_no_local_secondary_index(aws_stack, own_backend):
    # Given the table the stack created from template.yaml's schema (mnemo.local.tables)
    table = own_backend.dynamodb.describe_table(TableName=aws_stack.memories_table)["Table"]

    # Then no index shares the table's partition key as an LSI: no item collection is capped
    assert table.get("LocalSecondaryIndexes", []) == []
    assert {i["IndexName"] for i in table["GlobalSecondaryIndexes"]} == {"recent", "repair"}


def test_many_writes_across_log_buckets_stay_listed_and_findable_and_no_key_gathers_them(aws_stack, own_backend):
    # Given a store whose change log turns a partition every second (five minutes when deployed)
    store = DynamoMemoryStore(own_backend.dynamodb, aws_stack.memories_table, log_bucket_s=1)
    own_backend.store = store
    own_backend.index.read_your_writes(store, window_s=60, first_page=50)
    # (limits no caller reaches: how many writes fit in the loop depends on the machine's speed,
    # and a fast one went past the default 60 a minute)
    unlimited = RateLimits(search=1_000_000, write=1_000_000)
    tenant = new_tenant(Service(own_backend, embedder=default_embedder(), default_limits=unlimited))
    scope = Scope(tenant.workspace_id, tenant.project.id)
    start = utc_now()

    # When memories are added, updated and deleted for more than three seconds
    ids: list[str] = []
    edited: set[str] = set()
    deleted: set[str] = set()
    writes = 0
    while utc_now() - start < timedelta(seconds=3.5) or len(ids) < 30:
        n = len(ids)
        ids.append(tenant.call("memory_add", content=f"growth note {n}").memory.id)
        writes += 1
        if n % 5 == 1:
            tenant.call("memory_update", id=ids[n - 1], content=f"growth note {n - 1}, edited")
            edited.add(ids[n - 1])
            writes += 1
        if n % 7 == 3:
            tenant.call("memory_delete", id=ids[n - 2])
            deleted.add(ids[n - 2])
            writes += 1
        time.sleep(0.05)

    # Then the change log spread the project's writes over several partitions, none holding
    # half of them, and the memories' own partition key has no LSI to fill
    prefix = f"CHG#{scope.workspace_id}#{scope.project_id}#"
    log = _items_by_partition(own_backend.dynamodb, aws_stack.memories_table, prefix)
    assert len(log) >= 4
    assert sum(log.values()) == writes
    assert max(log.values()) < writes / 2

    # And a read of every change since the start spans the partitions and sees each memory as it is
    changes, complete = store.recent_changes(scope, start - timedelta(seconds=1), 10, 1000)
    assert complete
    assert sorted(c.memory_id for c in changes) == sorted(ids)
    assert {c.memory_id for c in changes if c.record is None} == deleted
    assert {c.memory_id for c in changes if c.record is not None and c.record.content.endswith("edited")} == (
        edited - deleted
    )

    # And the listing is every live memory, newest first, edits included
    listed = store.recent(scope, MemoryFilter(now=utc_now()), 1000)
    assert [r.id for r in listed] == [r.id for r in sorted(listed, key=lambda r: (r.updated_at, r.id), reverse=True)]
    assert {r.id for r in listed} == set(ids) - deleted
    assert {r.id for r in listed if r.content.endswith("edited")} == edited - deleted

    # And a search finds the newest write at once (nothing drained the stream into the index)
    found = tenant.call("memory_search", q=f"growth note {len(ids) - 1}").memories
    assert ids[-1] in [m.id for m in found]


def test_a_listing_right_after_writes_is_exact_while_the_recent_index_lags(own_backend):
    # Given a project with three memories, and the recent GSI stuck at that moment
    backend = own_backend
    lag = LaggingRecentIndex(backend.dynamodb)
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    scope = Scope(tenant.workspace_id, tenant.project.id)
    a, b, c = (tenant.call("memory_add", content=f"lagging {n}").memory for n in ("a", "b", "c"))
    lag.freeze(backend.store, scope)

    # When one is edited, one deleted and one added
    tenant.call("memory_update", id=a.id, content="lagging a, edited")
    tenant.call("memory_delete", id=b.id)
    d = tenant.call("memory_add", content="lagging d").memory

    # Then the GSI alone still shows the old state (the lag is real) ...
    assert {item["id"]["S"] for item in lag.frozen or []} == {a.id, b.id, c.id}
    # ... and the listing shows the new one, newest first
    listed = tenant.call("memory_search", q="").memories
    assert [(m.id, m.content) for m in listed] == [
        (d.id, "lagging d"),
        (a.id, "lagging a, edited"),
        (c.id, "lagging c"),
    ]
    backend.close()
