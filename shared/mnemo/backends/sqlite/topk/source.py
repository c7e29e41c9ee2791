"""What the top-k engine works on: the query's terms, the :class:`PostingSource` it reads them
through (``postings.SqlPostings`` over the tables; a unit test gives it lists), the shapes of a
score and an answer, and :func:`weigh`, the one weighted sum that makes a score of impacts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(slots=True)
class Term:
    """One query term as the index sees it: the keys it matches (id → df) and its IDF."""

    text: str
    keys: dict[int, int]
    idf: float = 0.0


class PostingSource(Protocol):
    """What the engine reads: the postings of one project, and its records under one filter. A
    document is an integer; ``updated_at`` orders ties (newest first)."""

    def read(self, key: int, offset: int, count: int) -> Sequence[tuple[int, int]]:
        """Postings ``offset`` … ``offset + count`` of a key, as (doc, impact), best impact first
        (ties: the higher doc first)."""
        ...

    def cooccurring(
        self, driver: Sequence[int], joined: Sequence[Sequence[int]], required: int, *, every: bool
    ) -> Iterable[Sequence[Any]]:
        """For each posting (doc, impact) of the ``driver`` keys: a row ``doc, impact, *found``,
        ``found`` holding, per group of ``joined`` keys, an impact of the document in one of them
        (None or 0: it holds none). The first ``required`` groups must all be held (``every``) or at
        least one of them; a document may come in several rows."""
        ...

    def filtered(self, docs: Sequence[int]) -> Iterable[tuple[int, str]]:
        """Of these documents, those whose record passes the filter, with its ``updated_at``."""
        ...

    def impacts(
        self, docs: Sequence[int], terms: Sequence[Sequence[int]], *, every: bool
    ) -> Iterable[tuple[int, str, int | None, int | None]]:
        """Of these documents, those whose record passes the filter: a row (doc, updated_at, key,
        impact) per key of the terms' ``keys`` it holds, or one (doc, updated_at, None, None) when it
        holds none. ``every``: the source may leave out a document that misses a term."""
        ...

    def matching(self, keys: Sequence[int]) -> Iterable[tuple[int, str, int, int]]:
        """Every posting of these keys whose record passes the filter: (doc, updated_at, key, impact)."""
        ...

    def passing_at_most(self, most: int) -> int:
        """How many records pass the filter, counted no further than ``most``."""
        ...


Scored = tuple[float, str, tuple[int, ...]]  # score, updated_at, each term's impact (0: not held)

#: one answer: the document, its score (in impact units) and the terms it matched
Hit = tuple[int, float, tuple[str, ...]]


def weigh(idfs: Sequence[float], impacts: Sequence[int]) -> float:
    """A document's score: each term's IDF × its impact in the document (0: not held), summed in
    term order."""
    return sum(w * i for w, i in zip(idfs, impacts, strict=True))
