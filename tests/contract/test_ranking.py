"""Terms that carry meaning and ranking by rarity (docs/retrieval.md, "Terms" and "Ranking"), on
every backend: stop words are neither required nor scored, a rare term outranks a common one, and
recall's top results do not depend on how many were asked for."""

from __future__ import annotations

from typing import Any

import pytest

from tests.contract.conftest import Tenant


def add(tenant: Tenant, content: str, **fields: Any) -> Any:
    return tenant.call("memory_add", content=content, **fields).memory


def refs(result: Any) -> list[str]:
    return [r.reference for r in result.results]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_rare_term_outranks_a_common_one(tenant, mode):
    for i in range(12):
        add(tenant, f"Team meeting number {i} about the quarterly roadmap")
    common = add(tenant, "Meeting, meeting, and one more meeting")
    rare = add(tenant, "Kubernetes upgrade postponed")

    ranked = refs(tenant.call("recall", query="meeting kubernetes", mode=mode, limit=5))

    assert ranked[0] == rare.id
    assert ranked.index(rare.id) < ranked.index(common.id)


def test_a_word_matched_both_by_its_stem_and_as_a_prefix_counts_once(tenant):
    """recall's ``rotate`` matches ``rotates`` through its stem and as a prefix, ``rotation``
    through its stem only: one term, scored once, so the two score alike (counted twice, the first
    outranked memories that also held the query's other terms: bench/results, inflected class)."""
    by_stem = add(tenant, "Alpha rotation beta")
    both_ways = add(tenant, "Alpha rotates beta")

    scores = {r.reference: r.score for r in tenant.call("recall", query="rotate", mode="lexical").results}

    assert set(scores) == {by_stem.id, both_ways.id}
    assert scores[both_ways.id] == pytest.approx(scores[by_stem.id], rel=1e-3)


def test_stop_words_are_not_required_by_the_strict_tools(tenant):
    memory = add(tenant, "Caroline: I went to the LGBTQ support group yesterday, it was powerful.")
    add(tenant, "Caroline: when did you get back from the trip?")

    strict = tenant.call("search_memory", query="When did Caroline go to the support group?")
    listed = tenant.call("memory_search", q="When did Caroline go to the support group?")

    assert (strict.matched, refs(strict)) == (True, [memory.id])
    assert [m.id for m in listed.memories] == [memory.id]


def test_stop_words_do_not_score_in_recall(tenant):
    evidence = add(tenant, "Melanie: I painted a sunrise over the lake last summer.")
    for chat in ("What did you do then, Melanie?", "When did you do that? What did she say?", "What a day!"):
        add(tenant, f"Caroline: {chat}")

    result = tenant.call("recall", query="When did Melanie paint a sunrise?", mode="lexical", explain=True)

    assert refs(result)[0] == evidence.id
    assert set(result.results[0].explanation.matched_terms) == {"melanie", "paint", "sunrise"}
    assert "when" not in result.results[0].explanation.unmatched_terms


def test_a_query_of_only_stop_words_still_finds(tenant):
    band = add(tenant, "The Who played at the festival")
    add(tenant, "Festival tickets sold out")

    assert refs(tenant.call("search_memory", query="the who")) == [band.id]
    assert band.id in refs(tenant.call("recall", query="the who"))


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_recall_gives_the_same_top_ten_for_limit_ten_and_fifty(tenant, mode):
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    for i in range(60):
        held = [w for j, w in enumerate(words) if (i >> j) & 1]
        add(tenant, f"note {i}: " + " ".join(held or ["omega"]) + f" item{i % 7}")

    ten = refs(tenant.call("recall", query="alpha gamma epsilon item3", mode=mode, limit=10))
    fifty = refs(tenant.call("recall", query="alpha gamma epsilon item3", mode=mode, limit=50))

    assert len(ten) == 10 and fifty[:10] == ten
    context = tenant.call("recall_context", query="alpha gamma epsilon item3", mode=mode, max_items=10)
    assert context.references == ten
