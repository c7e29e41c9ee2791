"""search_memory, recall, recall_context and forget (SPEC §3): the retrieval family.

Everything here is written against the ports, so every backend behaves the same: the index only
finds and orders candidates (``IndexQuery`` mode ``all`` or ``any``, with the filters); which
terms matched where, the forgiving re-ranking, the ``no_match`` diagnosis, deduplication and
token packing are computed in Python from the records with :mod:`mnemo.text`. See
docs/retrieval.md for the rules as a user sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mnemo import text
from mnemo.like import is_match_all, like_matches
from mnemo.models.records import MemoryRecord
from mnemo.models.tools import (
    ContextItem,
    Explanation,
    ForgetArgs,
    ForgetResult,
    ForgottenRef,
    MatchedFields,
    NoMatch,
    RecallArgs,
    RecallContextArgs,
    RecallContextResult,
    RetrievalArgs,
    RetrievalItem,
    RetrievalResult,
    SearchMemoryArgs,
)
from mnemo.ports import IndexHit, IndexQuery, MemoryFilter
from mnemo.service.context import CallContext
from mnemo.service.memories import delete_memory

#: recall re-ranks this many index candidates per wanted result, at most POOL_CAP in all
POOL_FACTOR = 4
POOL_CAP = 200
#: how many candidates the single diagnostic query of a no_match looks at
DIAGNOSIS_LIMIT = 50
#: what ends a memory cut to fit, and the block when memories were left out
TRUNCATION_MARK = "…[truncated]"
#: between two memories in a context block
SEPARATOR = "\n\n"
#: a memory is cut to fit only when at least this many tokens of its text fit (else left out)
MIN_CUT_TOKENS = 8

WORKING = "working"
_FIELDS = ("content", "tags", "path")


@dataclass(frozen=True, slots=True)
class Match:
    """One index hit, analysed against the query in Python."""

    record: MemoryRecord
    score: float
    #: field name → the query terms (analysed text) found in that field, in query order
    fields: dict[str, list[str]]
    #: distinct query terms found in any field, in query order
    matched: list[str]

    @property
    def working(self) -> bool:
        return (self.record.kind or "").casefold() == WORKING


def analyse(hit: IndexHit, terms: Sequence[text.QueryTerm]) -> Match:
    record = hit.record
    doc = {
        "content": set(text.terms(record.content)),
        "tags": set(text.terms(" ".join(record.tags))),
        "path": set(text.terms(record.path or "")),
    }
    fields = {name: [t.text for t in terms if text.term_matches(t, doc[name])] for name in _FIELDS}
    found = {term for names in fields.values() for term in names}
    return Match(record, hit.score, fields, [t.text for t in terms if t.text in found])


# ---- search_memory ------------------------------------------------------------------------


def search_memory(ctx: CallContext, args: SearchMemoryArgs) -> RetrievalResult:
    """Strict: a memory must contain every term and pass every filter; otherwise no_match."""
    flt = ctx.memory_filter(team_id=args.team_id, kind_like=args.memory_type, path_like=args.path_filter)
    terms = text.query_terms(args.query)
    if not terms:
        return _no_match_result(ctx, _no_terms())
    query = IndexQuery(ctx.scope, terms, "all", flt, args.limit, prefer_working=args.prefer_working)
    matches = [analyse(hit, terms) for hit in ctx.ports.index.search(query)]
    if not matches:
        return _no_match_result(ctx, diagnose(ctx, terms, args, strict=True, team_id=args.team_id))
    return RetrievalResult(
        project=ctx.project_ref,
        matched=True,
        results=_items(matches, terms, explain=args.explain, prefer_working=args.prefer_working),
    )


# ---- recall ---------------------------------------------------------------------------------


def recall(ctx: CallContext, args: RecallArgs) -> RetrievalResult:
    """Forgiving: any term, Latin prefixes, ranked by terms matched, then score, then recency."""
    terms, ranked, no_match = _recall_ranked(ctx, args, pool=min(args.limit * POOL_FACTOR, POOL_CAP))
    if no_match is not None:
        return _no_match_result(ctx, no_match)
    return RetrievalResult(
        project=ctx.project_ref,
        matched=True,
        results=_items(ranked[: args.limit], terms, explain=args.explain, prefer_working=args.prefer_working),
    )


def rank_key(match: Match, *, prefer_working: bool) -> tuple[bool, int, float, datetime, str]:
    """recall's order, best first when sorted in reverse: working memories first (when asked),
    then more distinct query terms matched, then the index's score, then the newest."""
    record = match.record
    return (prefer_working and match.working, len(match.matched), match.score, record.updated_at, record.id)


def _recall_ranked(
    ctx: CallContext, args: RetrievalArgs, *, pool: int
) -> tuple[list[text.QueryTerm], list[Match], NoMatch | None]:
    flt = ctx.memory_filter(kind_like=args.memory_type, path_like=args.path_filter)
    terms = text.query_terms(args.query, latin_prefix=True)
    if not terms:
        return terms, [], _no_terms()
    query = IndexQuery(ctx.scope, terms, "any", flt, pool, prefer_working=args.prefer_working)
    matches = [analyse(hit, terms) for hit in ctx.ports.index.search(query)]
    if not matches:
        return terms, [], diagnose(ctx, terms, args, strict=False, team_id=None)
    matches.sort(key=lambda m: rank_key(m, prefer_working=args.prefer_working), reverse=True)
    return terms, matches, None


# ---- explain ------------------------------------------------------------------------------


def _items(
    matches: Sequence[Match], terms: Sequence[text.QueryTerm], *, explain: bool, prefer_working: bool
) -> list[RetrievalItem]:
    items = []
    for index, match in enumerate(matches):
        record = match.record
        explanation = None
        if explain:
            previous = matches[index - 1] if index else None
            explanation = Explanation(
                matched_terms=match.matched,
                unmatched_terms=[t.text for t in terms if t.text not in match.matched],
                fields=MatchedFields(**match.fields),
                rank=index + 1,
                reason=reason(index + 1, match, previous, len(terms), prefer_working=prefer_working),
            )
        items.append(
            RetrievalItem(
                reference=record.id,
                location=record.path,
                content=record.content,
                kind=record.kind,
                tags=record.tags,
                score=match.score,
                updated_at=record.updated_at,
                explanation=explanation,
            )
        )
    return items


def _coverage(match: Match, term_count: int) -> str:
    found = len(match.matched)
    if term_count == 1:
        return "the term matched" if found else "the term did not match"
    if found == term_count:
        return f"all {term_count} terms matched"
    return f"{found} of {term_count} terms matched"


def reason(rank: int, match: Match, previous: Match | None, term_count: int, *, prefer_working: bool) -> str:
    """Why ``match`` sits at ``rank``: compared with the result just above it."""
    parts = [f"rank {rank}: {_coverage(match, term_count)}"]
    if previous is None:
        if prefer_working and match.working:
            parts.append("working memory, ranked before the rest (prefer_working)")
        else:
            parts.append("the best match")
        return "; ".join(parts)
    above = f"rank {rank - 1}"
    if prefer_working and match.working:
        parts.append("working memory, ranked before the rest (prefer_working)")
    if prefer_working and previous.working and not match.working:
        parts.append(f"not a working memory, so after {above} (prefer_working)")
    elif len(match.matched) < len(previous.matched):
        parts.append(f"fewer terms matched than {above} ({len(match.matched)} vs {len(previous.matched)})")
    elif match.score < previous.score:
        parts.append(f"lower relevance score than {above} ({match.score:.3g} vs {previous.score:.3g})")
    elif match.record.updated_at < previous.record.updated_at:
        parts.append(f"same relevance as {above}, updated earlier")
    else:
        parts.append(f"tied with {above}")
    return "; ".join(parts)


# ---- no_match -------------------------------------------------------------------------------


def _no_terms() -> NoMatch:
    return NoMatch(cause="no_terms", reason="the query has no searchable words, only punctuation or symbols")


def _no_match_result(ctx: CallContext, no_match: NoMatch) -> RetrievalResult:
    return RetrievalResult(project=ctx.project_ref, matched=False, results=[], no_match=no_match)


def _quoted(terms: Sequence[str]) -> str:
    return ", ".join(f"'{t}'" for t in terms)


def _nothing_matched(names: list[str]) -> NoMatch:
    what = f"'{names[0]}'" if len(names) == 1 else f"any of {_quoted(names)}"
    return NoMatch(cause="no_term_matched", reason=f"no memory contains {what}", missing_terms=names)


def _narrowing(args: RetrievalArgs, team_id: str | None) -> list[str]:
    names = []
    if not is_match_all(args.path_filter):
        names.append("path_filter")
    if not is_match_all(args.memory_type):
        names.append("memory_type")
    if team_id is not None:
        names.append("team_id")
    return names


def _excluded_by(record: MemoryRecord, args: RetrievalArgs, team_id: str | None) -> list[str]:
    names = []
    if not like_matches(args.path_filter, record.path):
        names.append("path_filter")
    if not like_matches(args.memory_type, record.kind):
        names.append("memory_type")
    if team_id is not None and record.team_id != team_id:
        names.append("team_id")
    return names


def diagnose(
    ctx: CallContext, terms: Sequence[text.QueryTerm], args: RetrievalArgs, *, strict: bool, team_id: str | None
) -> NoMatch:
    """Why a query found nothing, with at most one extra index query.

    The extra query asks for memories with *any* term, within everything the key may see and
    without the caller's filters; its best DIAGNOSIS_LIMIT hits are analysed in Python.
    """
    narrowing = _narrowing(args, team_id)
    names = [t.text for t in terms]
    if not strict and not narrowing:
        # recall's own query was this very query: nothing visible contains any term
        return _nothing_matched(names)
    broad: MemoryFilter = ctx.memory_filter()
    hits = ctx.ports.index.search(IndexQuery(ctx.scope, terms, "any", broad, DIAGNOSIS_LIMIT))
    if not hits:
        return _nothing_matched(names)
    matches = [analyse(hit, terms) for hit in hits]
    candidates = [m for m in matches if len(m.matched) == len(terms)] if strict else matches
    if candidates and narrowing:
        excluded = {name for m in candidates for name in _excluded_by(m.record, args, team_id)} or set(narrowing)
        which = [name for name in ("path_filter", "memory_type", "team_id") if name in excluded]
        count = f"{len(candidates)}{'+' if len(hits) == DIAGNOSIS_LIMIT else ''}"
        noun = "memory matches" if len(candidates) == 1 else "memories match"
        verb = "excludes" if len(which) == 1 else "exclude"
        what = "every term" if strict else "the query"
        return NoMatch(cause="filtered_out", reason=f"{count} {noun} {what}, but {' and '.join(which)} {verb} them")
    found = {term for m in matches for term in m.matched}
    missing = [name for name in names if name not in found]
    if not missing:
        return NoMatch(
            cause="split_across_memories",
            reason=f"every term occurs, but only in different memories: none contains all of {_quoted(names)} "
            "(recall returns memories that match some of them)",
        )
    where = (
        "no memory contains"
        if len(hits) < DIAGNOSIS_LIMIT
        else f"none of the {DIAGNOSIS_LIMIT} closest memories contains"
    )
    return NoMatch(cause="term_missing", reason=f"{where} {_quoted(missing)}", missing_terms=missing)


# ---- recall_context -------------------------------------------------------------------------


def _dedupe_key(content: str) -> str:
    """Contents that differ only in case, Unicode form or whitespace count as identical."""
    return " ".join(text.normalise(content).split())


def _header(number: int, record: MemoryRecord) -> str:
    bits = [f"[{number}] {record.id}"]
    if record.kind:
        bits.append(f"kind: {record.kind}")
    if record.path:
        bits.append(f"path: {record.path}")
    if record.tags:
        bits.append("tags: " + ", ".join(record.tags))
    return " | ".join(bits) + "\n"


def cut_to(content: str, quarters: int) -> str:
    """The longest prefix of ``content`` within ``quarters`` quarter-tokens, ended at a word
    boundary when one is near, without trailing whitespace."""
    used = 0
    end = 0
    for char in content:
        weight = text.char_quarters(char)
        if used + weight > quarters:
            break
        used += weight
        end += 1
    prefix = content[:end]
    if end < len(content) and not content[end].isspace():
        boundary = max(prefix.rfind(" "), prefix.rfind("\n"))
        if boundary >= end // 2:
            prefix = prefix[:boundary]
    return prefix.rstrip()


@dataclass
class Packed:
    parts: list[str]
    items: list[ContextItem]
    truncated: bool = False


def pack(matches: Sequence[Match], max_tokens: int) -> Packed:
    """Whole memories in rank order while they fit; the first that does not is cut (and marked)
    when enough of it fits, else left out with a closing mark. Never over ``max_tokens``."""
    budget = max_tokens * 4
    mark = text.token_quarters(TRUNCATION_MARK)
    reserve = text.token_quarters(SEPARATOR) + mark
    packed = Packed([], [])
    used = 0
    for number, match in enumerate(matches, start=1):
        record = match.record
        separator = SEPARATOR if packed.parts else ""
        head = _header(number, record)
        piece = separator + head + record.content
        weight = text.token_quarters(piece)
        last = number == len(matches)
        if used + weight + (0 if last else reserve) <= budget:
            packed.parts.append(piece)
            packed.items.append(_context_item(record, record.content, head, truncated=False))
            used += weight
            continue
        packed.truncated = True
        room = budget - used - text.token_quarters(separator + head) - mark
        room = min(room, text.token_quarters(record.content) - 1)
        cut = cut_to(record.content, room) if room >= MIN_CUT_TOKENS * 4 else ""
        if cut:
            content = cut + TRUNCATION_MARK
            packed.parts.append(separator + head + content)
            packed.items.append(_context_item(record, content, head, truncated=True))
        else:
            tail = separator + TRUNCATION_MARK
            if used + text.token_quarters(tail) <= budget:
                packed.parts.append(tail)
        break
    return packed


def _context_item(record: MemoryRecord, content: str, head: str, *, truncated: bool) -> ContextItem:
    return ContextItem(
        reference=record.id,
        location=record.path,
        kind=record.kind,
        tags=record.tags,
        content=content,
        tokens=text.estimate_tokens(head + content),
        truncated=truncated,
    )


def recall_context(ctx: CallContext, args: RecallContextArgs) -> RecallContextResult:
    """recall's ranking, deduplicated and packed into one block under max_items and max_tokens."""
    _, ranked, no_match = _recall_ranked(ctx, args, pool=min(args.max_items * POOL_FACTOR, POOL_CAP))
    chosen: list[Match] = []
    seen: set[str] = set()
    for match in ranked:
        key = _dedupe_key(match.record.content)
        if key in seen:
            continue
        seen.add(key)
        chosen.append(match)
        if len(chosen) == args.max_items:
            break
    packed = pack(chosen, args.max_tokens)
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


# ---- forget ---------------------------------------------------------------------------------


def forget(ctx: CallContext, args: ForgetArgs) -> ForgetResult:
    """Delete exactly the referenced memory (404 when unknown or not visible to the key)."""
    delete_memory(ctx, args.reference)
    return ForgetResult(project=ctx.project_ref, forgotten=ForgottenRef(reference=args.reference))
