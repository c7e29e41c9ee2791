"""Hybrid recall's fusion: the two halves' pools in one ranking (docs/retrieval.md, "Meaning").

A rule is a :class:`Fusion`, which the service holds (``Service(fusion=…)``; :data:`ADOPTED`, the
rule chosen on the benches, by default) and hands to every hybrid recall: nothing here is switched
by a module global. The rules measured and not adopted live in ``bench/fusion.py``, built from the
parts below (:func:`word_weights`, :func:`coverage`, :func:`spread`, :func:`outlier`,
:func:`merge`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from mnemo import text
from mnemo.ports import IndexHit
from mnemo.service.retrieval.candidates import Pools, by_meaning
from mnemo.service.retrieval.matching import Match


class Fusion(Protocol):
    """How hybrid recall ranks the two halves' pools as one."""

    def fuse(self, pools: Pools) -> list[Match]:
        """The pools' memories in one ranking, best first, each with its fused weight as
        ``score``; with no meaning candidate, ``pools.lexical`` as it is."""
        ...


@dataclass(frozen=True, slots=True)
class ZScore:
    """The adopted rule ("zscore"): each half's scores normalised, the two weighed by how much of
    the query the words explain. A word hit weighs its BM25 score over the best word hit's, times
    that best hit's :func:`coverage` of the query; a meaning hit weighs what the words leave
    unexplained (``1 - coverage``; all of it when they found nothing) times :func:`outlier`, how
    far its similarity stands above the vector candidates' mean in standard deviations — from
    ``from_z`` (nothing at or below it) to all of it at ``full_z``; a memory found by both, the
    larger of its two weights — so it never ranks below a memory that either half alone ranks
    under it, and the memories found by words only keep their BM25 order among themselves. The
    meaning candidates count down to ``hybrid_min_similarity`` while the words found something and
    from the embedder's floor (``pools.min_similarity``) when they found nothing (as in
    ``semantic``): a query nothing holds and nothing nears gets no_match. Order: :func:`merge`."""

    #: how many standard deviations above the vector candidates' mean similarity a meaning hit
    #: weighs nothing from: 0, so it weighs in proportion to how far it stands out. (2.5, the rule
    #: before, about the expected largest of POOL normal draws, threw away paraphrases that stood
    #: 2 to 2.5 deviations out: bench/fusion.py names it ``zscore:FROM_Z=2.5``)
    from_z: float = 0.0
    #: ... and weighs in full from: 5, twice what the nearest of POOL unrelated memories reaches by
    #: chance
    full_z: float = 5.0
    #: the floor while the word search found something: a memory found by meaning alone between this
    #: and the embedder's floor only ranks among the word hits, never answers a query the words found
    #: nothing for; and under it (minilm's 0.1 to 0.2: nothing in common, as "wombat" and "the quokka
    #: deploy runs on fridays") it does not fill the places the words leave empty either
    hybrid_min_similarity: float = 0.2

    def fuse(self, pools: Pools) -> list[Match]:
        if not pools.similar:
            return list(pools.lexical)
        lexical = pools.lexical
        mean, sd = spread([hit.score for hit in pools.similar])
        similar = meaning_candidates(pools, self.hybrid_min_similarity)
        scale = coverage(lexical, pools.terms)
        share = 1 - scale if lexical else 1.0
        span = self.full_z - self.from_z
        meaning = [share * outlier(hit.score, mean, sd, z=span, threshold=self.from_z) for hit in similar]
        return merge(pools, word_weights(lexical, scale), similar, meaning)


#: the rule the service uses unless it is given another
ADOPTED = ZScore()


def meaning_candidates(pools: Pools, hybrid_floor: float) -> list[IndexHit]:
    """The vector candidates that count: from ``hybrid_floor`` while the words found something,
    from the embedder's floor when they found nothing."""
    floor = hybrid_floor if pools.lexical else pools.min_similarity
    return [hit for hit in pools.similar if hit.score >= floor]


def word_weights(lexical: Sequence[Match], scale: float) -> list[float]:
    """Each word hit's BM25 score over the best one's, times ``scale`` (the best hit's coverage)."""
    best = max((m.score for m in lexical), default=0.0)
    return [scale * (m.score / best if best > 0 else 1.0) for m in lexical]


def merge(
    pools: Pools,
    words: Sequence[float],
    similar: Sequence[IndexHit],
    meaning: Sequence[float],
    combine: Callable[[float, float], float] = max,
) -> list[Match]:
    """The word hits (weights ``words``) and meaning hits (``similar``, weights ``meaning``) as one
    ranking; a memory both found weighs ``combine`` of its two weights. Heavier first (working
    memories before the rest with ``prefer_working``); ties: found by words first (newest first, as
    ``lexical``), then found by meaning only, nearest first."""
    weight: dict[str, float] = {}
    found: dict[str, Match | IndexHit] = {}
    nearness: dict[str, float] = {}
    for match, w in zip(pools.lexical, words, strict=True):
        found[match.record.id] = match
        weight[match.record.id] = w
    for hit, w in zip(similar, meaning, strict=True):
        ref = hit.record.id
        found.setdefault(ref, hit)
        nearness[ref] = hit.score
        held = weight.get(ref)
        weight[ref] = w if held is None else combine(held, w)
    ranked = [_weighed(one, round(weight[ref], 6), nearness.get(ref), pools.terms) for ref, one in found.items()]
    ranked.sort(
        key=lambda m: (
            not (pools.prefer_working and m.working),
            -m.score,
            not m.by_words,
            -(0.0 if m.by_words else m.similarity or 0.0),
            -m.record.updated_at.timestamp(),
            m.record.id,
        )
    )
    return ranked


def _weighed(found: Match | IndexHit, score: float, similarity: float | None, terms: list[text.QueryTerm]) -> Match:
    """A merged memory as a match made once: a word hit with its fused ``score`` (and its
    ``similarity`` when the vector search found it too), or a meaning hit as :func:`by_meaning`
    makes it, weighing ``score``. (Made, then copied by ``dataclasses.replace`` once or twice, they
    cost recall about half a millisecond of CPU per call at 10,000 memories.)"""
    if isinstance(found, IndexHit):
        return by_meaning(found, terms, score)
    return Match(
        record=found.record,
        score=score,
        matched=found.matched,
        fields=found.fields,
        via_stem=found.via_stem,
        similarity=found.similarity if similarity is None else similarity,
        by_words=found.by_words,
        analysed=found.analysed,
        lent=found.lent,
        via_context=found.via_context,
    )


def spread(cosines: Sequence[float]) -> tuple[float, float]:
    """The mean and standard deviation of the vector candidates' similarities."""
    if not cosines:
        return 0.0, 0.0
    mean = sum(cosines) / len(cosines)
    return mean, math.sqrt(sum((c - mean) ** 2 for c in cosines) / len(cosines))


def outlier(similarity: float, mean: float, sd: float, *, z: float, threshold: float | None = None) -> float:
    """How much a similarity stands out from the vector candidates' (``mean``, ``sd``), in [0, 1]:
    0 up to ``threshold`` (default ``z``) standard deviations above the mean, rising linearly to 1
    at ``z`` more."""
    if sd <= 0:
        return 0.0
    z0 = z if threshold is None else threshold
    return min(1.0, max(0.0, ((similarity - mean) / sd - z0) / z))


def coverage(lexical: Sequence[Match], terms: Sequence[text.QueryTerm]) -> float:
    """How much of the query the best word hit holds: the share of the query's terms it matched,
    each term weighing its rarity among the word search's candidates (``ln(1 + (n + 1) / (df + ½))``,
    n candidates, df of them holding the term; a word none holds weighs the most, a CJK pair none
    holds is left out). 1 when the best hit holds every term; small when it holds only the query's
    common words."""
    if not lexical or not terms:
        return 1.0
    n = len(lexical)
    df = dict.fromkeys((t.text for t in terms), 0)
    for match in lexical:
        for term in match.matched:
            if term in df:
                df[term] += 1
    # a CJK character pair no candidate holds most often spans two words of the question (the
    # analysis pairs every neighbour): it says nothing of what the words missed, so it is left out
    weight = {
        term: math.log(1 + (n + 1) / (count + 0.5)) for term, count in df.items() if count or not text.is_cjk(term)
    }
    held = set(max(lexical, key=lambda m: m.score).matched)
    return sum(w for term, w in weight.items() if term in held) / sum(weight.values())
