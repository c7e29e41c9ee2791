"""The judged state of a top-k search: which documents were judged (filtered and, where what was
read does not settle it, looked up by random access), the exact scores of those that pass, and
the answer they make. Apart from the read state (``reads``): judging never reads a key's postings
in order."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from mnemo.backends.sqlite.topk.source import PostingSource, Scored, Term, weigh


@dataclass(slots=True)
class Verdicts:
    """The documents judged so far, and the scores of those that make candidates for the answer."""

    source: PostingSource
    terms: list[Term]
    every: bool  # mode "all": a document must hold every term
    #: documents that pass the filters (and hold every term, for ``all``), exactly scored
    scored: dict[int, Scored] = field(default_factory=dict)
    #: documents judged (scored, or known to fail the filters or a term), or left out for good
    judged: set[int] = field(default_factory=set)
    #: documents an ``any`` search may still score by random access (None: no bound); past it, a
    #: document is scored by what was read of it (best effort, as ``recall`` is)
    lookups_left: int | None = None

    @property
    def idfs(self) -> list[float]:
        return [t.idf for t in self.terms]

    def kth(self, limit: int) -> float:
        """The ``limit``-th best exact score so far (-inf while fewer are known)."""
        if len(self.scored) < limit:
            return -math.inf
        scores = sorted((score for score, _, _ in self.scored.values()), reverse=True)
        return scores[limit - 1]

    def check(self, docs: dict[int, tuple[float, tuple[int, ...]]]) -> None:
        """Filter documents whose score is known already."""
        docs = {doc: v for doc, v in docs.items() if doc not in self.judged}
        if not docs:
            return
        self.judged.update(docs)
        for doc, updated_at in self.source.filtered(list(docs)):
            score, impacts = docs[doc]
            self.scored[doc] = (score, updated_at, impacts)

    def evaluate(self, docs: Sequence[int]) -> None:
        """Score these documents exactly (those that pass the filters, and hold every term for
        ``all``), in one statement."""
        docs = [doc for doc in docs if doc not in self.judged]
        if not docs:
            return
        self.judged.update(docs)
        self._score(self.source.impacts(docs, [list(t.keys) for t in self.terms], every=self.every))

    def take_best(self, candidates: dict[int, list[int]], limit: int) -> None:
        """Of documents whose impacts are all known, score the best ones that pass the filters:
        in score order, in batches, until ``limit`` pass and the next scores less (ties at the
        ``limit``-th score are all checked: the newest of them wins)."""
        idfs = self.idfs
        ranked = sorted(((weigh(idfs, impacts), doc) for doc, impacts in candidates.items()), reverse=True)
        start, batch = 0, max(2 * limit, 16)
        while start < len(ranked):
            kth = self.kth(limit)
            if ranked[start][0] < kth:
                break
            chunk = ranked[start : start + batch]
            start += batch
            batch *= 2
            self.check({doc: (score, tuple(candidates[doc])) for score, doc in chunk})
        self.judged.update(candidates)

    def passing(self) -> None:
        """Score every document that passes the filters and holds a term (every term, for ``all``):
        the source filters the project's records, and looks up each passing one's impacts. For a
        filter the best postings hardly pass (``recall`` with a narrow ``path_filter`` or a time
        window), where reading every posting of common terms in Python would cost what all their
        matches do."""
        self.judged.update(self._score(self.source.matching([key for term in self.terms for key in term.keys])))

    def _score(self, rows: Iterable[tuple[int, str, int | None, int | None]]) -> list[int]:
        """Score the documents of rows (doc, updated_at, key, impact): each term's impact in a
        document is the best of its keys' (key None: the document holds none of them). Those that
        hold every term, for ``all``, go to ``scored``; returns every document of the rows."""
        slots: dict[int, list[int]] = {}
        for i, term in enumerate(self.terms):
            for term_key in term.keys:
                slots.setdefault(term_key, []).append(i)
        n, idfs = len(self.terms), self.idfs
        found: dict[int, tuple[str, list[int]]] = {}
        for doc, updated_at, key, impact in rows:
            seen = found.get(doc)
            if seen is None:
                seen = found[doc] = (updated_at, [0] * n)
            if key is not None and impact is not None:
                for i in slots[key]:
                    if impact > seen[1][i]:
                        seen[1][i] = impact
        for doc, (updated_at, impacts) in found.items():
            if self.every and not all(impacts):
                continue
            self.scored[doc] = (weigh(idfs, impacts), updated_at, tuple(impacts))
        return list(found)

    def best(self, bound: float, limit: int) -> list[tuple[int, Scored]]:
        """The ``limit`` best documents scored above ``bound``, best first, ties newest first."""
        best = [item for item in self.scored.items() if item[1][0] > bound]
        best.sort(key=lambda item: (item[1][0], item[1][1]), reverse=True)
        return best[:limit]

    def matched(self, doc: int) -> tuple[str, ...]:
        """The terms a scored document holds."""
        impacts = self.scored[doc][2]
        return tuple(term.text for term, impact in zip(self.terms, impacts, strict=True) if impact)
