"""recall's context (docs/contract.md §3, docs/retrieval.md "Context"), on every backend: memories
saved in one session lend the memories saved just before and after them a bounded part of their
weight, so a turn that holds none of the query's words ranks through its neighbours, and
``explain`` says so; memories without a session neither lend nor borrow.

The query's words (clambake, solstice, moussaka) are in no other test: on AWS the index's term
statistics are shared by every tenant of the suite (docs/pitfalls.md), so a common word that other
tests save in bulk would move these scores."""

from __future__ import annotations

import time

import pytest

S1 = "conversation-1"
S2 = "conversation-2"


def _add(tenant, content, **fields):
    memory = tenant.call("memory_add", content=content, **fields).memory
    time.sleep(0.002)  # distinct milliseconds: creation order is id order
    return memory


def _dialogue(tenant):
    _add(tenant, "Ross: the museum opens a new dinosaur wing next month", session=S2)
    asked = _add(tenant, "Monica: what should we bring to the clambake on the solstice", session=S1)
    answer = _add(tenant, "Chandler: moussaka, definitely, and plenty of it for everyone", session=S1)
    loose = _add(tenant, "Joey: moussaka")  # saved next to them, in no session
    other = _add(tenant, "Rachel: moussaka, definitely, and plenty of it for everyone", session=S2)
    _add(tenant, "Phoebe: my guitar lesson moved to thursday", session=S2)
    return asked, answer, loose, other


def test_a_turn_ranks_through_its_neighbour_above_an_equal_word_hit_and_explain_says_so(tenant):
    asked, answer, loose, other = _dialogue(tenant)
    assert asked.session == answer.session == S1

    results = tenant.call("recall", query="clambake solstice moussaka", explain=True).results
    by_words = tenant.call("recall", query="clambake solstice moussaka", mode="lexical").results
    lexical = {r.reference: r.score for r in by_words}

    order = [r.reference for r in results]
    by_id = {r.reference: r for r in results}
    # by words alone the answer and the other turn score the same (the same words, the same length,
    # whatever the index's statistics); the answer's question lends it weight
    assert lexical[other.id] == pytest.approx(lexical[answer.id], rel=1e-3)
    assert order.index(answer.id) < order.index(other.id)
    assert "through its neighbours" in by_id[answer.id].explanation.reason
    assert "neighbours" not in by_id[loose.id].explanation.reason  # no session: it neither lends nor borrows
    assert by_id[answer.id].score <= 1.5 * results[0].score  # bounded: at most half of the heaviest is lent


def test_a_neighbour_that_fails_the_filters_never_joins(tenant):
    asked = _add(tenant, "Monica: what should we bring to the clambake on the solstice", session=S1, kind="question")
    answer = _add(tenant, "Chandler: moussaka, definitely, and plenty of it", session=S1, kind="reply")

    results = tenant.call("recall", query="clambake solstice", memory_type="question", explain=True).results

    assert [r.reference for r in results] == [asked.id]
    assert answer.id not in {r.reference for r in results}


def test_the_top_ten_with_context_is_the_same_for_limit_10_and_50(tenant):
    for n in range(30):
        _add(tenant, f"turn {n}: the potluck needs {n} more chairs" if n % 3 == 0 else f"turn {n}: sure", session=S1)

    ten = [r.reference for r in tenant.call("recall", query="potluck chairs", limit=10).results]
    fifty = [r.reference for r in tenant.call("recall", query="potluck chairs", limit=50).results]

    assert len(ten) == 10 and fifty[:10] == ten
