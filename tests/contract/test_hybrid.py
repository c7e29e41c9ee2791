"""Recall by meaning as well as words (docs/retrieval.md, "Meaning"), on every backend: the same
memories, the same order, the same explanations. The embedder is the packaged static model
(``mnemo.embedding.static``) unless a test plugs another through the ``Embedder`` port."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from mnemo.embedding import build_embedder, default_embedder
from mnemo.errors import EmbedderUnavailable, InvalidRequest
from mnemo.models.common import utc_now
from mnemo.ports import Ports
from mnemo.service.cleanup import CleanupOptions, run_cleanup
from mnemo.service.pipeline import Service
from mnemo.service.retrieval.candidates import MIN_SIMILARITY

from tests.contract.conftest import Tenant, new_tenant

ALLERGY = "Bob is allergic to peanuts"
#: shares no word with ALLERGY (nor with the others below)
ASKED = "who has nut allergies"
OTHERS = ["The kitchen closes at 3pm", "Deploys freeze on Fridays", "The VPN certificate expires in March"]


def add(tenant: Tenant, content: str, caller: Any = None, **fields: Any) -> Any:
    return tenant.call("memory_add", caller, content=content, **fields).memory


def refs(result: Any) -> list[str]:
    return [r.reference for r in result.results]


class Failing:
    """An embedder that is down."""

    model = "wordllama-l2_supercat-256-int8"
    dim = 256

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbedderUnavailable("down")


class Renamed:
    """The static model under another name: to the service, another embedder."""

    model = "static-renamed"
    dim = 256

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return default_embedder().embed(texts)


def private(ports: Ports, request: pytest.FixtureRequest) -> Ports:
    """A backend of this test's own (a cleanup run walks every tenant of its backend)."""
    from mnemo.backends.sqlite import SqliteBackend

    if isinstance(ports, SqliteBackend):
        return ports
    from mnemo.backends.aws import AwsBackend, Tables
    from mnemo.backends.aws.clients import dynamodb_client
    from mnemo.local.tables import create_tables

    from tests.support.aws_stack import aws_settings

    shared = request.getfixturevalue("aws_stack")
    cfg = aws_settings(shared.dynamodb_endpoint_url, shared.opensearch_endpoint)
    create_tables(dynamodb_client(cfg), Tables.from_settings(cfg).by_logical_id())
    backend = AwsBackend.from_settings(cfg)

    def drop() -> None:
        backend.index.client.indices.delete(index=f"{cfg.opensearch_index}-*", ignore_unavailable=True)
        backend.close()

    request.addfinalizer(drop)
    return backend


def until_done(ports: Ports, embedder: Any, options: CleanupOptions | None = None) -> list[Any]:
    runs = []
    for _ in range(50):
        runs.append(run_cleanup(ports, options, embedder=embedder))
        if not runs[-1].more:
            return runs
    raise AssertionError("cleanup never finished")


# -- finding by meaning ---------------------------------------------------------------------


def test_recall_finds_by_meaning_a_memory_that_shares_no_word_with_the_query(tenant):
    target = add(tenant, ALLERGY)
    for content in OTHERS:
        add(tenant, content)

    hybrid = tenant.call("recall", query=ASKED, explain=True)
    lexical = tenant.call("recall", query=ASKED, mode="lexical")

    assert refs(hybrid) == [target.id]
    explanation = hybrid.results[0].explanation
    assert explanation.matched_by == "meaning" and explanation.matched_terms == []
    assert explanation.similarity > MIN_SIMILARITY
    assert "found by meaning only" in explanation.reason
    assert lexical.matched is False and lexical.no_match.cause == "no_term_matched"
    assert tenant.call("search_memory", query=ASKED).matched is False  # the strict tools stay strict
    assert tenant.call("memory_search", q=ASKED).memories == []


def test_words_and_meaning_together_rank_first_and_say_both(tenant):
    both = add(tenant, "The staging database is read-only on Sundays")
    words = add(tenant, "Database backups run nightly")
    add(tenant, "Lunch is served at noon")

    results = tenant.call("recall", query="weekend database access", explain=True).results

    assert {r.reference for r in results[:2]} == {both.id, words.id}
    by_id = {r.reference: r.explanation for r in results}
    assert by_id[both.id].matched_by == "both" and by_id[both.id].matched_terms == ["database"]
    assert "found by words and meaning" in by_id[both.id].reason
    assert results[0].score >= results[1].score
    lunch = [r for r in results if r.reference not in (both.id, words.id)]
    assert all(r.explanation.matched_by == "meaning" for r in lunch)  # below both: no word held


def test_semantic_mode_ranks_by_similarity_alone(tenant):
    target = add(tenant, ALLERGY)
    add(tenant, "Peanut butter is in the kitchen")
    for content in OTHERS:
        add(tenant, content)

    result = tenant.call("recall", query=ASKED, mode="semantic", explain=True)

    assert result.results[0].reference == target.id
    scores = [r.score for r in result.results]
    assert scores == sorted(scores, reverse=True) and min(scores) >= MIN_SIMILARITY
    assert all(r.explanation.similarity == pytest.approx(r.score, abs=1e-4) for r in result.results)
    assert {r.explanation.matched_by for r in result.results} == {"meaning"}
    nothing = tenant.call("recall", query="qwertyuiop", mode="semantic")
    assert nothing.matched is False and nothing.no_match.cause == "nothing_similar"


def test_recall_context_packs_what_meaning_found(tenant):
    target = add(tenant, ALLERGY)
    add(tenant, OTHERS[0])

    packed = tenant.call("recall_context", query=ASKED)

    assert packed.references == [target.id]
    assert ALLERGY in packed.context
    assert tenant.call("recall_context", query=ASKED, mode="lexical").references == []


# -- scoping: meaning never widens what a caller may see --------------------------------------


def test_filters_and_the_window_apply_to_what_meaning_finds(tenant):
    kept = add(tenant, ALLERGY, path="team/health", kind="fact")
    add(tenant, "Bob cannot eat peanuts at all", path="office/food", kind="note")

    by_path = tenant.call("recall", query=ASKED, path_filter="team/%", mode="semantic")
    by_kind = tenant.call("recall", query=ASKED, memory_type="fact", mode="semantic")
    later = tenant.call("recall", query=ASKED, updated_after=utc_now() + timedelta(hours=1), mode="semantic")

    assert refs(by_path) == [kept.id]
    assert refs(by_kind) == [kept.id]
    assert later.matched is False


def test_a_team_memory_stays_invisible_by_meaning_to_other_keys(tenant):
    writer = tenant.key(["memory:read", "memory:write"], team_ids=["red"])
    outsider = tenant.key(["memory:read"], team_ids=["blue"])
    secret = add(tenant, ALLERGY, writer, team_id="red")

    assert refs(tenant.call("recall", writer, query=ASKED)) == [secret.id]
    assert tenant.call("recall", outsider, query=ASKED).matched is False
    assert tenant.call("recall", outsider, query=ASKED, mode="semantic").matched is False
    assert tenant.call("recall_context", outsider, query=ASKED).references == []


def test_an_expired_memory_is_not_found_by_meaning(tenant):
    # a minute to live, so a loaded machine's slow first call still finds it; "later" is told, not waited
    memory = add(tenant, ALLERGY, expires_at=utc_now() + timedelta(seconds=60))
    assert refs(tenant.call("recall", query=ASKED, mode="semantic")) == [memory.id]

    later = utc_now() + timedelta(seconds=120)
    result = tenant.svc.invoke("recall", tenant.admin, {"query": ASKED, "mode": "semantic"}, now=later).result

    assert result.matched is False


def test_memories_of_another_project_are_not_found_by_meaning(tenant):
    other = new_tenant(tenant.svc, "other")
    add(other, ALLERGY)

    assert tenant.call("recall", query=ASKED).matched is False


# -- the vector follows the memory ------------------------------------------------------------


def test_an_update_of_the_content_moves_its_meaning_and_a_delete_removes_it(tenant):
    memory = add(tenant, ALLERGY)
    add(tenant, OTHERS[0])

    tenant.call("memory_update", id=memory.id, content="The VPN certificate expires in March")
    assert memory.id not in refs(tenant.call("recall", query=ASKED, mode="semantic"))
    assert refs(tenant.call("recall", query="VPN certificates", mode="semantic"))[0] == memory.id

    tenant.call("memory_update", id=memory.id, tags=["infra"])  # the content stays: so does its vector
    assert refs(tenant.call("recall", query="VPN certificates", mode="semantic"))[0] == memory.id

    tenant.call("memory_delete", id=memory.id)
    assert memory.id not in refs(tenant.call("recall", query="VPN certificates", mode="semantic"))


def test_the_stored_record_carries_its_vector_and_model(tenant):
    memory = add(tenant, ALLERGY)

    record = tenant.svc.ports.store.get(tenant.scope if hasattr(tenant, "scope") else _scope(tenant), memory.id)

    assert record.embedding is not None
    assert record.embedding.model == default_embedder().model and record.embedding.dim == default_embedder().dim
    assert record.embedding.vector == pytest.approx(default_embedder().embed([ALLERGY])[0], abs=1e-6)
    assert "embedding" not in tenant.call("memory_get", id=memory.id).memory.model_dump()


def _scope(tenant: Tenant) -> Any:
    from mnemo.ports import Scope

    return Scope(tenant.workspace_id, tenant.project.id)


# -- without an embedder, or with one that fails -----------------------------------------------


def test_without_an_embedder_hybrid_is_words_and_semantic_is_refused(ports):
    tenant = new_tenant(Service(ports, embedder=None))
    memory = add(tenant, "Database backups run nightly")

    result = tenant.call("recall", query="database", explain=True)

    assert refs(result) == [memory.id] and result.results[0].explanation.matched_by == "words"
    assert tenant.call("recall", query=ASKED).matched is False
    with pytest.raises(InvalidRequest, match="semantic"):
        tenant.call("recall", query=ASKED, mode="semantic")


def test_a_failing_embedder_never_fails_a_write_and_cleanup_embeds_it_later(ports, request):
    ports = private(ports, request)
    down = new_tenant(Service(ports, embedder=Failing()))
    memory = add(down, ALLERGY)

    # durable, found by its words; a semantic query cannot be answered, a hybrid one by words
    assert refs(down.call("recall", query="peanuts")) == [memory.id]
    with pytest.raises(EmbedderUnavailable):
        down.call("recall", query=ASKED, mode="semantic")
    up = Tenant(Service(ports, embedder=default_embedder()), down.workspace_id, down.project, down.admin)
    assert up.call("recall", query=ASKED).matched is False  # no vector yet

    marks = ports.maintenance.repair_marks(None, 100).items
    assert [m.memory_id for m in marks] == [memory.id]
    still_down = until_done(ports, Failing())
    assert sum(r.counts["embed_failed"] for r in still_down) >= 1
    assert [m.memory_id for m in ports.maintenance.repair_marks(None, 100).items] == [memory.id]  # kept

    runs = until_done(ports, default_embedder())

    assert sum(r.counts["embedded"] for r in runs) == 1
    assert ports.maintenance.repair_marks(None, 100).items == []
    assert refs(up.call("recall", query=ASKED)) == [memory.id]


@pytest.mark.parametrize("new_model", ["same dimension", "another dimension"])
def test_a_new_embedder_re_embeds_every_memory_through_bounded_resumable_cleanup(ports, request, new_model):
    ports = private(ports, request)
    tenant = new_tenant(Service(ports, embedder=default_embedder()))
    memories = [add(tenant, ALLERGY)] + [add(tenant, content) for content in OTHERS]
    # the static model renamed (256-d), or the local transformer (all-MiniLM-L6-v2, 384-d)
    renamed: Any = Renamed() if new_model == "same dimension" else build_embedder("minilm")
    moved = Tenant(Service(ports, embedder=renamed), tenant.workspace_id, tenant.project, tenant.admin)

    # reads never wait: until re-embedded, the other model's vectors are simply not compared
    assert moved.call("recall", query=ASKED, mode="semantic").matched is False
    assert refs(moved.call("recall", query="peanuts")) == [memories[0].id]

    first = run_cleanup(ports, CleanupOptions(max_items=2, page_size=1), embedder=renamed)
    assert first.more and first.counts["embedded"] <= 2  # the budget: 2 items examined
    runs = [first, *until_done(ports, renamed, CleanupOptions(max_items=2, page_size=1))]

    assert sum(r.counts["embedded"] for r in runs) == len(memories)
    record = ports.store.get(_scope(tenant), memories[0].id)
    assert record is not None and record.embedding is not None and record.embedding.model == renamed.model
    assert refs(moved.call("recall", query=ASKED, mode="semantic"))[0] == memories[0].id
    # a second pass finds nothing left to embed
    assert sum(r.counts["embedded"] for r in until_done(ports, renamed)) == 0
