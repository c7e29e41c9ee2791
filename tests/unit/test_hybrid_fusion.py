"""Hybrid recall's fusion rule and floors (mnemo.service.retrieval.tools; docs/retrieval.md,
"Meaning"), without a backend: each half weighs its candidates in [0, 1], a memory found by both
adds the two; below MIN_SIMILARITY a meaning hit only ranks among word hits (down to
HYBRID_MIN_SIMILARITY), never answers a query the words found nothing for."""

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


def by_words(number: int, score: float, held: int = 4) -> Match:
    """A word hit with this index (BM25) score, holding the first ``held`` of the four query terms."""
    return Match(record(number), score, [t.text for t in TERMS[:held]])


def ids(matches: list[Match]) -> list[str]:
    return [m.record.id for m in matches]


def fuse(lexical: list[Match], similar: list[IndexHit]) -> list[Match]:
    return tools._fuse(lexical, similar, TERMS, full=False, prefer_working=False)


def test_the_floors_are_ordered() -> None:
    assert 0 < tools.HYBRID_MIN_SIMILARITY < tools.MIN_SIMILARITY


def test_a_word_hit_weighs_its_relative_score_and_a_meaning_hit_its_similarity_times_what_words_miss() -> None:
    best, half = by_words(1, 8.0), by_words(2, 4.0)  # the best holds every term: coverage 1
    near = IndexHit(record(3), 0.9)

    ranked = fuse([best, half], [near])

    assert ids(ranked) == [best.record.id, half.record.id, near.record.id]
    assert [m.score for m in ranked] == [1.0, 0.5, round(0.9 * tools.MEANING_WEIGHT, 6)]


def test_meaning_outranks_word_hits_that_hold_only_the_query_s_common_words() -> None:
    # every candidate holds the first term only; the other three, held by none, weigh the most
    common = [by_words(n, 5.0 - n / 10, held=1) for n in range(1, 9)]
    paraphrase = IndexHit(record(20), 0.6)

    ranked = fuse(common, [paraphrase])

    assert tools.coverage(common, TERMS) < 0.2
    assert ids(ranked)[0] == paraphrase.record.id


def test_a_memory_found_by_both_halves_never_ranks_below_one_either_half_ranks_under_it() -> None:
    lexical = [by_words(n, 10.0 - n) for n in range(1, 6)]
    similar = [IndexHit(record(n), 0.9 - n / 20) for n in (9, 4, 8, 7)]  # 4 is found by both, 2nd by meaning

    ranked = ids(fuse(lexical, similar))

    both = ranked.index(record(4).id)
    assert ranked[both + 1 :] and all(ref in ranked[both + 1 :] for ref in (record(5).id, record(8).id, record(7).id))
    assert fuse(lexical, similar)[both].matched_by == "both"


def test_the_same_candidates_rank_the_same_whatever_is_cut_after() -> None:
    lexical = [by_words(n, 20.0 - n) for n in range(1, 20)]
    similar = [IndexHit(record(n), 0.8 - n / 100) for n in range(15, 30)]

    assert ids(fuse(lexical, similar))[:10] == ids(fuse(lexical, similar))[:50][:10]


def test_a_weak_meaning_hit_never_answers_when_the_words_found_nothing() -> None:
    strong = IndexHit(record(1), tools.MIN_SIMILARITY)
    weak = IndexHit(record(2), WEAK)

    assert ids(fuse([], [strong, weak])) == [strong.record.id]
    assert fuse([], [weak]) == []


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
    tools._similar(ctx, RecallArgs(query="alpha"), flt=None, pool=tools.POOL, strict=strict)  # type: ignore[arg-type]
    (query,) = index.asked
    return query.min_score


def test_hybrid_asks_the_vector_search_down_to_its_own_floor_and_semantic_to_min_similarity() -> None:
    assert floor_asked(strict=False) == tools.HYBRID_MIN_SIMILARITY
    assert floor_asked(strict=True) == tools.MIN_SIMILARITY
