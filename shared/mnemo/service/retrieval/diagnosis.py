"""Why a query found nothing (``no_match``), with at most one extra index query."""

from __future__ import annotations

from collections.abc import Sequence

from mnemo import text
from mnemo.like import is_match_all, like_matches
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.models.retrieval import (
    NoMatch,
    RetrievalArgs,
    RetrievalResult,
)
from mnemo.ports import IndexQuery, MemoryFilter
from mnemo.service.context import CallContext
from mnemo.service.retrieval.matching import analyse

#: how many candidates the single diagnostic query of a no_match looks at
DIAGNOSIS_LIMIT = 50


def no_terms() -> NoMatch:
    return NoMatch(cause="no_terms", reason="the query has no searchable words, only punctuation or symbols")


def no_match_result(ctx: CallContext, no_match: NoMatch) -> RetrievalResult:
    return RetrievalResult(project=ctx.project_ref, matched=False, results=[], no_match=no_match)


def _quoted(terms: Sequence[str]) -> str:
    return ", ".join(f"'{t}'" for t in terms)


def _nothing_matched(names: list[str]) -> NoMatch:
    what = f"'{names[0]}'" if len(names) == 1 else f"any of {_quoted(names)}"
    return NoMatch(cause="no_term_matched", reason=f"no memory contains {what}", missing_terms=names)


#: the arguments that narrow a search, in the order a reason names them
NARROWING = ("path_filter", "memory_type", "team_id", "session", "updated_after", "updated_before")


def _narrowing(args: RetrievalArgs, team_id: str | None) -> list[str]:
    names = []
    if not is_match_all(args.path_filter):
        names.append("path_filter")
    if not is_match_all(args.memory_type):
        names.append("memory_type")
    if team_id is not None:
        names.append("team_id")
    if args.session is not None:
        names.append("session")
    if args.updated_after is not None:
        names.append("updated_after")
    if args.updated_before is not None:
        names.append("updated_before")
    return names


def _excluded_by(record: MemoryRecord, args: RetrievalArgs, team_id: str | None) -> list[str]:
    names = []
    if not like_matches(args.path_filter, record.path):
        names.append("path_filter")
    if not like_matches(args.memory_type, record.kind):
        names.append("memory_type")
    if team_id is not None and record.team_id != team_id:
        names.append("team_id")
    if args.session is not None and record.session != args.session:
        names.append("session")
    if args.updated_after is not None and record.updated_at < args.updated_after:
        names.append("updated_after")
    if args.updated_before is not None and record.updated_at >= args.updated_before:
        names.append("updated_before")
    return names


def nothing_listed(args: RetrievalArgs) -> NoMatch:
    """An empty query (what changed) that lists nothing."""
    window = []
    if args.updated_after is not None:
        window.append(f"at or after {format_ts(args.updated_after)}")
    if args.updated_before is not None:
        window.append(f"before {format_ts(args.updated_before)}")
    when = f" was updated {' and '.join(window)}" if window else ""
    narrowed = [n for n in _narrowing(args, getattr(args, "team_id", None)) if not n.startswith("updated_")]
    passing = f" that passes {' and '.join(narrowed)}" if narrowed else ""
    return NoMatch(cause="nothing_listed", reason=f"no memory{passing}{when}")


def diagnose(
    ctx: CallContext, terms: Sequence[text.QueryTerm], args: RetrievalArgs, *, strict: bool, team_id: str | None
) -> NoMatch:
    """Why a query found nothing, with at most one extra index query.

    The extra query asks for memories with *any* term, within everything the key may see and
    without the caller's filters; its best DIAGNOSIS_LIMIT hits are analysed in Python.
    """
    narrowing = _narrowing(args, team_id)
    names = [t.text for t in terms]
    if ctx.trial:  # its answer is thrown away: no extra index query (a recall's cost again)
        return _nothing_matched(names)
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
        which = [name for name in NARROWING if name in excluded]
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
