"""Results as the caller sees them, and with ``explain`` why each ranks where it does."""

from __future__ import annotations

from collections.abc import Sequence

from mnemo import text
from mnemo.models.retrieval import (
    Explanation,
    MatchedFields,
    RetrievalItem,
)
from mnemo.service.retrieval.matching import Match


def result_items(
    matches: Sequence[Match],
    terms: Sequence[text.QueryTerm],
    *,
    explain: bool,
    prefer_working: bool,
    mode: str = "lexical",
) -> list[RetrievalItem]:
    # hybrid fell back to words alone (no embedder, or it failed): explained as lexical
    fused = mode == "hybrid" and any(m.similarity is not None or m.lent > 0 for m in matches)
    items = []
    for index, match in enumerate(matches):
        record = match.record
        explanation = None
        if explain:
            previous = matches[index - 1] if index else None
            if mode == "semantic":
                why = _semantic_reason(index + 1, match, previous, len(terms), prefer_working=prefer_working)
            elif fused:
                why = _hybrid_reason(index + 1, match, previous, len(terms), prefer_working=prefer_working)
            else:
                why = reason(index + 1, match, previous, len(terms), prefer_working=prefer_working)
            explanation = Explanation(
                matched_terms=match.matched,
                unmatched_terms=[t.text for t in terms if t.text not in match.matched],
                fields=MatchedFields(**match.fields),
                via_stem=match.via_stem,
                matched_by=match.matched_by,  # type: ignore[arg-type]
                similarity=None if match.similarity is None else round(match.similarity, 4),
                rank=index + 1,
                reason=why,
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
                supersedes=record.supersedes,
                superseded_by=record.superseded_by,
                explanation=explanation,
            )
        )
    return items


def _coverage(match: Match, term_count: int) -> str:
    found = len(match.matched)
    if term_count == 1:
        said = "the term matched" if found else "the term did not match"
    elif found == term_count:
        said = f"all {term_count} terms matched"
    else:
        said = f"{found} of {term_count} terms matched"
    if match.via_stem:
        said += " (" + ", ".join(f"'{t}' as {_words(w)}" for t, w in match.via_stem.items()) + ", by stem)"
    return said


def _words(words: list[str]) -> str:
    return " / ".join(f"'{w}'" for w in words)


def _listed_reason(rank: int, match: Match, previous: Match | None, *, prefer_working: bool) -> str:
    """An empty query lists what changed: newest first (working memories first when asked)."""
    parts = [f"rank {rank}: no query, so the most recently updated first"]
    if prefer_working and match.working:
        parts.append("working memory, listed before the rest (prefer_working)")
    elif previous is None:
        parts.append("the newest")
    elif prefer_working and previous.working:
        parts.append(f"not a working memory, so after rank {rank - 1} (prefer_working)")
    else:
        parts.append(f"updated earlier than rank {rank - 1}")
    return "; ".join(parts)


def reason(rank: int, match: Match, previous: Match | None, term_count: int, *, prefer_working: bool) -> str:
    """Why ``match`` sits at ``rank``: compared with the result just above it."""
    if term_count == 0:
        return _listed_reason(rank, match, previous, prefer_working=prefer_working)
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
    elif match.score < previous.score:
        parts.append(f"lower relevance score than {above} ({match.score:.3g} vs {previous.score:.3g})")
    elif match.record.updated_at < previous.record.updated_at:
        parts.append(f"same relevance as {above}, updated earlier")
    else:
        parts.append(f"tied with {above}")
    return "; ".join(parts)


def _found(match: Match, term_count: int) -> str:
    if match.matched_by == "context":
        words = f"; {_coverage(match, term_count)}" if term_count and match.matched else ""
        return f"found through its neighbours only (the memories saved just before and after it{words})"
    return _found_itself(match, term_count) + _through_neighbours(match)


def _through_neighbours(match: Match) -> str:
    """What recall's context lent the memory (:mod:`.context`), when anything."""
    if match.lent <= 0:
        return ""
    return f", ranking through its neighbours ({match.lent:.2f} of its weight lent by the memories saved next to it)"


def _found_itself(match: Match, term_count: int) -> str:
    similarity = f"similarity {match.similarity:.2f}" if match.similarity is not None else ""
    if match.matched_by == "meaning":
        words = f"; {_coverage(match, term_count)}" if term_count and match.matched else ""
        return f"found by meaning only ({similarity}{words})"
    if match.matched_by == "both":
        return f"found by words and meaning ({_coverage(match, term_count)}; {similarity})"
    return f"found by words only ({_coverage(match, term_count)})"


def _above(rank: int, match: Match, previous: Match | None, *, prefer_working: bool, what: str) -> str:
    """How ``match`` compares with the result above it (``what`` names the score)."""
    if previous is None:
        if prefer_working and match.working:
            return "working memory, ranked before the rest (prefer_working)"
        return "the best match"
    above = f"rank {rank - 1}"
    if prefer_working and match.working:
        return "working memory, ranked before the rest (prefer_working)"
    if prefer_working and previous.working:
        return f"not a working memory, so after {above} (prefer_working)"
    if match.score < previous.score:
        return f"lower {what} than {above} ({match.score:.3g} vs {previous.score:.3g})"
    if match.record.updated_at < previous.record.updated_at:
        return f"same {what} as {above}, updated earlier"
    return f"tied with {above}"


def _hybrid_reason(rank: int, match: Match, previous: Match | None, term_count: int, *, prefer_working: bool) -> str:
    """recall's hybrid order: each memory's fused weight (``score``: the word half's calibrated
    score, the meaning half's — what the words miss times how far the similarity stands out from
    the vector candidates' — the larger when both found it); equal weights: words first, then
    the nearer."""
    found = _found(match, term_count)
    if match.matched_by in ("meaning", "context"):
        found += f", weighing {match.score:.2f} against the words' calibrated scores"
    if previous is None or (prefer_working and (match.working or previous.working)) or match.score < previous.score:
        return f"rank {rank}: {found}; " + _above(
            rank, match, previous, prefer_working=prefer_working, what="weight (words' calibrated score, or similarity)"
        )
    if previous.by_words and not match.by_words:
        return f"rank {rank}: {found}; as heavy as rank {rank - 1}, which was found by words"
    if match.by_words:
        return f"rank {rank}: {found}; after rank {rank - 1} in the word ranking ({_word_order(match, previous)})"
    if previous.similarity is not None and match.similarity is not None and match.similarity < previous.similarity:
        return (
            f"rank {rank}: {found}; as heavy as rank {rank - 1}, lower similarity "
            f"({match.similarity:.3g} vs {previous.similarity:.3g})"
        )
    return f"rank {rank}: {found}; tied with rank {rank - 1}"


def _word_order(match: Match, previous: Match) -> str:
    if previous.similarity is not None and match.similarity is None:
        return "found by words and meaning there, by words only here; equal weight"
    return "equal weight; updated earlier"


def _semantic_reason(rank: int, match: Match, previous: Match | None, term_count: int, *, prefer_working: bool) -> str:
    return f"rank {rank}: {_found(match, term_count)}; " + _above(
        rank, match, previous, prefer_working=prefer_working, what="similarity"
    )
