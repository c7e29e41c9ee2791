"""One index hit analysed against the query in Python: which terms matched in which field, and
recall's order."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mnemo import text
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexHit

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
    fields = {name: _found_in(terms, doc[name]) for name in _FIELDS}
    found = {term for names in fields.values() for term in names}
    return Match(record, hit.score, fields, [t.text for t in terms if t.text in found])


def _found_in(terms: Sequence[text.QueryTerm], doc_terms: set[str]) -> list[str]:
    """The query terms ``text.term_matches`` finds in ``doc_terms``, in query order. A prefix term
    is looked up by bisection in the sorted terms (the first term not below a prefix starts with it
    if any does): scanning every term for every prefix was most of recall's time on long queries
    (64 prefixes × 200 candidates × 3 fields)."""
    ordered: list[str] | None = None
    out: list[str] = []
    for term in terms:
        if not term.prefix:
            if term.text in doc_terms:
                out.append(term.text)
            continue
        if ordered is None:
            ordered = sorted(doc_terms)
        at = bisect_left(ordered, term.text)
        if at < len(ordered) and ordered[at].startswith(term.text):
            out.append(term.text)
    return out


def rank_key(match: Match, *, prefer_working: bool) -> tuple[bool, int, float, datetime, str]:
    """recall's order, best first when sorted in reverse: working memories first (when asked),
    then more distinct query terms matched, then the index's score, then the newest."""
    record = match.record
    return (prefer_working and match.working, len(match.matched), match.score, record.updated_at, record.id)
