"""Hybrid recall's fusion rule and floors (mnemo.service.retrieval.tools; docs/retrieval.md,
"Meaning"), without a backend: a memory found by meaning alone weighs its similarity against the
share of the query's terms the word hits hold; below MIN_SIMILARITY it only ranks among word hits
(down to HYBRID_MIN_SIMILARITY), never answers a query the words found nothing for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from mnemo import text
from mnemo.models.records import MemoryRecord
from mnemo.models.tools import RecallArgs
from mnemo.ports import IndexHit, VectorQuery
from mnemo.service.retrieval import tools
from mnemo.service.retrieval.matching import Match

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TERMS = text.query_terms("alpha beta gamma delta", latin_prefix=True)
#: between the two floors: weak evidence of meaning
WEAK = (tools.HYBRID_MIN_SIMILARITY + tools.MIN_SIMILARITY) / 2


def record(number: int) -> MemoryRecord:
    return MemoryRecord(
        id=f"mem_01ARZ3NDEKTSV4RRFFQ69G5F{number:02d}",
        workspace_id="ws_1",
        project_id="prj_1",
        content=f"memory {number}",
        source="test",
        version=1,
        created_at=NOW,
        updated_at=NOW - timedelta(minutes=number),
    )


def by_words(number: int, held: int) -> Match:
    """A word hit holding the first ``held`` of the four query terms."""
    return Match(record(number), 1.0, [t.text for t in TERMS[:held]])


def ids(matches: list[Match]) -> list[str]:
    return [m.record.id for m in matches]


def test_the_floors_are_ordered() -> None:
    assert 0 < tools.HYBRID_MIN_SIMILARITY < tools.MIN_SIMILARITY


def test_a_weak_meaning_hit_ranks_among_word_hits_by_its_similarity_against_their_share() -> None:
    half, quarter = by_words(1, 2), by_words(2, 1)  # 0.5 and 0.25 of the terms
    weak = IndexHit(record(3), WEAK)

    ranked = tools._fuse([half, quarter], [weak], TERMS, full=False, prefer_working=False)

    assert ids(ranked) == [half.record.id, weak.record.id, quarter.record.id]
    assert ranked[1].matched_by == "meaning" and ranked[1].score == round(WEAK, 6)
    assert [m.score for m in ranked] == [0.5, round(WEAK, 6), 0.25]


def test_a_weak_meaning_hit_never_answers_when_the_words_found_nothing() -> None:
    strong = IndexHit(record(1), tools.MIN_SIMILARITY)
    weak = IndexHit(record(2), WEAK)

    assert tools._fuse([], [strong, weak], TERMS, full=False, prefer_working=False) == [
        tools._fuse([], [strong], TERMS, full=False, prefer_working=False)[0]
    ]
    assert tools._fuse([], [weak], TERMS, full=False, prefer_working=False) == []


def test_a_word_hit_also_found_by_meaning_keeps_its_place_and_says_both() -> None:
    every, one = by_words(1, 4), by_words(2, 1)

    ranked = tools._fuse([every, one], [IndexHit(record(2), 0.9)], TERMS, full=False, prefer_working=False)

    assert ids(ranked) == [every.record.id, one.record.id]
    assert ranked[1].matched_by == "both" and ranked[1].similarity == 0.9 and ranked[1].score == 0.25


class Index:
    def __init__(self) -> None:
        self.asked: list[VectorQuery] = []

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        self.asked.append(query)
        return []


def floor_asked(*, strict: bool) -> float:
    index = Index()
    embedder = SimpleNamespace(model="m", dim=2, embed=lambda texts: [[1.0, 0.0] for _ in texts])
    ctx: Any = SimpleNamespace(embedder=embedder, ports=SimpleNamespace(index=index), scope=None)
    tools._similar(ctx, RecallArgs(query="alpha"), flt=None, pool=20, strict=strict)  # type: ignore[arg-type]
    (query,) = index.asked
    return query.min_score


def test_hybrid_asks_the_vector_search_down_to_its_own_floor_and_semantic_to_min_similarity() -> None:
    assert floor_asked(strict=False) == tools.HYBRID_MIN_SIMILARITY
    assert floor_asked(strict=True) == tools.MIN_SIMILARITY
