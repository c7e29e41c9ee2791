"""Hybrid recall's adopted fusion rule and floors (mnemo.service.retrieval.fusion and .candidates;
docs/retrieval.md, "Meaning"), without a backend: each half weighs its candidates in [0, 1] — words
by relative BM25 times coverage, meaning by what the words leave unexplained times how far the
similarity stands above the vector candidates' mean (a z-score, in full at ``full_z``) — and a
memory found by both weighs the larger; below the embedder's floor (MIN_SIMILARITY unless it says
its own) a meaning hit only ranks among word hits (down to the rule's hybrid floor), never answers
a query the words found nothing for."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from mnemo import text
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexHit, VectorQuery
from mnemo.service.retrieval import candidates, fusion
from mnemo.service.retrieval.candidates import MIN_SIMILARITY, POOL, Pools
from mnemo.service.retrieval.fusion import ADOPTED, ZScore, coverage, outlier
from mnemo.service.retrieval.matching import Match

from tests.support.records import memory_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TERMS = text.query_terms("alpha beta gamma delta", latin_prefix=True)
#: between the two floors: weak evidence of meaning
RULE = ZScore()
WEAK = (RULE.hybrid_min_similarity + MIN_SIMILARITY) / 2


def record(number: int) -> MemoryRecord:
    return memory_record(
        f"memory {number}",
        id=f"mem_01ARZ3NDEKTSV4RRFFQ69G5F{number:02d}",
        at=NOW,
        updated_at=NOW - timedelta(minutes=number),
    )


def by_words(number: int, score: float, held: int = 4) -> Match:
    """A word hit with this index (BM25) score, holding the first ``held`` of the four query terms."""
    return Match(record(number), score, [t.text for t in TERMS[:held]])


def ids(matches: list[Match]) -> list[str]:
    return [m.record.id for m in matches]


def fuse(lexical: list[Match], similar: list[IndexHit]) -> list[Match]:
    return ADOPTED.fuse(Pools(TERMS, lexical, similar, MIN_SIMILARITY))


def noise(count: int = 60, mean: float = 0.3, seed: int = 7, start: int = 40) -> list[IndexHit]:
    """Vector candidates that are nobody's answer: similarities spread around ``mean`` (sd ~0.03)."""
    rng = random.Random(seed)
    return [IndexHit(record(start + n), round(rng.gauss(mean, 0.03), 4)) for n in range(count)]


def spread(similar: list[IndexHit]) -> tuple[float, float]:
    return fusion.spread([hit.score for hit in similar])


def test_the_floors_are_ordered() -> None:
    assert 0 < RULE.hybrid_min_similarity < MIN_SIMILARITY


def test_the_service_s_default_rule_is_the_adopted_one() -> None:
    assert ZScore(from_z=0.0, full_z=5.0, hybrid_min_similarity=0.2) == ADOPTED


def test_a_meaning_hit_weighs_in_proportion_to_how_far_it_stands_above_the_mean() -> None:
    pool = noise()
    mean, sd = spread(pool)
    words = [by_words(n, 5.0 - n / 10, held=0) for n in range(1, 4)]  # hold nothing: coverage 0

    def weight(z: float) -> tuple[float, float]:
        """The hit's fused weight, and its z-score among the candidates it joins."""
        hit = IndexHit(record(20), mean + z * sd)
        pools = Pools(TERMS, words, [hit, *pool], MIN_SIMILARITY)
        m, s = spread(pools.similar)
        return next(m.score for m in ADOPTED.fuse(pools) if m.record.id == hit.record.id), (hit.score - m) / s

    assert coverage(words, TERMS) == 0.0
    assert weight(-0.5)[0] == 0.0
    for z in (0.5, 1.0, 2.0, 4.0):
        got, joined = weight(z)
        assert got == pytest.approx(joined / RULE.full_z, abs=1e-5)
    assert weight(2 * RULE.full_z)[0] == 1.0


def test_outlier_is_nothing_up_to_z_deviations_and_everything_from_twice_that() -> None:
    z = 2.5

    assert outlier(0.5 + z * 0.1, 0.5, 0.1, z=z) == 0.0
    assert outlier(0.5 + 1.5 * z * 0.1, 0.5, 0.1, z=z) == pytest.approx(0.5)
    assert outlier(0.5 + 2 * z * 0.1, 0.5, 0.1, z=z) == pytest.approx(1.0)
    assert outlier(0.5 + 3 * z * 0.1, 0.5, 0.1, z=z) == 1.0
    assert outlier(0.9, 0.9, 0.0, z=z) == 0.0  # no spread: nothing stands out


def test_outlier_counts_from_another_threshold_when_given_one_over_the_same_width() -> None:
    z = 2.5

    assert outlier(0.5 + 1.0 * 0.1, 0.5, 0.1, z=z, threshold=1.0) == 0.0
    assert outlier(0.5 + (1.0 + z / 2) * 0.1, 0.5, 0.1, z=z, threshold=1.0) == pytest.approx(0.5)
    assert outlier(0.5 + (1.0 + z / 2) * 0.1, 0.5, 0.1, z=z) == 0.0  # below the default threshold


def test_another_rule_s_constants_change_the_ranking_the_adopted_one_gives() -> None:
    common = [by_words(n, 5.0 - n / 10, held=1) for n in range(1, 9)]
    pool = noise()
    mean, sd = spread(pool)
    modest = IndexHit(record(20), round(mean + 2.4 * sd, 4))  # below 2.5 deviations, above 2.0
    pools = Pools(TERMS, common, [modest, *pool], MIN_SIMILARITY)

    def weight(rule: ZScore) -> float:
        return next(m.score for m in rule.fuse(pools) if m.record.id == modest.record.id)

    assert weight(ADOPTED) > 0.0
    assert weight(ZScore(from_z=2.5)) == 0.0  # the rule before: nothing below 2.5 deviations
    assert ids(ADOPTED.fuse(pools))[0] == modest.record.id  # the words hold only a common term


def test_without_meaning_candidates_the_rule_answers_the_word_ranking_as_it_is() -> None:
    lexical = [by_words(n, 5.0 - n, held=n % 4 + 1) for n in range(1, 5)]

    assert ADOPTED.fuse(Pools(TERMS, lexical, [], MIN_SIMILARITY)) == lexical


def test_an_embedder_s_own_floor_replaces_the_default_when_the_words_found_nothing() -> None:
    similar = [IndexHit(record(1), 0.3), IndexHit(record(2), 0.2), IndexHit(record(3), 0.1)]

    assert ids(ADOPTED.fuse(Pools(TERMS, [], similar, MIN_SIMILARITY))) == []
    assert ids(ADOPTED.fuse(Pools(TERMS, [], similar, 0.15))) == ids(similar[:2])
    assert candidates.min_similarity(SimpleNamespace(min_similarity=0.15)) == 0.15  # type: ignore[arg-type]
    assert candidates.min_similarity(SimpleNamespace()) == MIN_SIMILARITY  # type: ignore[arg-type]
    assert candidates.min_similarity(None) == MIN_SIMILARITY


def test_a_word_hit_weighs_its_relative_score_and_a_meaning_hit_its_outlier_share_of_what_words_miss() -> None:
    best, half = by_words(1, 8.0), by_words(2, 4.0, held=1)  # the best holds every term: coverage 1
    pool = noise()
    near = IndexHit(record(3), 0.6)

    ranked = fuse([best, half], [near, *pool])

    assert ids(ranked)[:3] == [best.record.id, half.record.id, near.record.id]
    assert [m.score for m in ranked[:3]] == [1.0, 0.5, 0.0]  # the words explain everything


def test_an_outlier_of_meaning_outranks_word_hits_that_hold_only_the_query_s_common_words() -> None:
    # every candidate holds the first term only; the other three, held by none, weigh the most
    common = [by_words(n, 5.0 - n / 10, held=1) for n in range(1, 9)]
    pool = noise()
    mean, sd = spread(pool)
    paraphrase = IndexHit(record(20), round(mean + 2.2 * sd, 4))  # modestly: the rule before weighed it 0

    ranked = fuse(common, [paraphrase, *pool])

    assert coverage(common, TERMS) < 0.2
    assert ids(ranked)[0] == paraphrase.record.id


def test_a_high_similarity_that_does_not_stand_out_never_displaces_a_word_hit_that_explains_the_query() -> None:
    # chit-chat: near every question (cosine 0.8 and more), but no nearer this one than the rest
    explaining = [by_words(n, 5.0 - n / 10, held=4 if n == 1 else 3) for n in range(1, 9)]
    chatter = noise(mean=0.8)
    best_chatter = max(chatter, key=lambda hit: hit.score)
    mean, sd = spread(chatter)

    ranked = ids(fuse(explaining, chatter))

    assert best_chatter.score > 0.85 and (best_chatter.score - mean) / sd < RULE.full_z / 2
    assert coverage(explaining, TERMS) == 1.0
    assert ranked[: len(explaining)] == ids(explaining)


def test_chatter_weighs_as_much_as_unrelated_memories_at_a_low_level_do() -> None:
    # what counts is how far a similarity stands out, never its level: chatter near every question
    # at 0.8 ranks exactly as the same spread at 0.3, against word hits covering a quarter
    common = [by_words(n, 5.0 - n / 10, held=1) for n in range(1, 9)]
    high, low = noise(mean=0.8), noise(mean=0.3)

    assert [round(m.score, 4) for m in fuse(common, high)] == [round(m.score, 4) for m in fuse(common, low)]


def test_the_rule_reads_similarities_relative_to_the_query_s_candidates_not_their_level() -> None:
    common = [by_words(n, 5.0 - n / 10, held=2) for n in range(1, 9)]
    pool = [*noise(), IndexHit(record(20), 0.55), IndexHit(record(21), 0.45)]
    shifted = [IndexHit(hit.record, hit.score + 0.3) for hit in pool]  # another model's scale

    assert ids(fuse(common, pool)) == ids(fuse(common, shifted))


def test_a_memory_found_by_both_halves_never_ranks_below_one_either_half_ranks_under_it() -> None:
    rng = random.Random(25)
    for _ in range(200):
        lexical = [by_words(n, rng.uniform(1, 10), held=rng.randint(1, 4)) for n in range(1, 16)]
        lexical.sort(key=lambda m: -m.score)
        similar = [IndexHit(record(n), round(rng.uniform(0.1, 0.9), 3)) for n in rng.sample(range(1, 40), 25)]
        similar.sort(key=lambda h: -h.score)
        word_rank = {m.record.id: i for i, m in enumerate(lexical)}
        meaning_rank = {h.record.id: i for i, h in enumerate(similar) if h.score >= RULE.hybrid_min_similarity}

        ranked = fuse(lexical, similar)

        at = {m.record.id: i for i, m in enumerate(ranked)}
        for both in set(word_rank) & set(meaning_rank):
            for ref in set(word_rank) - set(meaning_rank):
                if word_rank[both] < word_rank[ref]:
                    assert at[both] < at[ref]
            for ref in set(meaning_rank) - set(word_rank):
                if meaning_rank[both] < meaning_rank[ref]:
                    assert at[both] < at[ref]


def test_memories_found_by_words_only_keep_their_bm25_order_among_themselves() -> None:
    lexical = [by_words(n, 20.0 - n, held=1 + n % 4) for n in range(1, 20)]
    pool = noise()
    mean, sd = spread(pool)
    similar = [IndexHit(record(n), round(mean + (2 + n / 5) * sd, 4)) for n in range(1, 20, 3)] + pool

    words_only = [ref for ref in ids(lexical) if ref not in {h.record.id for h in similar}]

    ranked = [ref for ref in ids(fuse(lexical, similar)) if ref in words_only]

    assert len(words_only) > 10 and ranked == words_only


def test_the_same_candidates_rank_the_same_whatever_is_cut_after() -> None:
    lexical = [by_words(n, 20.0 - n) for n in range(1, 20)]
    similar = [IndexHit(record(n), 0.8 - n / 100) for n in range(15, 30)]

    assert ids(fuse(lexical, similar))[:10] == ids(fuse(lexical, similar))[:50][:10]


def test_when_the_words_found_nothing_meaning_ranks_as_semantic_from_min_similarity() -> None:
    similar = sorted([*noise(mean=0.4), IndexHit(record(20), 0.7)], key=lambda h: -h.score)

    ranked = fuse([], similar)

    assert ids(ranked) == [h.record.id for h in similar if h.score >= MIN_SIMILARITY]
    assert ranked[0].score > 0


def test_a_weak_meaning_hit_never_answers_when_the_words_found_nothing() -> None:
    strong = IndexHit(record(1), MIN_SIMILARITY)
    weak = IndexHit(record(2), WEAK)

    assert ids(fuse([], [strong, weak])) == [strong.record.id]
    assert fuse([], [weak]) == []


class Index:
    def __init__(self) -> None:
        self.asked: list[VectorQuery] = []

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        self.asked.append(query)
        return []


def floor_asked(mode: str, **embedder_fields: Any) -> float:
    index = Index()
    embedder = SimpleNamespace(model="m", dim=2, embed=lambda texts: [[1.0, 0.0] for _ in texts], **embedder_fields)
    ctx: Any = SimpleNamespace(
        embedder=embedder, ports=SimpleNamespace(index=index), scope=None, query_vector_aside=False
    )
    pools = candidates.gather(ctx, "", None, mode, pool=POOL, prefer_working=False, full=False)  # type: ignore[arg-type]
    (query,) = index.asked
    assert pools.lexical == [] and pools.similar == []
    return query.min_score


def test_hybrid_asks_the_vector_search_for_its_nearest_whatever_their_similarity_and_semantic_from_the_floor() -> None:
    assert floor_asked("hybrid") == 0.0
    assert floor_asked("semantic") == MIN_SIMILARITY
    assert floor_asked("semantic", min_similarity=0.12) == 0.12
    assert floor_asked("hybrid", min_similarity=0.12) == 0.0


def test_each_packaged_embedder_says_its_own_floor() -> None:
    from mnemo.embedding.static import StaticEmbedder
    from mnemo.embedding.transformer import TransformerEmbedder

    # the static model's is the default's; MiniLM's cosines of answers run lower (0.1: every answer
    # plain dense ranks in its first 10 on the real questions, bench/results/2026-12-03-floors-minilm.md)
    assert candidates.min_similarity(StaticEmbedder()) == MIN_SIMILARITY == 0.35
    assert TransformerEmbedder.min_similarity == 0.1


def test_a_fused_word_match_keeps_every_field_of_its_match():
    # fusion makes each merged match once (no dataclasses.replace): a field Match gains later must
    # be carried too, so the fused match is the word match with only its score and similarity new
    import dataclasses

    word = Match(
        record(1),
        1.5,
        ["deploy"],
        fields={"content": ["deploy"]},
        via_stem={"deploys": ["deploy"]},
        similarity=None,
        by_words=True,
        analysed=False,
        lent=0.25,
        via_context=True,
    )
    assert {f.name for f in dataclasses.fields(Match)} <= {
        "record",
        "score",
        "matched",
        "fields",
        "via_stem",
        "similarity",
        "by_words",
        "analysed",
        "lent",
        "via_context",
    }, "a new Match field: make fusion._weighed carry it, then add it here"

    fused = fusion._weighed(word, 0.75, 0.61, [])

    assert fused == dataclasses.replace(word, score=0.75, similarity=0.61)
    assert fusion._weighed(word, 0.75, None, []) == dataclasses.replace(word, score=0.75)


def test_while_the_words_found_something_meaning_counts_from_the_hybrid_floor_whatever_the_embedder_s() -> None:
    words = [by_words(1, 3.0, held=1)]
    low = IndexHit(record(2), 0.15)  # under the hybrid floor (0.2), over minilm's own (0.1)
    near = IndexHit(record(3), 0.25)

    for floor in (MIN_SIMILARITY, 0.1):
        listed = ids(ADOPTED.fuse(Pools(TERMS, words, [near, low], floor)))
        assert near.record.id in listed and low.record.id not in listed
