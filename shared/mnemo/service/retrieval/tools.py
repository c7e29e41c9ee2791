"""The tools: search_memory (strict), recall (forgiving) and recall_context (recall, packed).

An empty query (nothing but spaces) asks what changed: the most recently updated memories that
pass the filters and the ``updated_after`` / ``updated_before`` window, newest first, from the
record store's recent listing (no index query).

recall and recall_context take a ``mode``: ``lexical`` ranks the word search's best ``POOL``
candidates (the index's BM25 score, then recency); ``semantic`` ranks the vector search's (cosine,
at least the embedder's floor); ``hybrid`` (the default) asks both, with the same filters, and
ranks them by the service's fusion rule (:mod:`.fusion`; the adopted one, ``ZScore``, unless the
service was given another). Without an embedder (``MNEMO_EMBEDDER=none``), or when it fails at
query time, ``hybrid`` is ``lexical``. The pipeline: :mod:`.candidates` (both halves' pools) →
:mod:`.fusion` → :mod:`.context` (hybrid: memories saved together lend each other weight) →
:mod:`.explain` (the results and their reasons)."""

from __future__ import annotations

from dataclasses import replace

from mnemo import text
from mnemo.errors import InvalidRequest
from mnemo.models.retrieval import (
    NoMatch,
    RecallArgs,
    RecallContextArgs,
    RecallContextResult,
    RetrievalArgs,
    RetrievalResult,
    SearchMemoryArgs,
)
from mnemo.ports import IndexQuery, MemoryFilter
from mnemo.service.context import CallContext
from mnemo.service.retrieval import candidates, context
from mnemo.service.retrieval.candidates import POOL
from mnemo.service.retrieval.diagnosis import diagnose, no_match_result, no_terms, nothing_listed
from mnemo.service.retrieval.explain import result_items
from mnemo.service.retrieval.fusion import ADOPTED
from mnemo.service.retrieval.matching import WORKING, Match, analyse
from mnemo.service.retrieval.packing import dedupe_key, pack


def _filter(ctx: CallContext, args: RetrievalArgs, team_id: str | None = None) -> MemoryFilter:
    return ctx.memory_filter(
        team_id=team_id,
        kind_like=args.memory_type,
        path_like=args.path_filter,
        updated_after=args.updated_after,
        updated_before=args.updated_before,
        session=args.session,
        include_superseded=args.include_superseded,
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
            candidates.completed(ranked[: args.limit], terms, full=args.explain),
            terms,
            explain=args.explain,
            prefer_working=args.prefer_working,
            mode=args.mode,
        ),
    )


def _recall_ranked(
    ctx: CallContext, args: RecallArgs | RecallContextArgs, *, pool: int
) -> tuple[list[text.QueryTerm], list[Match], NoMatch | None]:
    """recall's pipeline: the candidates of each half (:mod:`.candidates`), ranked by meaning alone
    (``semantic``), by words alone (``lexical``) or by the service's fusion rule (``hybrid``,
    :mod:`.fusion`)."""
    mode = args.mode
    if mode != "lexical" and ctx.embedder is None:
        if mode == "semantic":
            raise InvalidRequest(
                "mode 'semantic' needs an embedder and this deployment has none (MNEMO_EMBEDDER=none)",
                details=[{"loc": ["mode"], "type": "value_error"}],
            )
        mode = "lexical"
    full = isinstance(args, RecallArgs) and args.explain
    flt = _filter(ctx, args)
    pools = candidates.gather(ctx, args.query, flt, mode, pool=pool, prefer_working=args.prefer_working, full=full)
    terms = pools.terms
    if mode == "semantic":
        ranked = [candidates.by_meaning(hit, terms) for hit in pools.similar]
        ranked.sort(key=lambda m: (args.prefer_working and m.working, m.score), reverse=True)
        if not ranked:
            return terms, [], NoMatch(cause="nothing_similar", reason="no memory's meaning is near the query's")
        return terms, ranked, None
    if mode == "lexical":
        ranked = pools.lexical
    else:
        ranked = (ctx.fusion or ADOPTED).fuse(pools)
        rule = ctx.neighbours or context.ADOPTED
        ranked = context.lend(ctx, ranked, flt, rule, prefer_working=args.prefer_working)
    if ranked:
        return terms, ranked, None
    if not terms:
        return terms, [], no_terms()
    return terms, [], diagnose(ctx, terms, args, strict=False, team_id=None)


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
    packed = pack(candidates.completed(chosen, terms, full=False), args.max_tokens)
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
