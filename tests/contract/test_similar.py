"""memory_add answers ``similar``: at most 3 memories of the same project, visible to the caller, on
the same subject (a share of the new memory's meaningful words, service/similar.py), never the
memory itself nor the exact duplicate dedup catches; nothing is changed (docs/contract.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from mnemo.embedding import default_embedder
from mnemo.errors import InvalidRequest
from mnemo.models.common import utc_now
from mnemo.ports import Ports, Scope
from mnemo.service.pipeline import Service
from mnemo.service.similar import MAX_SIMILAR

from tests.contract.conftest import Indexer, Tenant, new_tenant
from tests.contract.test_read_your_writes import expect_lag


def add(tenant: Tenant, content: str, caller=None, **fields):
    return tenant.call("memory_add", caller, content=content, **fields)


def memories(tenant: Tenant) -> list[tuple[str, str, int]]:
    return sorted((m.id, m.content, m.version) for m in tenant.call("memory_search", limit=100).memories)


def test_a_memory_on_the_same_subject_is_listed_and_left_unchanged(tenant):
    old = add(tenant, "We deploy to production on Fridays after the weekly review.").memory
    add(tenant, "The office plants are watered on Mondays.")
    before = memories(tenant)

    new = add(tenant, "Deploys to production moved to Tuesdays, after the weekly review.")

    assert [s.reference for s in new.similar] == [old.id]
    (found,) = new.similar
    assert found.content == old.content
    assert 0 < found.similarity <= 1
    assert memories(tenant) == sorted([*before, (new.memory.id, new.memory.content, 1)])  # nothing else changed


def test_nothing_on_the_subject_lists_nothing(tenant):
    add(tenant, "The office plants are watered on Mondays.")

    assert add(tenant, "Deploys to production moved to Tuesdays.").similar == []


def test_the_new_memory_itself_and_its_exact_duplicate_are_never_listed(tenant):
    first = add(tenant, "Release branches are named release/YYYY-MM.").memory

    again = add(tenant, "release branches are named  RELEASE/yyyy-mm.")
    twin = add(tenant, "Release branches are named release/YYYY-MM.", allow_duplicate=True)

    assert again.deduplicated and again.memory.id == first.id and again.similar == []
    assert twin.memory.id != first.id
    assert twin.similar == []


def test_at_most_three_most_similar_first(tenant):
    stored = [
        add(tenant, f"The nightly backup job of the billing database runs at 0{h}:00 UTC.").memory for h in range(5)
    ]

    new = add(tenant, "The nightly backup job of the billing database now runs at 04:30 UTC.")

    assert len(new.similar) == MAX_SIMILAR
    assert {s.reference for s in new.similar} <= {m.id for m in stored}
    scores = [s.similarity for s in new.similar]
    assert scores == sorted(scores, reverse=True)


def test_another_project_or_workspace_is_never_listed(tenant, svc):
    tenant.call("admin_project_create", slug="other")
    add(tenant, "We deploy to production on Fridays after the weekly review.", project="other")
    stranger = new_tenant(svc, "stranger")
    add(stranger, "We deploy to production on Fridays after the weekly review.")

    new = add(tenant, "Deploys to production moved to Tuesdays, after the weekly review.")

    assert new.similar == []
    # the same add in the other project lists that project's memory
    assert (
        len(add(tenant, "Deploys to production moved to Tuesdays, after the weekly review.", project="other").similar)
        == 1
    )


def test_a_memory_of_a_team_the_key_cannot_see_is_never_listed(tenant):
    hidden = add(tenant, "We deploy to production on Fridays after the weekly review.", team_id="sre").memory
    key = tenant.key(["memory:read", "memory:write"], team_ids=["web"])

    new = add(tenant, "Deploys to production moved to Tuesdays, after the weekly review.", key)

    assert new.similar == []
    seen_by_admin = add(tenant, "Deploys to production moved to Tuesdays after the review.").similar
    assert hidden.id in {s.reference for s in seen_by_admin}


def test_a_refused_add_changes_nothing_and_lists_nothing(tenant):
    add(tenant, "We deploy to production on Fridays after the weekly review.")
    before = memories(tenant)

    with pytest.raises(InvalidRequest):
        add(tenant, "Deploys moved to Tuesdays, after the weekly review.", expires_at=utc_now() - timedelta(days=1))

    assert memories(tenant) == before


def test_similar_is_in_the_answer_of_an_idempotent_replay(tenant):
    old = add(tenant, "We deploy to production on Fridays after the weekly review.").memory

    first = add(tenant, "Deploys to production moved to Tuesdays.", idempotency_key="k-1")
    replay = add(tenant, "Deploys to production moved to Tuesdays.", idempotency_key="k-1")

    assert [s.reference for s in first.similar] == [old.id]
    assert replay.model_dump(mode="json") == first.model_dump(mode="json")


def test_the_agent_supersedes_what_similar_shows_and_a_superseded_memory_is_not_listed_again(tenant):
    old = add(tenant, "We deploy to production on Fridays after the weekly review.").memory
    new = add(tenant, "Deploys to production moved to Tuesdays, after the weekly review.")
    assert [s.reference for s in new.similar] == [old.id]

    tenant.call("memory_update", id=new.memory.id, supersedes=[s.reference for s in new.similar])
    later = add(tenant, "Production deploys after the weekly review need a second reviewer.")

    assert [s.reference for s in later.similar] == [new.memory.id]


def test_while_the_index_lags_a_memory_just_saved_or_changed_is_seen_as_it_is_now(ports: Ports, indexer: Indexer):
    # a plain Service: nothing brings the writes to the index on AWS until the test catches up
    lagging = new_tenant(Service(ports, embedder=default_embedder()))
    scope = Scope(lagging.workspace_id, lagging.project.id)
    old = add(lagging, "We deploy to production on Fridays after the weekly review.").memory
    expect_lag(ports, scope, old.id, 1)

    new = add(lagging, "Deploys to production moved to Tuesdays, after the weekly review.")
    assert [s.reference for s in new.similar] == [old.id]  # the table's recent changes, merged

    indexer.catch_up()
    lagging.call("memory_update", id=old.id, content="The office plants are watered on Mondays.")
    expect_lag(ports, scope, old.id, 2)
    again = add(lagging, "Production deploys happen after the weekly review, never on Fridays.")
    assert [s.reference for s in again.similar] == [new.memory.id]  # not the stale words of the old version


def test_a_memory_the_add_supersedes_is_not_listed(tenant):
    old = add(tenant, "We deploy to production on Fridays after the weekly review.").memory

    new = add(tenant, "Deploys to production moved to Tuesdays, after the weekly review.", supersedes=[old.id])

    assert new.similar == []
