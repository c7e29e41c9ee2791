"""One top-k search: the threshold that bounds every unread document, and the judging of read
documents in order of the most they could score, over its read state (``reads``) and its judged
state (``verdicts``). Also the query's groups of terms (the character pairs of one CJK word go
together) and the co-occurrence lookups through them, which let terms that seldom meet each keep
their own group's threshold."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from mnemo import text
from mnemo.backends.sqlite.topk.reads import Reads
from mnemo.backends.sqlite.topk.source import PostingSource, Term, weigh
from mnemo.backends.sqlite.topk.verdicts import Verdicts

#: ``bounds`` works over arrays from this many documents × terms (a loop per document below)
ARRAYS_FROM = 1024


@dataclass(slots=True)
class Search:
    """One top-k search over the postings of a plan (``engine`` has the idea).

    Sorted reads (``reads.read_to``) note each document's best impact per term as far as read. A
    read document is *judged* — in order of the most it could score, and only while that could
    make the answer — by one call of the source per batch: its record is filtered and, unless what
    was read already gives its exact score, every term's impact in it is looked up (random
    access)."""

    source: PostingSource
    terms: list[Term]
    every: bool  # mode "all": a document must hold every term
    reads: Reads
    verdicts: Verdicts
    #: the terms in groups that go together (the character pairs of one CJK word); each other term alone
    groups: list[list[int]] = field(default_factory=list)
    group_of: list[int] = field(default_factory=list)  # term → its group
    #: every document holding terms of two or more groups (``any``), once worked out; a document
    #: outside it holds terms of one group at most, besides those of ``common``
    several: set[int] | None = None
    #: the terms of a group left out of ``several`` (a very common one: looking up which documents
    #: hold it would go through most of the others' postings, and it adds little to a score)
    common: list[int] = field(default_factory=list)

    @classmethod
    def start(cls, source: PostingSource, terms: list[Term], every: bool, ceiling: float) -> Search:
        """A search that has read and judged nothing yet."""
        return cls(source, terms, every, Reads(source, terms, ceiling), Verdicts(source, terms, every))

    def __post_init__(self) -> None:
        for i, term in enumerate(self.terms):
            previous = self.terms[i - 1].text if i else ""
            pair = len(term.text) == 2 and text.is_cjk(term.text)
            if self.groups and pair and len(previous) == 2 and text.is_cjk(previous) and previous[1] == term.text[0]:
                self.groups[-1].append(i)  # the next character pair of the same CJK word
            else:
                self.groups.append([i])
            self.group_of.append(len(self.groups) - 1)

    # -- bounds -----------------------------------------------------------------------------------

    def threshold(self) -> float:
        """No document unread so far scores above this (-inf: every qualifying one was read)."""
        caps = self.reads.caps()
        if self.every and not all(caps):
            return -math.inf  # a document holding every term holds a term read to its end: read
        if not any(caps):
            return -math.inf
        if self.several is None:
            return sum(caps)
        # documents holding terms of several groups were all judged: the others hold one group's
        # terms at most, and the common group's
        others = [sum(caps[i] for i in group) for group in self.groups if group != self.common]
        return max(others, default=0.0) + sum(caps[i] for i in self.common)

    def likely_kth(self, limit: int) -> float:
        """What the ``limit``-th best score will be at least, if the documents read pass the
        filters (only to decide when to judge): the ``limit``-th best of what was read of the
        documents at the head of each key's postings."""
        heads = self.reads.heads(limit)
        if len(heads) < limit:
            return -math.inf
        idfs = [t.idf for t in self.terms]
        partial = self.reads.partial
        return heapq.nlargest(limit, (weigh(idfs, partial[doc]) for doc in heads))[-1]

    def _rest(self, owners: list[int], caps: list[float]) -> float:
        """The most a document read for these terms can get from the others: any term's, or
        (``several`` known, the document not in it) its own group's and the common group's."""
        if self.several is None:
            return sum(caps) - sum(caps[i] for i in owners)
        group = self.groups[self.group_of[owners[0]]]
        common = sum(caps[i] for i in self.common)
        if group == self.common:
            others = [sum(caps[i] for i in g) for g in self.groups if g != self.common]
            return common - sum(caps[i] for i in owners) + max(others, default=0.0)
        return sum(caps[i] for i in group) - sum(caps[i] for i in owners if i in group) + common

    # -- judging the documents read -------------------------------------------------------------

    def judge(self, limit: int) -> None:
        """Judge the read documents that could make the answer, most promising first: those read
        for several terms, and the head of each key's postings down to where even its best
        impact with every other term's most could not reach the ``limit``-th best score."""
        reads = self.reads
        caps = reads.caps()
        heads = reads.heads(limit)
        # documents read for several terms first: the head scan below bounds a document by what
        # it was read for plus the others' caps, which holds only for documents read for one term
        self._judge(reads.multi | heads, limit, caps)
        kth = self.verdicts.kth(limit)
        candidates = set()
        for key, rows in reads.lists.items():
            owners = reads.owners[key]
            rest = self._rest(owners, caps)
            weight = sum(self.terms[i].idf for i in owners if len(self.terms[i].keys) == 1)
            # a term of several keys may hold a better impact in a key not read that far
            spread = [(self.terms[i].idf, caps[i]) for i in owners if len(self.terms[i].keys) > 1]
            for doc, impact in rows:
                most = weight * impact + sum(max(w * impact, cap) for w, cap in spread) + rest
                if most < kth:
                    break  # and so is every later posting of this key
                candidates.add(doc)
        self._judge(candidates, limit, caps)

    def _judge(self, docs: Iterable[int], limit: int, caps: list[float]) -> None:
        verdicts, partial = self.verdicts, self.reads.partial
        judged = verdicts.judged
        todo = [doc for doc in docs if doc not in judged]
        if not todo:
            return
        candidates, failing = self.bounds(todo, caps)
        judged.update(failing)
        candidates.sort(reverse=True)
        if verdicts.lookups_left == 0:  # spent: rank by what was read, check the best few
            rest = sorted(((least, doc) for _, least, doc, _ in candidates), reverse=True)
            verdicts.check({doc: (least, tuple(partial[doc])) for least, doc in rest[: 4 * limit]})
            return
        kth, start, batch = verdicts.kth(limit), 0, max(limit, 16)
        while start < len(candidates) and candidates[start][0] >= kth:
            chunk = candidates[start : start + batch]
            start += batch
            batch *= 2
            verdicts.check({doc: (least, tuple(partial[doc])) for _, least, doc, exact in chunk if exact})
            inexact = [(least, doc) for _, least, doc, exact in chunk if not exact]
            if verdicts.lookups_left is not None and len(inexact) >= verdicts.lookups_left:
                allowed, verdicts.lookups_left = verdicts.lookups_left, 0
                verdicts.evaluate([doc for _, doc in inexact[:allowed]])
                # no lookups left: the rest ranked by what was read of them, the best few checked
                rest = [*inexact[allowed:], *((least, doc) for _, least, doc, exact in candidates[start:] if not exact)]
                rest.sort(reverse=True)
                verdicts.check({doc: (least, tuple(partial[doc])) for least, doc in rest[: 4 * limit]})
                return
            if verdicts.lookups_left is not None:
                verdicts.lookups_left -= len(inexact)
            verdicts.evaluate([doc for _, doc in inexact])
            kth = verdicts.kth(limit)

    def bounds(self, docs: list[int], caps: list[float]) -> tuple[list[tuple[float, float, int, bool]], list[int]]:
        """Per read document: the most it could score (``most``), what was read of it (``least``),
        and whether that is its exact score (``exact``: nothing unread of its terms could add more),
        as ``(most, least, doc, exact)``; and the documents that cannot qualify (``all``: a term read
        to its end without them). Per term, a document read for it gets what was read (``idf ×
        impact``) unless a key of the term not read as deep could hold more (then the term's cap,
        inexact); one not read for it gets its cap (0 for a term read to its end). ``most`` sums
        them, or, ``several`` known and the document not in it, takes its own group's (the group it
        was read for; not read for any but the common one: the group that would add the most) and
        the common group's.

        This runs for every document a search considers: a thousand of them × sixteen terms for a
        CJK memory's ``similar``, where a loop per document and term cost 4-6 ms at 100,000
        memories and arrays (numpy) a third of that; a few dozen documents × three terms (a
        recall at 10,000) cost more in arrays' calls than in the loop. Both add each document's
        terms in order, so they make the same floats (``weigh``: the answers' ties)."""
        if len(docs) * len(self.terms) < ARRAYS_FROM:
            return self._bounds_each(docs, caps)
        return self._bounds_arrays(docs, caps)

    def _bounds_arrays(
        self, docs: list[int], caps: list[float]
    ) -> tuple[list[tuple[float, float, int, bool]], list[int]]:
        """``bounds`` over a documents × terms array."""
        n = len(self.terms)
        idfs = np.array([t.idf for t in self.terms])
        cap = np.array(caps)
        partial = self.reads.partial
        seen = np.fromiter(chain.from_iterable(partial[doc] for doc in docs), np.float64, len(docs) * n)
        seen = seen.reshape(len(docs), n)
        known = seen * idfs
        held = seen != 0
        several_keys = np.array([len(t.keys) > 1 for t in self.terms])
        final = held & (~several_keys | (known >= cap))  # read for it: nothing unread is better
        ended = ~held & (cap == 0)  # read to its end without the document
        exact_of = final | ended
        most_of = np.where(final, known, np.where(ended, 0.0, np.maximum(known, cap)))
        least = _in_order(known, range(n))
        qualifies = ~ended.any(axis=1) if self.every else np.ones(len(docs), dtype=bool)
        if self.several is None:
            most, exact = _in_order(most_of, range(n)), exact_of.all(axis=1)
        else:
            most, exact = self._group_bounds(docs, held, most_of, exact_of)
        chosen = np.flatnonzero(qualifies)
        failing = [docs[i] for i in np.flatnonzero(~qualifies).tolist()]
        rows = zip(
            most[chosen].tolist(),
            least[chosen].tolist(),
            [docs[i] for i in chosen.tolist()],
            exact[chosen].tolist(),
            strict=True,
        )
        return list(rows), failing

    def _bounds_each(
        self, docs: list[int], caps: list[float]
    ) -> tuple[list[tuple[float, float, int, bool]], list[int]]:
        """``bounds`` one document at a time (kept tight: local names, no per-document lists of groups)."""
        idfs = [t.idf for t in self.terms]
        several_keys = [len(t.keys) > 1 for t in self.terms]
        terms = range(len(idfs))
        candidates: list[tuple[float, float, int, bool]] = []  # (at most, at least, doc, exact)
        failing: list[int] = []
        partial, several_docs, every = self.reads.partial, self.several, self.every
        common = self.common
        common_set = set(common)
        others = [g for g in self.groups if g != common]  # the groups a document may hold one of
        group_of = [others.index(g) if g != common else -1 for g in (self.groups[self.group_of[i]] for i in terms)]
        for doc in docs:
            seen = partial[doc]
            most_of = [0.0] * len(idfs)  # per term: the most it can add
            least = 0.0
            exact = qualifies = True
            for i in terms:
                impact, cap = seen[i], caps[i]
                known = idfs[i] * impact
                least += known
                if impact and (not several_keys[i] or known >= cap):
                    most_of[i] = known  # read for this term: nothing unread of it can be better
                elif not impact and not cap:
                    qualifies = qualifies and not every  # read to its end without this document
                else:
                    most_of[i] = known if known > cap else cap
                    exact = False
            if not qualifies:
                failing.append(doc)
                continue
            if several_docs is None or doc in several_docs:
                most = sum(most_of)
            else:
                # it holds one group's terms at most, besides the common group's: the group it was
                # read for, or (read for the common group only) the one that would add the most
                held = next((group_of[i] for i in terms if seen[i] and i not in common_set), -1)
                pool = [others[held]] if held >= 0 else others
                sums = [sum(most_of[i] for i in g) for g in pool]
                most = max(sums, default=0.0) + sum(most_of[i] for i in common)
                exact = all(most_of[i] == idfs[i] * seen[i] for g in pool for i in g) and all(
                    most_of[i] == idfs[i] * seen[i] for i in common
                )
            candidates.append((most, least, doc, exact))
        return candidates, failing

    def _group_bounds(
        self, docs: list[int], held: np.ndarray, most_of: np.ndarray, exact_of: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``most`` and ``exact`` once ``several`` is known (see ``bounds``)."""
        common = self.common
        others = [g for g in self.groups if g != common]  # the groups a document may hold one of
        sums = np.column_stack([_in_order(most_of, g) for g in others]) if others else np.zeros((len(docs), 1))
        exacts = (
            np.column_stack([exact_of[:, g].all(axis=1) for g in others])
            if others
            else np.ones((len(docs), 1), dtype=bool)
        )
        common_sum, common_exact = _in_order(most_of, common), exact_of[:, common].all(axis=1)
        # the group a document was read for: that of its first term read, the common group's left out
        group = np.full(len(self.terms), -1)
        for g, terms in enumerate(others):
            group[terms] = g
        read_for = held & (group >= 0)
        own = np.where(read_for.any(axis=1), group[read_for.argmax(axis=1)], -1)
        rows = np.arange(len(docs))
        mine = np.maximum(own, 0)
        most = np.where(own >= 0, sums[rows, mine], sums.max(axis=1)) + common_sum
        exact = np.where(own >= 0, exacts[rows, mine], exacts.all(axis=1)) & common_exact
        if self.several:
            inside = np.fromiter((doc in self.several for doc in docs), bool, len(docs))
            total = _in_order(most_of, range(len(self.terms)))
            most = np.where(inside, total, most)
            exact = np.where(inside, exact_of.all(axis=1), exact)
        return most, exact

    # -- lookups through the source ---------------------------------------------------------------

    def group_df(self, group: list[int]) -> int:
        """How many postings a group's terms have."""
        return sum(sum(self.terms[t].keys.values()) for t in group)

    def several_cost(self) -> int:
        """Lookups ``holding_several_groups`` makes (at most): each posting of a group but the
        commonest, once per key of the commoner groups."""
        order = sorted((g for g in self.groups if g != self.common), key=self.group_df)
        keys = [sum(len(self.terms[t].keys) for t in g) for g in order]
        return sum(self.group_df(g) * sum(keys[i + 1 :]) for i, g in enumerate(order[:-1]))

    def holding_several_groups(self) -> dict[int, list[int]]:
        """Every document that holds terms of two or more groups, with each term's impact in it:
        each group's documents (but the commonest group's) that hold a term of a commoner group
        (lookups only, by the source; a document found by several of these has its impacts from
        each). Terms of one group (a CJK word's character pairs) go together anyway: looking up
        which documents hold several of them would find most of their documents."""
        order = sorted((g for g in self.groups if g != self.common), key=self.group_df)
        found: dict[int, list[int]] = {}
        for i, group in enumerate(order[:-1]):
            later = [t for g in order[i + 1 :] for t in g]
            for driver in group:
                self._cooccurring(driver, later, every=False, into=found, also=self.common)
        return found

    def holding_every_term(self, limit: int) -> None:
        """Every document that holds every term (the rarest term's documents that hold the others,
        looked up by the source, with their impacts), the best of them scored."""
        rarest = min(range(len(self.terms)), key=lambda t: sum(self.terms[t].keys.values()))
        found: dict[int, list[int]] = {}
        self._cooccurring(rarest, [t for t in range(len(self.terms)) if t != rarest], every=True, into=found)
        judged = self.verdicts.judged
        self.verdicts.take_best({doc: impacts for doc, impacts in found.items() if doc not in judged}, limit)

    def _cooccurring(
        self, driver: int, others: list[int], *, every: bool, into: dict[int, list[int]], also: Sequence[int] = ()
    ) -> None:
        """The documents of term ``driver`` that hold all (``every``) or any of the ``others``,
        with the impacts of the driver, of the others and of the terms ``also`` in them, merged
        into ``into``. One call of the source (a term of several keys may give a document several
        rows, merged here by their best impact)."""
        joined = [*others, *also]
        rows = self.source.cooccurring(
            list(self.terms[driver].keys), [list(self.terms[t].keys) for t in joined], len(others), every=every
        )
        n = len(self.terms)
        for doc, impact, *found in rows:
            impacts = into.get(doc)
            if impacts is None:
                impacts = into[doc] = [0] * n
            if impact > impacts[driver]:
                impacts[driver] = impact
            for t, value in zip(joined, found, strict=True):
                if value and value > impacts[t]:
                    impacts[t] = value


def _in_order(values: np.ndarray, columns: Iterable[int]) -> np.ndarray:
    """Per row, the sum of these columns added one after another (as Python's ``sum`` of a row's
    values in that order adds them: the same float)."""
    total = np.zeros(len(values))
    for i in columns:
        total = total + values[:, i]
    return total
