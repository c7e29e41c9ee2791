"""memory_add stores a memory once: the same content (as the index normalises it), kind, path and
team as a live memory of the project returns that memory, ``deduplicated: true`` (docs/retrieval.md),
on every backend — also when identical adds race."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from mnemo.embedding import default_embedder
from mnemo.models.common import utc_now
from mnemo.service.pipeline import Service

from tests.contract.conftest import Tenant, atomic_per_item


def add(tenant, content, caller=None, **fields):
    return tenant.call("memory_add", caller, content=content, **fields)


def listed(tenant):
    return [m.id for m in tenant.call("memory_search", limit=100).memories]


def test_the_same_memory_added_twice_is_stored_once(tenant):
    first = add(tenant, "Deploys freeze on Fridays", kind="decision", path="ops/release", tags=["ops"])
    again = add(tenant, "  deploys   FREEZE on fridays ", kind="Decision", path="OPS/release", tags=["other"])

    assert (first.deduplicated, again.deduplicated) == (False, True)
    assert again.memory == first.memory  # that memory, unchanged (its tags are not merged)
    assert listed(tenant) == [first.memory.id]
    assert again.model_dump(mode="json")["deduplicated"] is True


def test_a_different_kind_path_team_or_word_is_another_memory(tenant):
    base = add(tenant, "Deploys freeze on Fridays", kind="decision", path="ops").memory
    others = [
        add(tenant, "Deploys freeze on Fridays", kind="fact", path="ops"),
        add(tenant, "Deploys freeze on Fridays", kind="decision", path="ops/2"),
        add(tenant, "Deploys freeze on Fridays", kind="decision", path="ops", team_id="sre"),
        add(tenant, "Deploys freeze on Fridays!", kind="decision", path="ops"),
        add(tenant, "Deploy freezes on Fridays", kind="decision", path="ops"),  # same stems, other words
    ]
    assert not any(o.deduplicated for o in others)
    assert len({base.id, *(o.memory.id for o in others)}) == 6


def test_allow_duplicate_stores_a_second_memory(tenant):
    first = add(tenant, "standup at 9:15").memory
    second = add(tenant, "standup at 9:15", allow_duplicate=True)

    assert second.deduplicated is False
    assert second.memory.id != first.id
    assert sorted(listed(tenant)) == sorted([first.id, second.memory.id])
    # and a third plain add finds the first one
    assert add(tenant, "standup at 9:15").memory.id == first.id


def test_an_updated_memory_takes_its_claim_along_and_a_deleted_one_releases_it(tenant):
    memory = add(tenant, "the launch is in March").memory
    tenant.call("memory_update", id=memory.id, content="the launch is in April")

    assert add(tenant, "the launch is in April").memory.id == memory.id  # its new content is it
    march = add(tenant, "the launch is in March")  # its old content is free again
    assert march.deduplicated is False
    tenant.call("memory_delete", id=march.memory.id)
    assert add(tenant, "the launch is in March").deduplicated is False


def test_an_update_into_another_memorys_content_keeps_both(tenant):
    a = add(tenant, "alpha note").memory
    b = add(tenant, "beta note").memory
    tenant.call("memory_update", id=b.id, content="alpha note")

    assert sorted(listed(tenant)) == sorted([a.id, b.id])
    assert add(tenant, "alpha note").memory.id == a.id  # the first keeps the claim
    tenant.call("memory_delete", id=a.id)
    tenant.call("memory_update", id=b.id, tags=["x"])  # a claim moves only with a change of content
    assert add(tenant, "alpha note").deduplicated is False  # b never held it: a new memory


def test_an_expired_memory_is_not_a_duplicate(tenant):
    # far enough ahead that a slow add (a loaded machine, moto) still stores it unexpired; then
    # the test waits until it has expired, however long the add took
    soon = utc_now() + timedelta(seconds=2)
    old = add(tenant, "temporary pass code 1234", expires_at=soon.isoformat()).memory
    time.sleep(max(0.0, (soon - utc_now()).total_seconds()) + 0.1)

    fresh = add(tenant, "temporary pass code 1234")

    assert fresh.deduplicated is False
    assert fresh.memory.id != old.id
    assert add(tenant, "temporary pass code 1234").memory.id == fresh.memory.id


def test_an_idempotent_retry_of_a_deduplicated_add_answers_the_same(tenant):
    first = add(tenant, "retry me").memory
    retried = [add(tenant, "retry me", idempotency_key="k-1") for _ in range(2)]

    assert [r.deduplicated for r in retried] == [True, True]
    assert {r.memory.id for r in retried} == {first.id}


def test_identical_adds_racing_store_one_memory(tenant, request):
    # Given eight callers adding the same memory at once (on AWS with moto's calls serialised, as
    # DynamoDB applies a transaction atomically and moto does not across threads)
    ports = atomic_per_item(tenant.svc.ports, request)
    tenant = Tenant(Service(ports, embedder=default_embedder()), tenant.workspace_id, tenant.project, tenant.admin)
    barrier = threading.Barrier(8)
    results, errors = [], []

    def racer(i: int) -> None:
        barrier.wait()
        try:
            results.append(add(tenant, "raced content", kind="fact", tags=[f"t{i}"]))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Then one memory was stored, every caller got it, and all but one were told so
    assert errors == []
    assert len({r.memory.id for r in results}) == 1
    assert sum(not r.deduplicated for r in results) == 1
    assert len(listed(tenant)) == 1
