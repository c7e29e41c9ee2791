"""The AWS backend's own guarantees, beyond the shared contract suite: the write path when
OpenSearch is down, version ordering in the index, the DynamoDB token bucket under a race, and
what one tool call costs in requests. moto server + a real OpenSearch node (see tests/conftest.py)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from mnemo.backends.aws import AwsBackend
from mnemo.backends.aws.index import OpenSearchIndex
from mnemo.backends.aws.items import REPAIR_INDEX
from mnemo.backends.aws.limiter import DynamoRateLimiter
from mnemo.embedding import default_embedder
from mnemo.models.common import utc_now
from mnemo.ports import IndexQuery, MemoryFilter, Scope
from mnemo.service.pipeline import Service
from mnemo.text import query_terms

from tests.contract.conftest import new_tenant
from tests.support.aws_stack import RequestCounter, SerialisedDynamoDB, free_port

pytestmark = [pytest.mark.slow, pytest.mark.aws]


def _search(backend, scope, q):
    query = IndexQuery(scope, query_terms(q), "all", MemoryFilter(now=utc_now()), 10)
    return [hit.record for hit in backend.index.search(query)]


def test_writes_succeed_with_opensearch_down_and_only_similar_asks_it(aws_stack, own_backend):
    # Given the index client points at a loopback port nobody listens on (the shared node stays up)
    dead = aws_stack.model_copy(update={"opensearch_endpoint": f"http://127.0.0.1:{free_port()}"})
    broken = AwsBackend.from_settings(dead)
    tenant = new_tenant(Service(broken, embedder=default_embedder()))
    counter = RequestCounter(broken)

    # When a memory is added, updated, another added and deleted, a third added and forgotten
    added = tenant.call("memory_add", content="durable while the index is down")
    memory = added.memory
    tenant.call("memory_update", id=memory.id, content="durable and updated while the index is down")
    gone = tenant.call("memory_add", content="deleted while the index is down").memory
    tenant.call("memory_delete", id=gone.id)
    forgotten = tenant.call("memory_add", content="forgotten while the index is down").memory
    tenant.call("forget", reference=forgotten.id)

    # Then every call succeeded; the only OpenSearch requests were the three adds' similar
    # searches (refused at the port: the adds list nothing), and the store holds the outcome
    assert added.similar == []
    assert counter.opensearch == {"POST _search": 3}
    scope = Scope(tenant.workspace_id, tenant.project.id)
    assert own_backend.store.get(scope, memory.id).content == "durable and updated while the index is down"
    assert own_backend.store.get(scope, gone.id) is None
    assert own_backend.store.get(scope, forgotten.id) is None
    broken.close()


def test_repair_marks_live_in_a_sparse_index(aws_stack, own_backend):
    # Given one record indexed normally
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    fine = tenant.call("memory_add", content="indexed fine").memory

    # When the repair index is read
    out = own_backend.dynamodb.query(
        TableName=aws_stack.memories_table,
        IndexName=REPAIR_INDEX,
        KeyConditionExpression="repair_pk = :p",
        ExpressionAttributeValues={":p": {"S": "REPAIR#0"}},
    )

    # Then the healthy record is not in it
    assert fine.id not in {item["id"]["S"] for item in out["Items"]}


def _index_alone(backend, scope, q):
    """A search of the index itself, without the store's recent changes merged in."""
    alone = OpenSearchIndex(backend.index.client, backend.index.alias)
    query = IndexQuery(scope, query_terms(q), "all", MemoryFilter(now=utc_now()), 10)
    return [hit.record for hit in alone.search(query)]


def test_a_late_older_write_never_overwrites_a_newer_one_in_the_index(own_backend, stream_drain):
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    v1 = tenant.call("memory_add", content="alpha original").memory
    v2 = tenant.call("memory_update", id=v1.id, content="beta replacement").memory
    stream_drain.drain(own_backend)  # the indexer delivered both versions
    scope = Scope(tenant.workspace_id, tenant.project.id)
    stale = own_backend.store.get(scope, v1.id).model_copy(update={"content": "alpha original", "version": 1})

    # When the version-1 document arrives late (a retried or reordered index write)
    own_backend.index.upsert(stale)
    own_backend.index.client.indices.refresh(index=own_backend.index.alias)

    # Then the index itself still holds version 2
    assert [r.version for r in _index_alone(own_backend, scope, "beta")] == [v2.version]
    assert _index_alone(own_backend, scope, "alpha") == []


def test_a_late_write_after_a_delete_does_not_bring_the_memory_back(own_backend, stream_drain):
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    memory = tenant.call("memory_add", content="gamma to delete").memory
    scope = Scope(tenant.workspace_id, tenant.project.id)
    record = own_backend.store.get(scope, memory.id)
    tenant.call("memory_delete", id=memory.id)
    stream_drain.drain(own_backend)  # the delete's tombstone (version 2) is in the index

    # When the version-1 document is written again after the delete's tombstone (version 2)
    own_backend.index.upsert(record)
    own_backend.index.client.indices.refresh(index=own_backend.index.alias)

    # Then it stays unsearchable, in the index itself and through the service
    assert _index_alone(own_backend, scope, "gamma") == []
    assert tenant.call("memory_search", q="gamma").memories == []


def test_twenty_four_racing_callers_take_exactly_the_buckets_capacity(aws_stack, own_backend):
    """moto does not apply conditional writes atomically across threads, while real DynamoDB is
    atomic per item: this test serialises moto's calls with a lock taken in botocore's
    ``before-call`` and released in ``after-call`` / ``after-call-error`` (SerialisedDynamoDB).
    Each thread has its own limiter (as separate Lambda instances would), sharing the client."""
    SerialisedDynamoDB(own_backend.dynamodb)
    limit, callers = 10, 24
    start = threading.Barrier(callers)
    results: list[bool] = []
    lock = threading.Lock()

    def call() -> None:
        limiter = DynamoRateLimiter(own_backend.dynamodb, aws_stack.rate_table)
        start.wait()
        allowed = limiter.acquire("ws_race", "write", limit).allowed
        with lock:
            results.append(allowed)

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert results.count(True) == limit
    assert len(results) == callers


def test_a_rejected_client_costs_no_dynamodb_request_until_its_retry_time(own_backend):
    counter = RequestCounter(own_backend)
    limiter = own_backend.limiter
    for _ in range(3):
        assert limiter.acquire("ws_hammer", "search", 3).allowed
    rejected = limiter.acquire("ws_hammer", "search", 3)
    assert not rejected.allowed and rejected.retry_after_s >= 1
    counter.reset()

    # When the client hammers on
    again = [limiter.acquire("ws_hammer", "search", 3) for _ in range(20)]

    # Then every call is refused from memory, with a consistent retry hint, at no DynamoDB cost
    assert not any(d.allowed for d in again)
    assert all(1 <= d.retry_after_s <= rejected.retry_after_s for d in again)
    assert counter.dynamodb == {}


def test_a_decision_costs_at_most_two_conditional_updates_and_no_read(own_backend):
    counter = RequestCounter(own_backend)
    limiter = own_backend.limiter
    for _ in range(6):
        counter.reset()
        limiter.acquire("ws_cost", "write", 5)
        assert set(counter.dynamodb) <= {"UpdateItem"}
        assert counter.dynamodb["UpdateItem"] <= 2


def test_request_costs_per_tool_call(own_backend, stream_drain, capsys):
    """What each tool call costs against DynamoDB and OpenSearch, once warm (printed for docs/aws.md),
    and what the stream indexer then spends per change."""
    counter = RequestCounter(own_backend)
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    tenant.call("memory_add", content="warm up the index")
    tenant.call("memory_search", q="warm")
    stream_drain.drain(own_backend)
    tenant.call("memory_get", id=tenant.call("memory_search", q="warm").memories[0].id)  # tenant cache warm again
    costs = {}

    def measure(name, tool, **arguments):
        counter.reset()
        result = tenant.call(tool, **arguments)
        costs[name] = (dict(counter.dynamodb), dict(counter.opensearch))
        return result

    memory = measure("memory_add", "memory_add", content="cost of a call").memory
    measure("memory_add (idempotent, first)", "memory_add", content="once", idempotency_key="c-1")
    measure("memory_add (idempotent, replay)", "memory_add", content="once", idempotency_key="c-1")
    measure("memory_get", "memory_get", id=memory.id)
    measure("memory_update", "memory_update", id=memory.id, content="cost of an update")
    measure("memory_search (q)", "memory_search", q="cost")
    measure("memory_search (recent)", "memory_search", q="")
    olds = [tenant.call("memory_add", content=f"superseded soon {i}").memory.id for i in range(2)]
    measure("memory_add, supersedes 2", "memory_add", content="cost of superseding", supersedes=olds)
    measure("memory_delete", "memory_delete", id=memory.id)
    counter.reset()
    read = stream_drain.drain(own_backend)
    indexing = dict(counter.opensearch)
    with capsys.disabled():
        print("\nrequests per tool call (DynamoDB | OpenSearch):")
        for name, (ddb, osr) in costs.items():
            print(f"  {name:34} {ddb} | {osr}")
        print(f"  the stream indexer, {read} stream records: {indexing}")

    def similar_read(cost):
        """A write's ``similar`` (asked once the memory is stored): the index's search merged with
        the change log (a Query of its window's partition, two when it spans a 5-minute boundary,
        and the changed items by key). Popped from ``cost``, which keeps the write's own requests."""
        ddb, osr = cost
        assert osr == {"POST _search": 1}
        assert ddb.pop("BatchGetItem") == 1
        return ddb.pop("Query") - 1

    # A write: the rate bucket, its change log entry and one record write (the memory and its
    # dedup claim in one transaction); then its similar read
    assert similar_read(costs["memory_add"]) in (0, 1)
    assert costs["memory_add"][0] == {"UpdateItem": 1, "PutItem": 1, "TransactWriteItems": 1}
    # superseding: each id read, its change log entry and its kept version (a put and a Query of
    # the memory's versions, the bound); the marks in the memory's transaction
    assert similar_read(costs["memory_add, supersedes 2"]) in (2, 3)
    assert costs["memory_add, supersedes 2"][0] == {
        "UpdateItem": 1,
        "GetItem": 2,
        "PutItem": 5,
        "TransactWriteItems": 1,
    }
    # a new content moves its claim: the put and the claims' delete and put in one transaction
    # (and the version it replaces kept: a put and a Query of the memory's versions)
    assert costs["memory_update"] == (
        {"UpdateItem": 1, "GetItem": 1, "PutItem": 2, "Query": 1, "TransactWriteItems": 1},
        {},
    )
    # the delete marker's update and the claim's delete in one transaction; then its history erased
    # (a Query of its versions, a BatchWriteItem of the one the update kept)
    assert costs["memory_delete"] == (
        {"UpdateItem": 1, "GetItem": 1, "PutItem": 1, "TransactWriteItems": 1, "Query": 1, "BatchWriteItem": 1},
        {},
    )
    # the index is read by the searches and by a stored memory's similar only; never written
    reads = {"memory_search (q)", "memory_add", "memory_add (idempotent, first)", "memory_add, supersedes 2"}
    assert all(osr == {} for name, (_, osr) in costs.items() if name not in reads)
    # A search: the rate bucket, a consistent Query of the change log's partition of the window
    # (two when the window spans a 5-minute boundary), the changed items by key, one search
    search, search_os = costs["memory_search (q)"]
    assert search_os == {"POST _search": 1}
    assert search.pop("Query") in (1, 2) and search == {"UpdateItem": 1, "BatchGetItem": 1}
    # A listing: the same reads of the changes, and a Query of the recent GSI
    listing, _ = costs["memory_search (recent)"]
    assert listing.pop("Query") in (2, 3) and listing == {"UpdateItem": 1, "BatchGetItem": 1}
    assert costs["memory_add (idempotent, replay)"] == ({"UpdateItem": 1, "PutItem": 1}, {})
    # Each of the nine changes (two adds, an update, a delete; two more adds, one superseding them,
    # and its two marks) is indexed exactly once, by the stream
    # (and the writer asks whether a mapping change is under way at most every LAYOUT_TTL_S)
    assert indexing.pop("HEAD _alias", 0) <= 1
    assert indexing == {"PUT _doc": 9}


def test_expired_records_are_hidden_even_though_moto_never_deletes_them(own_backend):
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    memory = tenant.call("memory_add", content="ttl fact", expires_at=utc_now() + timedelta(seconds=30)).memory
    later = utc_now() + timedelta(minutes=1)
    scope = Scope(tenant.workspace_id, tenant.project.id)

    assert own_backend.store.get(scope, memory.id) is not None  # still stored: TTL deletes late
    assert own_backend.store.recent(scope, MemoryFilter(now=later), 10) == []
    query = IndexQuery(scope, query_terms("ttl"), "all", MemoryFilter(now=later), 10)
    assert own_backend.index.search(query) == []


def test_every_query_is_confined_to_its_workspace_and_project(own_backend):
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    tenant.call("memory_add", content="confined secret")
    elsewhere = Scope(tenant.workspace_id, "prj_00000000000000000000000000")

    assert _search(own_backend, elsewhere, "confined") == []
    assert isinstance(own_backend.index, OpenSearchIndex)


def test_a_search_with_opensearch_down_is_503_with_a_retry_hint(aws_stack):
    from mnemo.api.errors import as_mnemo_error
    from mnemo.errors import IndexUnavailable

    dead = aws_stack.model_copy(update={"opensearch_endpoint": f"http://127.0.0.1:{free_port()}"})
    broken = AwsBackend.from_settings(dead)
    tenant = new_tenant(Service(broken, embedder=default_embedder()))

    with pytest.raises(IndexUnavailable) as raised:
        tenant.call("memory_search", q="anything")

    answer = as_mnemo_error(raised.value)
    assert (answer.status, answer.code) == (503, "unavailable")
    assert answer.retry_after and answer.retry_after >= 1
    broken.close()


def test_a_limits_change_is_seen_at_once_by_the_instance_that_made_it(own_backend):
    from mnemo.models.records import RateLimits

    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    assert own_backend.tenants.get_workspace(tenant.workspace_id).limits is None  # now cached

    own_backend.tenants.set_limits(tenant.workspace_id, RateLimits(search=7, write=3))

    assert own_backend.tenants.get_workspace(tenant.workspace_id).limits == RateLimits(search=7, write=3)


def test_warm_calls_read_their_workspace_and_project_from_the_process_cache(own_backend):
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    tenant.call("memory_search", q="")
    counter = RequestCounter(own_backend)

    tenant.call("memory_search", q="")

    assert "GetItem" not in counter.dynamodb


def test_racing_retries_with_one_idempotency_key_write_exactly_one_memory(aws_stack, own_backend):
    """Eight threads send the same memory_add with the same key at once. moto's calls are
    serialised (SerialisedDynamoDB, as in the bucket race) to stand in for DynamoDB's per-item
    atomicity; Powertools' conditional claim must then let exactly one add run."""
    from mnemo.errors import Conflict

    SerialisedDynamoDB(own_backend.dynamodb)
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    callers = 8
    start = threading.Barrier(callers)
    outcomes: list[object] = []
    lock = threading.Lock()

    def call() -> None:
        start.wait()
        try:
            outcome: object = tenant.call("memory_add", content="exactly once", idempotency_key="race-1").memory.id
        except Conflict:
            outcome = "conflict"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    ids = {o for o in outcomes if o != "conflict"}
    assert len(ids) == 1
    assert [m.id for m in tenant.call("memory_search", q="").memories] == list(ids)


def test_an_index_of_the_first_layout_gets_the_new_fields_in_place(own_backend, stream_drain):
    """An existing deployment keeps its index and alias: the first document the strict mapping
    refuses for want of the stems fields adds them (PUT <alias>/_mapping), and is written — by
    the stream indexer, the one writer of the index."""
    from mnemo.backends.aws.mapping import INDEX_VERSION, LAYOUT, MAPPINGS

    client = own_backend.index.client
    alias = f"layout-one-{utc_now().strftime('%H%M%S%f')}"
    index = f"{alias}-{INDEX_VERSION}"
    new_fields = {"content_stems", "tags_stems", "path_stems", "analysis", "embedding_model", "embedding_256"}
    layout_one = {
        "dynamic": "strict",
        "properties": {k: v for k, v in MAPPINGS["properties"].items() if k not in new_fields},
    }
    client.indices.create(index=index, body={"mappings": layout_one, "aliases": {alias: {"is_write_index": True}}})
    counter = RequestCounter(own_backend)
    try:
        opensearch = OpenSearchIndex(client, alias)
        backend = AwsBackend(own_backend.dynamodb, opensearch, own_backend.tables)
        tenant = new_tenant(Service(backend, embedder=default_embedder()))
        assert "content_stems" not in client.indices.get_mapping(index=index)[index]["mappings"]["properties"]
        stream_drain.drain(own_backend)  # what the session wrote before goes to its own index
        # When the first memory is added by the new code and the indexer delivers it
        memory = tenant.call("memory_add", content="Deploys freeze on Fridays").memory
        counter.reset()
        stream_drain.drain(backend)
        # Then the same index has the new fields and says so, and the document was written
        mapping = client.indices.get_mapping(index=index)[index]["mappings"]
        assert mapping["_meta"] == {"layout": LAYOUT, "vectors": "exact"}
        assert new_fields <= set(mapping["properties"])
        assert counter.opensearch.get("PUT _mapping") == 1
        assert [r.reference for r in tenant.call("search_memory", query="deployments").results] == [memory.id]
        # and a later write costs no mapping request
        tenant.call("memory_add", content="Freezes lift on Mondays")
        counter.reset()
        stream_drain.drain(backend)
        assert counter.opensearch.pop("HEAD _alias", 0) <= 1  # a mapping change under way? (LAYOUT_TTL_S)
        assert counter.opensearch == {"PUT _doc": 1}
    finally:
        client.indices.delete(index=index, ignore_unavailable=True)


def _lose_the_first_answer(backend: AwsBackend, operation: str, meanwhile=None) -> list[int]:
    """Make the first ``operation`` reach DynamoDB and commit, then fail as a dropped connection
    would, so botocore retries it: a write whose answer was lost. ``meanwhile(body)``, given the
    request's JSON, runs between the commit and the retry. Returns the statuses seen."""
    import json
    import urllib.request

    from botocore.exceptions import ConnectionClosedError

    statuses: list[int] = []

    def before_send(request, **_):
        if statuses:
            return None
        sent = urllib.request.Request(request.url, data=request.body, headers=dict(request.headers), method="POST")
        with urllib.request.urlopen(sent, timeout=10) as reply:  # it commits here …
            statuses.append(reply.status)
        if meanwhile is not None:
            meanwhile(json.loads(request.body))
        raise ConnectionClosedError(endpoint_url=request.url)  # … and its answer is lost

    backend.dynamodb.meta.events.register(f"before-send.dynamodb.{operation}", before_send)
    return statuses


@pytest.mark.parametrize("operation", ["TransactWriteItems", "PutItem"])
def test_a_write_whose_answer_was_lost_is_retried_without_a_conflict(own_backend, operation):
    # Given a memory to update (a change of content is a transaction with its claim, of tags a put)
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    memory = tenant.call("memory_add", content="lost answers").memory
    statuses = _lose_the_first_answer(own_backend, operation)

    # When the write commits but its answer is lost, and the SDK sends it again
    change = {"content": "lost answers, two"} if operation == "TransactWriteItems" else {"tags": ["two"]}
    updated = tenant.call("memory_update", id=memory.id, **change).memory

    # Then the call succeeded once, at the next version, and the claims stayed right
    assert statuses == [200]
    assert updated.version == memory.version + 1
    assert tenant.call("memory_get", id=memory.id).memory.version == updated.version
    again = tenant.call("memory_add", content=updated.content)
    assert (again.deduplicated, again.memory.id) == (True, memory.id)


def test_an_add_whose_answer_was_lost_stores_one_memory(own_backend):
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    statuses = _lose_the_first_answer(own_backend, "TransactWriteItems")

    added = tenant.call("memory_add", content="added once, answered twice")

    assert statuses == [200]
    assert added.deduplicated is False
    assert [m.id for m in tenant.call("memory_search", limit=10).memories] == [added.memory.id]


def _new_memory(body) -> dict:
    """The memory item a ``TransactWriteItems`` of ``memory_add`` puts (its first action)."""
    return body["TransactItems"][0]["Put"]["Item"]


def test_an_add_whose_memory_got_its_vector_before_the_retry_answers_it(own_backend):
    # Given an add whose transaction commits, and before the SDK's retry the memory's vector is
    # written again at its version (as the cleanup job re-embeds a record)
    from mnemo.models.records import Embedding

    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    scope = Scope(tenant.workspace_id, tenant.project.id)

    def reembed(body):
        record = own_backend.store.get(scope, _new_memory(body)["id"]["S"])
        vector = Embedding.of(record.embedding.model, [0.5] * record.embedding.dim)
        assert own_backend.store.set_embedding(record.model_copy(update={"embedding": vector}))

    statuses = _lose_the_first_answer(own_backend, "TransactWriteItems", meanwhile=reembed)

    # When the retry finds the memory there (its condition fails)
    added = tenant.call("memory_add", content="landed, then re-embedded")

    # Then the add answers its memory (not a conflict), stored once, with its claim
    assert statuses == [200]
    assert added.deduplicated is False
    assert own_backend.store.get(scope, added.memory.id).content == "landed, then re-embedded"
    again = tenant.call("memory_add", content="landed, then re-embedded")
    assert (again.deduplicated, again.memory.id) == (True, added.memory.id)


def test_an_add_whose_committed_write_is_gone_before_the_retry_is_written_again(own_backend):
    # Given an add whose transaction commits and whose answer is lost, and whose writes are gone
    # again before the retry has been judged (moto's threaded server, undoing a failed transaction,
    # puts back a copy of the table taken before the write that had committed)
    tenant = new_tenant(Service(own_backend, embedder=default_embedder()))
    scope = Scope(tenant.workspace_id, tenant.project.id)
    table, client, rolled_back = own_backend.store.table, own_backend.dynamodb, []

    def roll_back(**_):
        # after the call (the retry's condition failed on the committed item), its items vanish
        if rolled_back or not pending:
            return
        rolled_back.append(True)
        for action in pending:
            item = action["Put"]["Item"]
            client.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})

    pending: list = []
    statuses = _lose_the_first_answer(
        own_backend, "TransactWriteItems", meanwhile=lambda body: pending.extend(body["TransactItems"])
    )
    client.meta.events.register("after-call.dynamodb.TransactWriteItems", roll_back)

    # When the add is made
    added = tenant.call("memory_add", content="landed, then rolled back")

    # Then it answers a memory, written again: stored once, with its claim
    assert statuses == [200] and rolled_back
    assert added.deduplicated is False
    assert own_backend.store.get(scope, added.memory.id).content == "landed, then rolled back"
    again = tenant.call("memory_add", content="landed, then rolled back")
    assert (again.deduplicated, again.memory.id) == (True, added.memory.id)
