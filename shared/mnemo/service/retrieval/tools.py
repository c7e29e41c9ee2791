"""The tools: search_memory (strict), recall (forgiving) and recall_context (recall, packed).

An empty query (nothing but spaces) asks what changed: the most recently updated memories that
pass the filters and the ``updated_after`` / ``updated_before`` window, newest first, from the
record store's recent listing (no index query).

recall and recall_context take a ``mode``: ``lexical`` ranks the word search's best POOL
candidates (the index's BM25 score, then recency); ``semantic`` ranks the vector search's (cosine,
at least MIN_SIMILARITY); ``hybrid`` (the default) asks both, with the same filters, and fuses them
by calibrated scores (``_fuse``): a word hit weighs its BM25 score relative to the best one's,
scaled by how much of the query that best hit holds (``coverage``); a meaning hit (cosine at least
HYBRID_MIN_SIMILARITY while the words found something, MIN_SIMILARITY when they found nothing)
weighs what the words leave unexplained times how far its cosine stands out from the vector
candidates' (``outlier``, a z-score); a memory found by both, the larger. Without an embedder
(``MNEMO_EMBEDDER=none``), or when it fails at query time, ``hybrid`` is ``lexical``."""

from __future__ import annotations

import math
from dataclasses import replace

from mnemo import text
from mnemo.errors import EmbedderUnavailable, InvalidRequest
from mnemo.models.tools import (
    NoMatch,
    RecallArgs,
    RecallContextArgs,
    RecallContextResult,
    RetrievalArgs,
    RetrievalResult,
    SearchMemoryArgs,
)
from mnemo.observability import logger
from mnemo.ports import IndexHit, IndexQuery, MemoryFilter, VectorQuery
from mnemo.service.context import CallContext
from mnemo.service.retrieval.diagnosis import diagnose, no_match_result, no_terms, nothing_listed
from mnemo.service.retrieval.explain import result_items
from mnemo.service.retrieval.matching import WORKING, Match, analyse, rank_key
from mnemo.service.retrieval.packing import dedupe_key, pack
from mnemo.service.vectors import embed_query

#: recall and recall_context rank this many candidates from each half (the word search and the
#: vector search), whatever the limit: the same top 10 for limit 10 and 50 (the most either asks
#: for: limit 50, max_items 100)
POOL = 100

#: how hybrid fuses the two halves (docs/retrieval.md, "Meaning"): "zscore", the rule chosen on
#: the quality and natural-language benches; "maxc" (the rule it replaced) and "rrf" (reciprocal
#: rank, k RRF_K) are the rules it was measured against, kept selectable for bench/fusion.py
FUSION = "zscore"
RRF_K = 60

#: "maxc" and "rrf" only: the least a meaning hit's similarity counts for against the words'
#: calibrated scores ("maxc"), the meaning half's weight ("rrf")
MEANING_WEIGHT = 0.35

#: the least cosine at which a memory counts as found by meaning (docs/retrieval.md: unrelated
#: words reach about 0.2-0.4 with the static model, a memory's own words 0.4-0.75)
MIN_SIMILARITY = 0.35

#: hybrid's floor while the word search found something: a memory found by meaning alone between
#: this and MIN_SIMILARITY only ranks among the word hits, never answers a query the words found
#: nothing for
HYBRID_MIN_SIMILARITY = 0.2

#: how many standard deviations above the vector candidates' mean similarity a meaning hit must
#: stand to weigh anything against the words ("zscore"): 2.5, about the expected largest of POOL
#: draws of a normal distribution — the nearest of 100 unrelated memories reaches it by chance
OUTLIER_Z = 2.5

#: bench/fusion.py only (None: OUTLIER_Z, the rule above): the threshold a meaning hit must pass
#: when the best word hit covers none of the query, rising linearly with that coverage to
#: OUTLIER_Z when it covers all of it ("the words explain nothing, so meaning need not stand out as
#: far"); measured and not adopted (bench/results/2026-12-02-paraphrase-models.md)
OUTLIER_Z_UNCOVERED: float | None = None


def _filter(ctx: CallContext, args: RetrievalArgs, team_id: str | None = None) -> MemoryFilter:
    return ctx.memory_filter(
        team_id=team_id,
        kind_like=args.memory_type,
        path_like=args.path_filter,
        updated_after=args.updated_after,
        updated_before=args.updated_before,
        session=args.session,
    )


def listing(ctx: CallContext, flt: MemoryFilter, limit: int, *, prefer_working: bool) -> list[Match]:
    """What changed: the newest memories that pass the filter (working ones first when asked)."""
    records = []
    if prefer_working:
        records = ctx.ports.store.recent(ctx.scope, replace(flt, kind=WORKING), limit)
    if len(records) < limit:
        seen = {r.id for r in records}
        records += [r for r in ctx.ports.store.recent(ctx.scope, flt, limit) if r.id not in seen][
            : limit - len(records)
        ]
    return [Match(record, 0.0, []) for record in records]


def _listed(ctx: CallContext, args: SearchMemoryArgs | RecallArgs, flt: MemoryFilter) -> RetrievalResult:
    matches = listing(ctx, flt, args.limit, prefer_working=args.prefer_working)
    if not matches:
        return no_match_result(ctx, nothing_listed(args))
    return RetrievalResult(
        project=ctx.project_ref,
        matched=True,
        results=result_items(matches, [], explain=args.explain, prefer_working=args.prefer_working),
    )


def search_memory(ctx: CallContext, args: SearchMemoryArgs) -> RetrievalResult:
    """Strict: a memory must contain every term that carries meaning (stop words are not required)
    and pass every filter; otherwise no_match. An empty query lists what changed, and only within
    a time window (without one it is 400: a strict lookup of nothing)."""
    flt = _filter(ctx, args, args.team_id)
    if not args.query.strip():
        if args.updated_after is None and args.updated_before is None:
            raise InvalidRequest(
                "search_memory needs a query; to list what changed, give a time window "
                "(updated_after and/or updated_before) with an empty query",
                details=[{"loc": ["query"], "type": "missing"}],
            )
        return _listed(ctx, args, flt)
    terms = text.query_terms(args.query)
    if not terms:
        return no_match_result(ctx, no_terms())
    query = IndexQuery(ctx.scope, terms, "all", flt, args.limit, prefer_working=args.prefer_working)
    matches = [analyse(hit, terms, full=args.explain) for hit in ctx.ports.index.search(query)]
    if not matches:
        return no_match_result(ctx, diagnose(ctx, terms, args, strict=True, team_id=args.team_id))
    return RetrievalResult(
        project=ctx.project_ref,
        matched=True,
        results=result_items(matches, terms, explain=args.explain, prefer_working=args.prefer_working),
    )


def recall(ctx: CallContext, args: RecallArgs) -> RetrievalResult:
    """Forgiving: any term, Latin prefixes, ranked by terms matched, then score, then recency."""
    if not args.query.strip():
        return _listed(ctx, args, _filter(ctx, args))
    terms, ranked, no_match = _recall_ranked(ctx, args, pool=POOL)
    if no_match is not None:
        return no_match_result(ctx, no_match)
    return RetrievalResult(
        project=ctx.project_ref,
        matched=True,
        results=result_items(
            completed(ranked[: args.limit], terms, full=args.explain),
            terms,
            explain=args.explain,
            prefer_working=args.prefer_working,
            mode=args.mode,
        ),
    )


def _recall_ranked(
    ctx: CallContext, args: RecallArgs | RecallContextArgs, *, pool: int
) -> tuple[list[text.QueryTerm], list[Match], NoMatch | None]:
    flt = _filter(ctx, args)
    mode = args.mode
    if mode != "lexical" and ctx.embedder is None:
        if mode == "semantic":
            raise InvalidRequest(
                "mode 'semantic' needs an embedder and this deployment has none (MNEMO_EMBEDDER=none)",
                details=[{"loc": ["mode"], "type": "value_error"}],
            )
        mode = "lexical"
    terms = text.query_terms(args.query, latin_prefix=True)
    full = isinstance(args, RecallArgs) and args.explain
    lexical: list[Match] = []
    if mode != "semantic" and terms:
        query = IndexQuery(ctx.scope, terms, "any", flt, pool, prefer_working=args.prefer_working)
        lexical = [analyse(hit, terms, full=full) for hit in ctx.ports.index.search(query)]
        lexical.sort(key=lambda m: rank_key(m, prefer_working=args.prefer_working), reverse=True)
    similar = _similar(ctx, args, flt, pool, strict=mode == "semantic") if mode != "lexical" else []
    if mode == "semantic":
        ranked = [_meaning(hit, terms) for hit in similar]
        ranked.sort(key=lambda m: (args.prefer_working and m.working, m.score), reverse=True)
        if not ranked:
            return terms, [], NoMatch(cause="nothing_similar", reason="no memory's meaning is near the query's")
        return terms, ranked, None
    ranked = _fuse(lexical, similar, terms, full=full, prefer_working=args.prefer_working) if similar else lexical
    if ranked:
        return terms, ranked, None
    if not terms:
        return terms, [], no_terms()
    return terms, [], diagnose(ctx, terms, args, strict=False, team_id=None)


def _similar(ctx: CallContext, args: RetrievalArgs, flt: MemoryFilter, pool: int, *, strict: bool) -> list[IndexHit]:
    """The vector search's candidates; [] when the embedder fails and words can answer."""
    embedder = ctx.embedder
    assert embedder is not None
    try:
        vector = embed_query(embedder, args.query)
    except Exception as exc:
        if strict:
            raise EmbedderUnavailable("the embedder cannot embed the query now; retry, or use mode 'lexical'") from exc
        logger.warning("embedder failed on a query; answering by words only")
        return []
    # hybrid asks for the POOL nearest whatever their similarity: their spread calibrates the fusion
    floor = MIN_SIMILARITY if strict else 0.0
    query = VectorQuery(ctx.scope, vector, embedder.model, flt, pool, floor)
    return ctx.ports.index.similar(query)


def _meaning(hit: IndexHit, terms: list[text.QueryTerm]) -> Match:
    """A vector search hit as a match found by meaning; the query terms it holds, if any, are
    worked out by :func:`completed` for the ones an answer shows (no ranking rule needs them)."""
    return Match(hit.record, hit.score, [], similarity=hit.score, by_words=False, analysed=not terms)


def completed(matches: list[Match], terms: list[text.QueryTerm], *, full: bool) -> list[Match]:
    """The matches, each found by meaning given the query terms it holds (``explain`` shows them)."""
    return [
        m if m.analysed else replace(analyse(IndexHit(m.record, m.score), terms, full=full),
                                     score=m.score, similarity=m.similarity, by_words=False)
        for m in matches
    ]  # fmt: skip


def _fuse(
    lexical: list[Match], similar: list[IndexHit], terms: list[text.QueryTerm], *, full: bool, prefer_working: bool
) -> list[Match]:
    """The word and meaning candidates in one ranking (docs/retrieval.md, "Meaning").

    ``FUSION`` "zscore": a word hit weighs its BM25 score over the best word hit's, times that
    best hit's :func:`coverage` of the query; a meaning hit weighs what the words leave unexplained
    (``1 - coverage``; all of it when they found nothing) times :func:`outlier`, how far its
    similarity stands above the vector candidates' in standard deviations — nothing below
    ``OUTLIER_Z``, all of it from twice that; a memory found by both, the larger of its two
    weights — so it never ranks below a memory that either half alone ranks under it, and the
    memories found by words only keep their BM25 order among themselves. Heavier first; ties:
    found by words first (newest first, as ``lexical``), then found by meaning only, nearest first.
    The meaning candidates count down to ``HYBRID_MIN_SIMILARITY`` while the words found something
    and from ``MIN_SIMILARITY`` when they found nothing (as in ``semantic``): a query nothing
    holds and nothing nears gets no_match. (The rules it was measured against, selectable for
    bench/fusion.py: "maxc", meaning at ``similarity x max(MEANING_WEIGHT, 1 - coverage)``;
    "rrf", ``MEANING_WEIGHT``-weighted reciprocal rank, k ``RRF_K``.)"""
    spread = _spread([hit.score for hit in similar])
    floor = HYBRID_MIN_SIMILARITY if lexical else MIN_SIMILARITY
    similar = [hit for hit in similar if hit.score >= floor]
    if FUSION == "rrf":
        words = [(RRF_K + 1) / (RRF_K + rank) for rank in range(1, len(lexical) + 1)]
        meaning = [MEANING_WEIGHT * (RRF_K + 1) / (RRF_K + rank) for rank in range(1, len(similar) + 1)]
    else:
        best = max((m.score for m in lexical), default=0.0)
        scale = coverage(lexical, terms)
        words = [scale * (m.score / best if best > 0 else 1.0) for m in lexical]
        if FUSION == "maxc":
            meaning = [max(MEANING_WEIGHT, 1 - scale) * hit.score for hit in similar]
        else:
            share = 1 - scale if lexical else 1.0
            low = OUTLIER_Z if OUTLIER_Z_UNCOVERED is None else OUTLIER_Z_UNCOVERED
            z0 = low + (OUTLIER_Z - low) * scale if lexical else OUTLIER_Z
            meaning = [share * outlier(hit.score, *spread, threshold=z0) for hit in similar]
    weight: dict[str, float] = {}
    matches: dict[str, Match] = {}
    for match, w in zip(lexical, words, strict=True):
        matches[match.record.id] = match
        weight[match.record.id] = w
    for hit, w in zip(similar, meaning, strict=True):
        known = matches.get(hit.record.id)
        matches[hit.record.id] = _meaning(hit, terms) if known is None else replace(known, similarity=hit.score)
        held = weight.get(hit.record.id, 0.0)
        weight[hit.record.id] = held + w if FUSION == "rrf" else max(held, w)
    ranked = [replace(m, score=round(weight[ref], 6)) for ref, m in matches.items()]
    ranked.sort(
        key=lambda m: (
            not (prefer_working and m.working),
            -m.score,
            not m.by_words,
            -(0.0 if m.by_words else m.similarity or 0.0),
            -m.record.updated_at.timestamp(),
            m.record.id,
        )
    )
    return ranked


def _spread(cosines: list[float]) -> tuple[float, float]:
    """The mean and standard deviation of the vector candidates' similarities."""
    if not cosines:
        return 0.0, 0.0
    mean = sum(cosines) / len(cosines)
    return mean, math.sqrt(sum((c - mean) ** 2 for c in cosines) / len(cosines))


def outlier(similarity: float, mean: float, sd: float, threshold: float | None = None) -> float:
    """How much a similarity stands out from the vector candidates' (``mean``, ``sd``), in [0, 1]:
    0 up to ``OUTLIER_Z`` standard deviations above the mean (what the nearest of ``POOL``
    unrelated memories reaches by chance), rising linearly to 1 at twice that."""
    if sd <= 0:
        return 0.0
    z0 = OUTLIER_Z if threshold is None else threshold
    return min(1.0, max(0.0, ((similarity - mean) / sd - z0) / OUTLIER_Z))


def coverage(lexical: list[Match], terms: list[text.QueryTerm]) -> float:
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


def recall_context(ctx: CallContext, args: RecallContextArgs) -> RecallContextResult:
    """recall's ranking, deduplicated and packed into one block under max_items and max_tokens."""
    if not args.query.strip():
        ranked = listing(ctx, _filter(ctx, args), POOL, prefer_working=args.prefer_working)
        no_match = None if ranked else nothing_listed(args)
        terms: list[text.QueryTerm] = []
    else:
        terms, ranked, no_match = _recall_ranked(ctx, args, pool=POOL)
    chosen: list[Match] = []
    seen: set[str] = set()
    for match in ranked:
        key = dedupe_key(match.record.content)
        if key in seen:
            continue
        seen.add(key)
        chosen.append(match)
        if len(chosen) == args.max_items:
            break
    packed = pack(completed(chosen, terms, full=False), args.max_tokens)
    block = "".join(packed.parts)
    return RecallContextResult(
        project=ctx.project_ref,
        context=None if args.output_json else block,
        items=packed.items if args.output_json else None,
        references=[item.reference for item in packed.items],
        used_tokens=text.estimate_tokens(block),
        truncated=packed.truncated,
        no_match=no_match,
    )
