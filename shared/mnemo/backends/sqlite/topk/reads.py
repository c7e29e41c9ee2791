"""The read state of a top-k search: what its sorted reads of each key's postings found (each read
document's best impact per term as far as read, where each key's reading stopped) and what that
bounds (``caps``: the most a term can add to a document not read for it). Apart from the judged
state (``verdicts``): reading never filters or scores a document."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from mnemo.backends.sqlite.topk.source import PostingSource, Term


@dataclass(slots=True)
class Reads:
    """Each key's postings read so far, best first, and what they tell of the documents read."""

    source: PostingSource
    terms: list[Term]
    #: the most an unread posting can weigh (a key read to nowhere yet)
    ceiling: float
    #: documents read so far, with each term's best impact as far as read
    partial: dict[int, list[int]] = field(default_factory=dict)
    read: dict[int, int] = field(default_factory=dict)  # postings read per key
    last: dict[int, int] = field(default_factory=dict)  # impact of the last posting read per key
    exhausted: set[int] = field(default_factory=set)
    owners: dict[int, list[int]] = field(default_factory=dict)  # key → the terms it serves
    #: each key's postings read, best first
    lists: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    #: documents read for two or more terms
    multi: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        for i, term in enumerate(self.terms):
            for key in term.keys:
                self.owners.setdefault(key, []).append(i)

    def read_to(self, size: int, keys: Iterable[int] | None = None) -> None:
        """Read every (given) key's postings up to the ``size`` best."""
        partial, n = self.partial, len(self.terms)
        for key in self.owners if keys is None else keys:
            done = self.read.get(key, 0)
            if key in self.exhausted or done >= size:
                continue
            owners = self.owners[key]
            rows = self.source.read(key, done, size - done)
            multi = self.multi
            if len(owners) == 1:  # the usual case, kept tight: this loop runs once per posting read
                i = owners[0]
                for doc, impact in rows:
                    seen = partial.get(doc)
                    if seen is None:
                        seen = partial[doc] = [0] * n
                    elif not seen[i]:
                        multi.add(doc)  # read before, for another term
                    if impact > seen[i]:
                        seen[i] = impact
            else:
                for doc, impact in rows:
                    seen = partial.get(doc)
                    if seen is None:
                        seen = partial[doc] = [0] * n
                    multi.add(doc)  # the key serves several terms
                    for i in owners:
                        if impact > seen[i]:
                            seen[i] = impact
            self.lists.setdefault(key, []).extend(rows)
            self.read[key] = done + len(rows)
            if rows:
                self.last[key] = rows[-1][1]
            if len(rows) < size - done:
                self.exhausted.add(key)

    def caps(self) -> list[float]:
        """Per term, the most it can add to a document not read for it (0: its keys were read to
        their end, so no such document holds it)."""
        out = []
        for term in self.terms:
            open_keys = [key for key in term.keys if key not in self.exhausted]
            out.append(term.idf * max(self.last.get(key, self.ceiling) for key in open_keys) if open_keys else 0.0)
        return out

    def heads(self, limit: int) -> set[int]:
        """The documents among the ``limit`` best postings read of each key."""
        return {doc for rows in self.lists.values() for doc, _ in rows[:limit]}
