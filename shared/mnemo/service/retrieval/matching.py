"""One index hit analysed against the query in Python: which terms matched in which field (and
through which words), and recall's order."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from mnemo import text
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexHit

WORKING = "working"


_FIELDS = ("content", "tags", "path")


@dataclass(frozen=True, slots=True)
class Match:
    """One index hit, analysed against the query."""

    record: MemoryRecord
    score: float
    #: distinct query terms found in any field, in query order
    matched: list[str]
    #: field name → the query terms (analysed text) found in that field, in query order; only
    #: when analysed in full (``explain``)
    fields: dict[str, list[str]] = field(default_factory=dict)
    #: query term → the memory's words it matched only through its stem (not as written)
    via_stem: dict[str, list[str]] = field(default_factory=dict)
    #: the cosine of the query's and the memory's vectors, when the vector search found it
    similarity: float | None = None
    #: whether the word search found it (False: by meaning only)
    by_words: bool = True
    #: False for a memory found by meaning whose terms are not worked out yet (``matched`` empty
    #: until :func:`completed`: only the ones an answer shows need it)
    analysed: bool = True
    #: the part of ``score`` the memories saved next to it lent it (recall's context, :mod:`.context`)
    lent: float = 0.0
    #: found only as a neighbour of a candidate (neither half found it)
    via_context: bool = False

    @property
    def matched_by(self) -> str:
        if self.via_context:
            return "context"
        if self.similarity is None:
            return "words"
        return "both" if self.by_words else "meaning"

    @property
    def working(self) -> bool:
        return (self.record.kind or "").casefold() == WORKING


class _Words:
    """A field's distinct words, for ``text.matching_words`` in time that does not grow with the
    field's length per term: each word stemmed once (the stem looked up in a dict), and a prefix
    term's words found by bisection in the sorted words (those starting with it follow the first
    word not below it)."""

    __slots__ = ("by_stem", "ordered")

    def __init__(self, analysed: Iterable[str]) -> None:
        self.ordered = sorted(set(analysed))
        self.by_stem: dict[str, list[str]] = {}
        for word, stem in zip(self.ordered, text.stems(self.ordered), strict=True):
            self.by_stem.setdefault(stem, []).append(word)

    def matching(self, term: text.QueryTerm) -> list[str]:
        """What ``text.matching_words(term, these words)`` answers (distinct, sorted)."""
        found = self.by_stem.get(term.stem, [])
        if not term.prefix:
            return found
        ordered, at, prefixed = self.ordered, bisect_left(self.ordered, term.text), []
        while at < len(ordered) and ordered[at].startswith(term.text):
            prefixed.append(ordered[at])
            at += 1
        return sorted({*found, *prefixed}) if found else prefixed


def analyse(hit: IndexHit, terms: Sequence[text.QueryTerm], *, full: bool = False) -> Match:
    """The hit against the query. Which terms matched comes from the index when it says; the
    fields and the words each term matched (``full``) are worked out from the record."""
    if hit.matched is not None and not full:
        found = set(hit.matched)
        return Match(hit.record, hit.score, [t.text for t in terms if t.text in found])
    record = hit.record
    doc = {
        "content": _Words(text.terms(record.content)),
        "tags": _Words(text.terms(" ".join(record.tags))),
        "path": _Words(text.terms(record.path or "")),
    }
    fields: dict[str, list[str]] = {name: [] for name in _FIELDS}
    words: dict[str, set[str]] = {}
    for term in terms:
        for name in _FIELDS:
            hits = doc[name].matching(term)
            if hits:
                fields[name].append(term.text)
                words.setdefault(term.text, set()).update(hits)
    via_stem = {}
    for term in terms:
        found_words = words.get(term.text)
        if not found_words:
            continue
        as_written = any(w == term.text or (term.prefix and w.startswith(term.text)) for w in found_words)
        if not as_written:
            via_stem[term.text] = sorted(found_words)
    return Match(record, hit.score, [t.text for t in terms if t.text in words], fields, via_stem)


def rank_key(match: Match, *, prefer_working: bool) -> tuple[bool, float, datetime, str]:
    """recall's order by words, best first when sorted in reverse: working memories first (when
    asked), then the index's relevance score (BM25: a rare term weighs more than a common one, and
    each matched term adds), then the newest."""
    record = match.record
    return (prefer_working and match.working, match.score, record.updated_at, record.id)
