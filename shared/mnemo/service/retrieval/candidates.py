"""recall's first step: the two halves' candidate pools — the word search's best ``POOL`` and the
vector search's nearest ``POOL`` — under the same filters, whatever the limit."""

from __future__ import annotations

from dataclasses import dataclass, replace

from mnemo import text
from mnemo.errors import EmbedderUnavailable
from mnemo.observability import logger
from mnemo.ports import Embedder, IndexHit, IndexQuery, MemoryFilter, VectorQuery
from mnemo.service.context import CallContext
from mnemo.service.retrieval.matching import Match, analyse, rank_key
from mnemo.service.vectors import PendingVector, embed_query, embed_query_aside

#: recall and recall_context rank this many candidates from each half (the word search and the
#: vector search), whatever the limit: the same top 10 for limit 10 and 50 (the most either asks
#: for: limit 50, max_items 100)
POOL = 100

#: the least cosine at which a memory counts as found by meaning, for an embedder that does not say
#: its own (``min_similarity``): the static model's (docs/retrieval.md: unrelated words reach about
#: 0.2-0.4 with it, a memory's own words 0.4-0.75)
MIN_SIMILARITY = 0.35


def min_similarity(embedder: Embedder | None) -> float:
    """The embedder's floor for "found by meaning": its ``min_similarity`` when it has one."""
    value = getattr(embedder, "min_similarity", None)
    return MIN_SIMILARITY if value is None else float(value)


@dataclass(frozen=True, slots=True)
class Pools:
    """What each half found for one query."""

    #: the query's terms (recall's analysis: Latin prefixes)
    terms: list[text.QueryTerm]
    #: the word search's candidates, in recall's word order (:func:`matching.rank_key`)
    lexical: list[Match]
    #: the vector search's candidates, nearest first: any similarity in ``hybrid`` (their spread
    #: calibrates the fusion), at least the floor in ``semantic``
    similar: list[IndexHit]
    #: the embedder's floor for "found by meaning" (:func:`min_similarity`)
    min_similarity: float
    prefer_working: bool = False


def words(ctx: CallContext, query: IndexQuery, *, full: bool) -> list[Match]:
    """The word search's candidates, analysed, in recall's word order."""
    lexical = [analyse(hit, query.terms, full=full) for hit in ctx.ports.index.search(query)]
    lexical.sort(key=lambda m: rank_key(m, prefer_working=query.prefer_working), reverse=True)
    return lexical


def nearest(
    ctx: CallContext,
    query: str,
    flt: MemoryFilter,
    pool: int,
    *,
    floor: float,
    strict: bool,
    pending: PendingVector | None = None,
) -> list[IndexHit]:
    """The vector search's candidates at ``floor`` or nearer; [] when the embedder fails and words
    can answer (not ``strict``). ``pending``: the query's vector already on its way."""
    embedder = ctx.embedder
    assert embedder is not None
    try:
        vector = pending.result() if pending is not None else embed_query(embedder, query)
    except Exception as exc:
        if strict:
            raise EmbedderUnavailable("the embedder cannot embed the query now; retry, or use mode 'lexical'") from exc
        logger.warning("embedder failed on a query; answering by words only")
        return []
    return ctx.ports.index.similar(VectorQuery(ctx.scope, vector, embedder.model, flt, pool, floor))


def gather(
    ctx: CallContext, query: str, flt: MemoryFilter, mode: str, *, pool: int, prefer_working: bool, full: bool
) -> Pools:
    """Both halves' pools for ``mode`` (``lexical``: words only; ``semantic``: meaning only, from
    the floor; ``hybrid``: both, meaning whatever the similarity)."""
    terms = text.query_terms(query, latin_prefix=True)
    floor = min_similarity(ctx.embedder)
    # the query's vector is made while the words are searched, in a process that may run a second
    # thread (``Service(query_vector_aside=True)``), where the embedder costs enough and a core is free
    pending = None
    if ctx.query_vector_aside and mode != "lexical" and ctx.embedder is not None:
        pending = embed_query_aside(ctx.embedder, query)
    lexical: list[Match] = []
    if mode != "semantic" and terms:
        lexical = words(ctx, IndexQuery(ctx.scope, terms, "any", flt, pool, prefer_working=prefer_working), full=full)
    similar: list[IndexHit] = []
    if mode != "lexical":
        strict = mode == "semantic"
        similar = nearest(ctx, query, flt, pool, floor=floor if strict else 0.0, strict=strict, pending=pending)
    return Pools(terms, lexical, similar, floor, prefer_working)


def by_meaning(hit: IndexHit, terms: list[text.QueryTerm], score: float | None = None) -> Match:
    """A vector search hit as a match found by meaning, weighing ``score`` (default: its
    similarity); the query terms it holds, if any, are worked out by :func:`completed` for the
    ones an answer shows (no ranking rule needs them)."""
    weight = hit.score if score is None else score
    return Match(hit.record, weight, [], similarity=hit.score, by_words=False, analysed=not terms)


def completed(matches: list[Match], terms: list[text.QueryTerm], *, full: bool) -> list[Match]:
    """The matches, each found by meaning given the query terms it holds (``explain`` shows them)."""
    return [
        m if m.analysed else replace(analyse(IndexHit(m.record, m.score), terms, full=full), score=m.score,
                                     similarity=m.similarity, by_words=False, lent=m.lent, via_context=m.via_context)
        for m in matches
    ]  # fmt: skip
