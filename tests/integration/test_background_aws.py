"""The background half on the AWS backend (moto server + a real OpenSearch node): the stream
indexer fed with the very records moto's DynamoDB stream produced, and the cleanup job repairing
what an OpenSearch outage left behind, and purging tombstones after their retention."""

from __future__ import annotations

import base64
import json
import random
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from mnemo import runtime
from mnemo.backends.aws import AwsBackend, Tables
from mnemo.backends.aws.index import OpenSearchIndex
from mnemo.backends.aws.mapping import doc_id
from mnemo.embedding import default_embedder
from mnemo.local.server import LocalContext
from mnemo.models.common import utc_now
from mnemo.ports import Scope
from mnemo.service.cleanup import CleanupOptions, run_cleanup
from mnemo.service.pipeline import Service

from tests.contract.conftest import Tenant, new_tenant
from tests.support.gate import Gate

pytestmark = [pytest.mark.slow, pytest.mark.aws]


@pytest.fixture
def opensearch_gate(aws_stack) -> Iterator[Gate]:
    """The test's way to the session's node: shut, OpenSearch is gone to the test's clients as
    when the node stops (open connections closed, new ones refused), and back at once when opened
    (restarting the node itself took ≈ 11 s per outage on a loaded machine)."""
    with Gate(aws_stack.opensearch_endpoint) as gate:
        yield gate


@pytest.fixture
def own_stack(aws_stack, opensearch_gate) -> Iterator[Any]:
    """Tables and an index of the test's own, on the session's moto server and node (through the
    test's gate). On the session's table a stream read from its start held every change of the
    suite so far, the cleanup job walked every memory, claim and change-log entry of it (≈ 20 s a
    cycle late in ``make test``, twice per test), and its counts mixed in other tests'
    tombstones, some purgeable at any time."""
    from tests.support.aws_stack import own_stack

    with own_stack(aws_stack, opensearch_endpoint=opensearch_gate.url) as cfg:
        yield cfg


@pytest.fixture
def backend(own_stack) -> Iterator[AwsBackend]:
    """The service's backend, over the test's own tables."""
    own = AwsBackend.from_settings(own_stack)
    yield own
    own.close()


@pytest.fixture
def stream_backend(own_stack, backend) -> Iterator[AwsBackend]:
    """The same tables, but an index of its own that only the stream indexer writes to; the
    process runtime (what the handler uses) is wired to it."""
    index = OpenSearchIndex(
        backend.index.client,
        f"{own_stack.opensearch_index}-stream-{uuid.uuid4().hex[:6]}",
        refresh_interval=own_stack.opensearch_refresh_interval,
    )
    own = AwsBackend(backend.dynamodb, index, Tables.from_settings(own_stack))
    runtime.use(Service(own, embedder=default_embedder()), own_stack)
    yield own
    runtime.use(None)
    index.client.indices.delete(index=f"{index.alias}-*", ignore_unavailable=True)


def stream_event(cfg: Any, workspace_id: str) -> dict[str, Any]:
    """This workspace's records from moto's stream of the memories table, shaped as Lambda's
    event source mapping delivers them (creation time in epoch seconds, the stream's ARN)."""
    dynamodb = boto3.client("dynamodb", endpoint_url=cfg.dynamodb_endpoint_url, region_name=cfg.aws_region)
    arn = dynamodb.describe_table(TableName=cfg.memories_table)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=cfg.dynamodb_endpoint_url, region_name=cfg.aws_region)
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            out = streams.get_records(ShardIterator=iterator, Limit=1000)
            records.extend(out["Records"])
            iterator = out.get("NextShardIterator") if out["Records"] else None
    mine = []
    for record in records:
        if f"WS#{workspace_id}#" not in record["dynamodb"]["Keys"]["pk"]["S"]:
            continue
        record["dynamodb"]["ApproximateCreationDateTime"] = record["dynamodb"][
            "ApproximateCreationDateTime"
        ].timestamp()
        record["eventSourceARN"] = arn
        for image in ("NewImage", "OldImage"):  # Lambda delivers binary attributes in base64
            for value in record["dynamodb"].get(image, {}).values():
                if "B" in value:
                    value["B"] = base64.b64encode(value["B"]).decode()
        mine.append(record)
    return {"Records": mine}


def index_state(backend: AwsBackend, scope: Scope, ids: list[str]) -> dict[str, tuple[int, bool]]:
    """id → (version, is a tombstone) for what the index holds."""
    docs = [{"_id": doc_id(scope.project_id, i), "routing": scope.project_id} for i in ids]
    out = backend.index.client.mget(index=backend.index.alias, body={"docs": docs})
    return {
        hit["_source"]["id"]: (hit["_version"], bool(hit["_source"].get("deleted")))
        for hit in out["docs"]
        if hit.get("found")
    }


def store_state(backend: AwsBackend, scope: Scope, ids: list[str]) -> dict[str, tuple[int, bool]]:
    """What the index should hold: each live record at its version, nothing else live."""
    out = {}
    for memory_id in ids:
        record = backend.store.get(scope, memory_id)
        if record is not None:
            out[memory_id] = (record.version, False)
    return out


def live(state: dict[str, tuple[int, bool]]) -> dict[str, int]:
    return {k: version for k, (version, deleted) in state.items() if not deleted}


def scenario(tenant: Tenant) -> list[str]:
    """Adds, updates and deletes: a stream with INSERT, MODIFY and REMOVE records."""
    a = tenant.call("memory_add", content="stream alpha").memory.id
    b = tenant.call("memory_add", content="stream beta", kind="working").memory.id
    c = tenant.call("memory_add", content="stream gamma", expires_at=utc_now() + timedelta(hours=1)).memory.id
    tenant.call("memory_update", id=a, content="stream alpha two")
    tenant.call("memory_update", id=a, tags=["x"])
    tenant.call("memory_delete", id=b)
    tenant.call("memory_update", id=c, path="p/q")
    return [a, b, c]


def invoke_indexer(event: dict[str, Any]) -> dict[str, Any]:
    from functions.indexer.handler import lambda_handler

    return lambda_handler(event, LocalContext("IndexerFunction"))  # type: ignore[return-value]


# -- the stream indexer -----------------------------------------------------------------------


def test_a_stream_batch_leaves_the_index_equal_to_the_store(own_stack, backend, stream_backend):
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    ids = scenario(tenant)
    event = stream_event(own_stack, tenant.workspace_id)
    # of a memory, a delete is a MODIFY into a delete marker; REMOVEs come from TTL only (and
    # from dedup claims given up, which are no memories)
    memories = [r for r in event["Records"] if r["dynamodb"]["Keys"]["sk"]["S"].startswith("MEM#")]
    assert {r["eventName"] for r in memories} == {"INSERT", "MODIFY"}

    response = invoke_indexer(event)

    assert response == {"batchItemFailures": []}
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert live(index_state(stream_backend, scope, ids)) == live(store_state(backend, scope, ids))
    assert index_state(stream_backend, scope, [ids[1]]) == {ids[1]: (2, True)}  # the delete's tombstone


def test_a_batch_replayed_twice_leaves_the_index_equal_to_the_store(own_stack, backend, stream_backend):
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    ids = scenario(tenant)
    event = stream_event(own_stack, tenant.workspace_id)
    invoke_indexer(event)
    once = index_state(stream_backend, Scope(tenant.workspace_id, tenant.project.id), ids)

    response = invoke_indexer(event)

    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert response == {"batchItemFailures": []}
    assert index_state(stream_backend, scope, ids) == once
    assert live(once) == live(store_state(backend, scope, ids))


@pytest.mark.parametrize("order", ["reversed", "shuffled"])
def test_a_batch_out_of_order_leaves_the_index_equal_to_the_store(own_stack, backend, stream_backend, order):
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    ids = scenario(tenant)
    records = stream_event(own_stack, tenant.workspace_id)["Records"]
    if order == "reversed":
        records.reverse()
    else:
        random.Random(7).shuffle(records)

    response = invoke_indexer({"Records": records})

    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert response == {"batchItemFailures": []}
    assert live(index_state(stream_backend, scope, ids)) == live(store_state(backend, scope, ids))
    deleted = ids[1]
    assert index_state(stream_backend, scope, [deleted])[deleted][1] is True  # a tombstone, not a gap


def test_a_record_that_cannot_be_applied_is_reported_and_only_it(own_stack, backend, stream_backend):
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    scenario(tenant)
    event = stream_event(own_stack, tenant.workspace_id)
    broken = json.loads(json.dumps(event))
    broken["Records"][0]["dynamodb"]["NewImage"]["version"] = {"S": "not a number"}

    response = invoke_indexer(broken)

    assert response == {"batchItemFailures": [{"itemIdentifier": broken["Records"][0]["dynamodb"]["SequenceNumber"]}]}


def test_an_old_change_is_checked_against_the_store_first(own_stack, backend, stream_backend):
    from mnemo.models.records import MemoryRecord
    from mnemo.ports import StoreChange
    from mnemo.service.indexer import apply_change

    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    memory = tenant.call("memory_add", content="old change").memory
    tenant.call("memory_delete", id=memory.id)
    stored = MemoryRecord(**memory.model_dump(), workspace_id=tenant.workspace_id, project_id=tenant.project.id)

    outcome = apply_change(stream_backend, StoreChange("upsert", stored, utc_now() - timedelta(hours=1)))

    assert outcome == "skipped"
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert index_state(stream_backend, scope, [memory.id]) == {}


def _passes_stream_filter(record: dict[str, Any]) -> bool:
    """Whether the indexer's event source mapping (template.yaml) lets this stream record through:
    its one filter is a prefix of the sort key."""
    from tests.support.template import load_template

    events = load_template()["Resources"]["IndexerFunction"]["Properties"]["Events"]
    (only,) = events["MemoriesStream"]["Properties"]["FilterCriteria"]["Filters"]
    assert json.loads(only["Pattern"]) == {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "MEM#"}]}}}}
    return str(record["dynamodb"]["Keys"]["sk"]["S"]).startswith("MEM#")


def test_claim_items_never_reach_the_index(own_stack, backend, stream_backend):
    # Given adds that take, meet, move and release dedup claims (CLAIM# items beside the memories)
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    a = tenant.call("memory_add", content="claimed alpha").memory.id
    assert tenant.call("memory_add", content="Claimed  ALPHA").deduplicated is True
    b = tenant.call("memory_add", content="claimed beta").memory.id
    tenant.call("memory_update", id=a, content="claimed alpha two")  # its claim moves
    tenant.call("memory_delete", id=b)  # its claim is released
    c = tenant.call("memory_add", content="claimed alpha two", allow_duplicate=True).memory.id
    event = stream_event(own_stack, tenant.workspace_id)
    keys = [str(r["dynamodb"]["Keys"]["sk"]["S"]) for r in event["Records"]]
    claims = [r for r, sk in zip(event["Records"], keys, strict=True) if sk.startswith("CLAIM#")]
    assert {r["eventName"] for r in claims} == {"INSERT", "REMOVE"}  # the stream does carry them
    # (and the version the update kept: a VER# item, never indexed either)
    memories = [r for r, sk in zip(event["Records"], keys, strict=True) if sk.startswith("MEM#")]
    assert any(sk.startswith("VER#") for sk in keys)

    # Then the event source mapping's filter drops them and passes every memory's record
    assert not any(_passes_stream_filter(r) for r in event["Records"] if r not in memories)
    assert all(_passes_stream_filter(r) for r in memories) and memories

    # and the indexer, handed them anyway, indexes memories only: no failure, no claim document
    assert invoke_indexer(event) == {"batchItemFailures": []}
    scope = Scope(tenant.workspace_id, tenant.project.id)
    client = stream_backend.index.client
    client.indices.refresh(index=stream_backend.index.alias)
    hits = client.search(
        index=stream_backend.index.alias,
        routing=scope.project_id,
        body={"query": {"term": {"project_id": scope.project_id}}, "size": 100},
    )["hits"]["hits"]
    # (b as a tombstone)
    assert sorted(h["_id"] for h in hits) == sorted(doc_id(scope.project_id, i) for i in (a, b, c))
    assert live(index_state(stream_backend, scope, [a, b, c])) == live(store_state(backend, scope, [a, b, c]))
    # and no listing of the project shows a claim
    assert sorted(m.id for m in tenant.call("memory_search", limit=100).memories) == sorted([a, c])


# -- the cleanup job --------------------------------------------------------------------------


def whole_cycle(ports: Any) -> Counter[str]:
    """The counts of cleanup runs until one says it is done: a whole walk of the table."""
    counts: Counter[str] = Counter()
    for _ in range(50):
        summary = run_cleanup(ports)
        counts.update(summary.counts)
        if not summary.more:
            return counts
    raise AssertionError("cleanup never finished")


@pytest.fixture
def stream_drain(own_stack) -> Any:
    """The test's own table's stream, drained through the indexer on demand (this module's
    cleanup tests; the session's ``stream_drain`` reads the shared table's). A failed batch is
    retried once before it is given up: these tests need it given up, and the template's five
    retries of every record of a bisected batch (each attempt marks it for repair again) were
    most of the fifty-adds outage test's drain."""
    from tests.support.stream import StreamDrain

    return StreamDrain(own_stack, max_retry_attempts=1)


def test_fifty_adds_during_an_outage_the_stream_gave_up_on_are_searchable_once_after_one_cleanup(
    opensearch_gate, backend, stream_drain
):
    from mnemo.errors import IndexUnavailable

    stream_drain.drain(backend)
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    term = "outage" + uuid.uuid4().hex[:8]
    given_up = len(stream_drain.failures)

    opensearch_gate.shut()
    try:
        # Given fifty adds while OpenSearch is down: each succeeds (none touches OpenSearch)
        added = [tenant.call("memory_add", content=f"written during the outage {term} {i}").memory for i in range(50)]
        # and a search answers 503
        with pytest.raises(IndexUnavailable):
            tenant.call("memory_search", q=term)
        # and the stream indexer fails on each, marks it for repair, and is given up on at last
        stream_drain.drain(backend)
    finally:
        opensearch_gate.open()
    lost = {memory_id for failure in stream_drain.failures[given_up:] for memory_id in failure.memory_ids}
    assert {m.id for m in added} <= lost

    # When the cleanup job runs once
    summary = run_cleanup(backend)

    # Then every add is searchable, exactly once, in the index itself too
    assert summary.counts["repaired"] >= 50
    assert not summary.index_unavailable
    found = tenant.call("memory_search", q=term, limit=100).memories
    assert sorted(m.id for m in found) == sorted(m.id for m in added)
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert index_state(backend, scope, [m.id for m in added]) == {m.id: (1, False) for m in added}


def test_changes_made_during_an_outage_reach_the_index_through_the_stream_once_it_is_back(
    opensearch_gate, backend, stream_drain
):
    # Given an add, an update and a delete while OpenSearch is down, nothing drained meanwhile
    stream_drain.drain(backend)
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    term = "later" + uuid.uuid4().hex[:8]
    opensearch_gate.shut()
    try:
        kept = tenant.call("memory_add", content=f"kept {term}").memory
        tenant.call("memory_update", id=kept.id, content=f"kept and updated {term}")
        gone = tenant.call("memory_add", content=f"gone {term}").memory
        tenant.call("memory_delete", id=gone.id)
    finally:
        opensearch_gate.open()

    # When the stream's records are delivered (Lambda's mapping keeps them 24 h)
    stream_drain.drain(backend)

    # Then the index equals the store, with no repair needed
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert index_state(backend, scope, [kept.id, gone.id]) == {kept.id: (2, False), gone.id: (2, True)}
    assert [m.id for m in tenant.call("memory_search", q=term).memories] == [kept.id]
    assert run_cleanup(backend).counts["repaired"] == 0


def test_a_tombstone_is_kept_within_its_retention_and_purged_after(backend, stream_drain):
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    memory = tenant.call("memory_add", content="soon deleted").memory
    tenant.call("memory_delete", id=memory.id)
    stream_drain.drain(backend)
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert index_state(backend, scope, [memory.id]) == {memory.id: (2, True)}

    kept = run_cleanup(backend)
    assert index_state(backend, scope, [memory.id]) == {memory.id: (2, True)}
    purged = run_cleanup(backend, CleanupOptions(tombstone_retention=timedelta(0)))

    assert kept.counts["purged"] == 0
    assert purged.counts["purged"] == 1
    assert index_state(backend, scope, [memory.id]) == {}


def test_a_memory_deleted_while_the_index_was_away_is_unsearchable_after_cleanup(own_stack, backend, stream_drain):
    from tests.support.aws_stack import free_port

    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    term = "gone" + uuid.uuid4().hex[:8]
    memory = tenant.call("memory_add", content=f"deleted during an outage {term}").memory
    stream_drain.drain(backend)
    # Given the delete's stream record reaches an indexer that cannot reach OpenSearch, until given up
    tenant.call("memory_delete", id=memory.id)
    dead = AwsBackend.from_settings(
        own_stack.model_copy(update={"opensearch_endpoint": f"http://127.0.0.1:{free_port()}"})
    )
    stream_drain.drain(dead)
    dead.close()
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert index_state(backend, scope, [memory.id]) == {memory.id: (1, False)}

    summary = run_cleanup(backend)

    assert summary.counts["repaired"] >= 1
    assert index_state(backend, scope, [memory.id]) == {memory.id: (2, True)}
    assert tenant.call("memory_search", q=term).memories == []


def test_an_index_ahead_of_the_store_is_counted_and_left_alone(backend):
    # Given the index holds version 3 of a record the store has at version 1 (e.g. a table restore)
    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    memory = tenant.call("memory_add", content="restored from a backup").memory
    scope = Scope(tenant.workspace_id, tenant.project.id)
    stored = backend.store.get(scope, memory.id)
    backend.index.upsert(stored.model_copy(update={"version": 3}))

    # When the cleanup job runs a whole cycle
    counts = whole_cycle(backend)

    assert counts["conflicts"] >= 1
    assert index_state(backend, scope, [memory.id]) == {memory.id: (3, False)}


def test_a_document_of_an_older_analysis_is_reindexed_by_the_cleanup_job(backend):
    # Given a memory whose index document was written before stems existed (layout 1: words as
    # written only, no analysis recorded), at the record's own version
    from mnemo.backends.aws.mapping import document

    tenant = new_tenant(Service(backend, embedder=default_embedder()))
    memory = tenant.call("memory_add", content="Deploys freeze on Fridays").memory
    scope = Scope(tenant.workspace_id, tenant.project.id)
    stored = backend.store.get(scope, memory.id)
    old = {k: v for k, v in document(stored).items() if not k.endswith("_stems") and k != "analysis"}
    backend.index.ensure()  # (the index and its alias: the stream's first write would make them)
    backend.index.client.index(
        index=backend.index.alias,
        id=doc_id(scope.project_id, memory.id),
        body=old,
        routing=scope.project_id,
        version=stored.version,
        version_type="external_gte",
        refresh="true",
    )
    # it still matches as written, but not through a stem — in the index itself (a search that
    # merges the recent changes would match the fresh record with the current analysis)
    alone = AwsBackend(backend.dynamodb, OpenSearchIndex(backend.index.client, backend.index.alias), backend.tables)
    alone.index.read_your_writes(alone.store, window_s=0, first_page=1)
    index_only = Tenant(Service(alone, embedder=default_embedder()), tenant.workspace_id, tenant.project, tenant.admin)
    assert index_only.call("search_memory", query="deploys").matched is True
    assert index_only.call("search_memory", query="deployments").matched is False

    # When the cleanup job runs a whole cycle
    counts = whole_cycle(backend)

    # Then the document was re-analysed, at the same version, and matches through its stems
    assert counts["reindexed"] >= 1
    assert index_state(backend, scope, [memory.id]) == {memory.id: (stored.version, False)}
    assert [r.reference for r in index_only.call("search_memory", query="deployments").results] == [memory.id]
