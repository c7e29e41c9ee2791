"""recall's context rule (mnemo.service.retrieval.context; docs/retrieval.md, "Context"), without a
backend: memories saved together lend each other ``share`` of the mean of their neighbours'
weights, a neighbour that neither half found joins with what it is lent, and what is lent is
bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from mnemo.models.records import MemoryRecord
from mnemo.service.retrieval.context import ADOPTED, Neighbours, anchors, lent
from mnemo.service.retrieval.matching import Match

from tests.support.records import memory_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def record(number: int, session: str | None = "s1") -> MemoryRecord:
    return memory_record(
        f"turn {number}",
        id=f"mem_01ARZ3NDEKTSV4RRFFQ69G5F{number:02d}",
        at=NOW,
        updated_at=NOW - timedelta(minutes=number),
        session=session,
    )


def hit(number: int, score: float) -> Match:
    return Match(record(number), score, ["turn"])


def ids(matches: list[Match]) -> list[str]:
    return [m.record.id for m in matches]


def test_a_memory_is_lent_share_times_the_mean_of_its_two_neighbours_weights() -> None:
    ranked = [hit(1, 1.0), hit(3, 0.6), hit(2, 0.1)]
    near = {record(2).id: [record(1), record(3)]}  # 2 sits between 1 and 3

    out = {m.record.id: m for m in lent(ranked, near, Neighbours(share=0.5), prefer_working=False)}

    assert out[record(2).id].lent == pytest.approx(0.5 * (1.0 + 0.6) / 2)
    assert out[record(2).id].score == pytest.approx(0.1 + 0.4)
    assert out[record(1).id].lent == pytest.approx(0.5 * 0.1 / 2)  # 1's neighbour is 2, both ways


def test_with_join_a_neighbour_neither_half_found_joins_found_by_context() -> None:
    ranked = [hit(1, 1.0), hit(5, 0.9)]
    near = {record(1).id: [record(2)]}

    out = lent(ranked, near, Neighbours(join=True), prefer_working=False)

    assert record(2).id not in ids(lent(ranked, near, ADOPTED, prefer_working=False))  # adopted: candidates only
    joined = next(m for m in out if m.record.id == record(2).id)
    assert joined.via_context and joined.matched_by == "context"
    assert joined.score == pytest.approx(ADOPTED.share * 1.0 / 2) and joined.lent == joined.score


def test_what_is_lent_is_bounded_by_share_times_the_heaviest_weight() -> None:
    ranked = [hit(n, 1.0 - n / 20) for n in range(1, 8)]
    # one-sided adjacency can give a memory more than two neighbours: only the two heaviest count
    near = {record(n).id: [record(4)] for n in (1, 2, 3, 5, 6)}

    out = lent(ranked, near, Neighbours(share=0.4), prefer_working=False)

    assert max(m.lent for m in out) <= 0.4 * max(m.score for m in ranked) + 1e-9


def test_memories_lent_nothing_keep_their_order_and_share_zero_lends_nothing() -> None:
    ranked = [hit(n, 1.0 - n / 10) for n in range(1, 6)]
    near = {record(1).id: [record(9)]}

    out = lent(ranked, near, ADOPTED, prefer_working=False)

    assert [ref for ref in ids(out) if ref in ids(ranked)] == ids(ranked)
    assert anchors(ranked, Neighbours(share=0.0)) == []


def test_the_anchors_are_the_ranking_s_head_that_weighs_anything_whatever_is_cut_after() -> None:
    ranked = [hit(n, 1.0 - n / 50) for n in range(1, 41)] + [hit(45, 0.0)]

    assert ids(anchors(ranked, ADOPTED)) == ids(ranked[: ADOPTED.anchors])
    assert all(m.score > 0 for m in anchors(ranked, Neighbours(anchors=100)))


def test_within_session_only_memories_saved_with_a_session_ask_and_within_time_every_one() -> None:
    ranked = [hit(1, 0.9), Match(record(2, session=None), 0.8, ["turn"]), hit(3, 0.7)]

    assert ids(anchors(ranked, Neighbours(within="session"))) == [record(1).id, record(3).id]
    assert ids(anchors(ranked, Neighbours(within="time"))) == ids(ranked)
