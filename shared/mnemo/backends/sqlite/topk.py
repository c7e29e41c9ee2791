"""The top-k engine of the SQLite index: Fagin's threshold algorithm over impact-ordered postings,
pure Python over a :class:`PostingSource` (``postings.SqlPostings`` reads the tables; a unit test
gives it lists).

**Top k without scoring every match**: a search reads the best ``size`` postings of each key,
completes the scores of the documents it saw by random access, and knows that no unseen document
can score above the *threshold*, the sum of each term's IDF × the last impact read for it.
Documents that score strictly above it are final: their records are filtered, and once ``limit``
of them pass, they are the answer, in score order, ties newest first. Otherwise ``size`` grows; a
key read to its end means no unseen document holds that term. Past ``max_size`` postings a key,
an ``all`` query reads its rarest term's postings to the end (exact, and as costly as that term is
common), and an ``any`` query (``recall``: best effort) answers from the documents it has seen —
it reads at most ``max_total`` postings over all its keys and looks up at most ``max_lookups``
documents, scoring the others by what was read of them; when its filters reject every document
read, it scores the records that pass them instead (``Search.passing``). So a query of a very
common word costs what its top postings cost, not what its matches do.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from mnemo import text

#: postings read per key in the first round (at least), and at most before the fallback
MIN_SIZE, MAX_SIZE = 32, 4096
#: an ``any`` query (recall: best effort) reads at most this many postings over all its keys
#: (each key at least ``MIN_SIZE``): a query of sixteen common words expands into ~40 keys, and
#: reading 4,096 of each in Python cost 150-300 ms at 10,000 memories (2,048 in all: under 50 ms)
MAX_TOTAL = 2048
#: and scores at most this many documents by random access (their impacts looked up), the rest by
#: what was read of them: with sixteen common terms the bounds stay loose, and lookups of thousands
#: of documents cost 300 ms at 10,000 memories
MAX_LOOKUPS = 256

#: a group of terms whose postings number this share of the project's documents or more (1/8)
#: is left out of the co-occurrence lookups of an ``any`` query (``Search.common``)
COMMON_SHARE = 8

#: a filter that passes at most this many records (and an eighth of the project) has them all
#: scored at once (``Search.passing``): reading the best postings, which hardly pass such a filter,
#: cost a recall of "… last week" with nothing saved last week 10 ms at 10,000 memories
FEW = 256

#: when an ``all`` query of several terms has no answer after ``DRIVE_AFTER`` rounds, it looks up,
#: through the source, which documents hold all its terms, if its rarest term has at most ``DRIVE`` postings
DRIVE, DRIVE_AFTER = 8192, 1


@dataclass(frozen=True, slots=True)
class Budgets:
    """How far a search reads before it changes strategy (the constants above)."""

    min_size: int = MIN_SIZE
    max_size: int = MAX_SIZE
    max_total: int = MAX_TOTAL
    max_lookups: int = MAX_LOOKUPS
    drive: int = DRIVE
    drive_after: int = DRIVE_AFTER
    few: int = FEW


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
        (None: it holds none). The first ``required`` groups must all be held (``every``) or at
        least one of them; a document may come in several rows."""
        ...

    def filtered(self, docs: Sequence[int]) -> Iterable[tuple[int, str]]:
        """Of these documents, those whose record passes the filter, with its ``updated_at``."""
        ...

    def impacts(self, docs: Sequence[int], terms: Sequence[Sequence[int]], *, every: bool) -> Iterable[Sequence[Any]]:
        """Of these documents, those whose record passes the filter (and, ``every``, that hold a
        key of every term): rows ``doc, updated_at, *found``, one impact (or None) per term; a
        document may come in several rows."""
        ...

    def matching(self, keys: Sequence[int]) -> Iterable[tuple[int, str, int, int]]:
        """Every posting of these keys whose record passes the filter: (doc, updated_at, key, impact)."""
        ...

    def passing_at_most(self, most: int) -> int:
        """How many records pass the filter, counted no further than ``most``."""
        ...


Scored = tuple[float, str, tuple[int, ...]]  # score, updated_at, each term's impact (0: not held)


@dataclass(slots=True)
class Search:
    """One top-k search over the postings of a plan (the module docstring has the idea).

    Sorted reads (``read_to``) note each document's best impact per term as far as read. A read
    document is *judged* — in order of the most it could score, and only while that could make
    the answer — by one call of the source per batch: its record is filtered and, unless what was
    read already gives its exact score, every term's impact in it is looked up (random access)."""

    source: PostingSource
    terms: list[Term]
    every: bool  # mode "all": a document must hold every term
    #: the most an unread posting can weigh (a key read to nowhere yet)
    ceiling: float
    #: documents read so far, with each term's best impact as far as read
    partial: dict[int, list[int]] = field(default_factory=dict)
    #: documents that pass the filters (and hold every term, for ``all``), exactly scored
    scored: dict[int, Scored] = field(default_factory=dict)
    #: documents judged (scored, or known to fail the filters or a term), or left out for good
    judged: set[int] = field(default_factory=set)
    read: dict[int, int] = field(default_factory=dict)  # postings read per key
    last: dict[int, int] = field(default_factory=dict)  # impact of the last posting read per key
    exhausted: set[int] = field(default_factory=set)
    owners: dict[int, list[int]] = field(default_factory=dict)  # key → the terms it serves
    #: each key's postings read, best first
    lists: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    #: documents read for two or more terms
    multi: set[int] = field(default_factory=set)
    #: the terms in groups that go together (the character pairs of one CJK word); each other term alone
    groups: list[list[int]] = field(default_factory=list)
    group_of: list[int] = field(default_factory=list)  # term → its group
    #: every document holding terms of two or more groups (``any``), once worked out; a document
    #: outside it holds terms of one group at most, besides those of ``common``
    several: set[int] | None = None
    #: the terms of a group left out of ``several`` (a very common one: looking up which documents
    #: hold it would go through most of the others' postings, and it adds little to a score)
    common: list[int] = field(default_factory=list)
    #: documents an ``any`` search may still score by random access (None: no bound); past it, a
    #: document is scored by what was read of it (best effort, as ``recall`` is)
    lookups_left: int | None = None

    def __post_init__(self) -> None:
        for i, term in enumerate(self.terms):
            for key in term.keys:
                self.owners.setdefault(key, []).append(i)
            previous = self.terms[i - 1].text if i else ""
            pair = len(term.text) == 2 and text.is_cjk(term.text)
            if self.groups and pair and len(previous) == 2 and text.is_cjk(previous) and previous[1] == term.text[0]:
                self.groups[-1].append(i)  # the next character pair of the same CJK word
            else:
                self.groups.append([i])
            self.group_of.append(len(self.groups) - 1)

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

    def threshold(self) -> float:
        """No document unread so far scores above this (-inf: every qualifying one was read)."""
        caps = self.caps()
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

    def holding_several_groups(self) -> dict[int, list[int]]:
        """Every document that holds terms of two or more groups, with each term's impact in it:
        each group's documents (but the commonest group's) that hold a term of a commoner group
        (lookups only, by the source; a document found by several of these has its impacts from
        each). Terms of one group (a CJK word's character pairs) go together anyway: looking up
        which documents hold several of them would find most of their documents."""
        order = sorted((g for g in self.groups if g != self.common), key=self._group_df)
        found: dict[int, list[int]] = {}
        for i, group in enumerate(order[:-1]):
            later = [t for g in order[i + 1 :] for t in g]
            for driver in group:
                self._cooccurring(driver, later, every=False, into=found, also=self.common)
        return found

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

    def take_best(self, candidates: dict[int, list[int]], limit: int) -> None:
        """Of documents whose impacts are all known, score the best ones that pass the filters:
        in score order, in batches, until ``limit`` pass and the next scores less (ties at the
        ``limit``-th score are all checked: the newest of them wins)."""
        idfs = [t.idf for t in self.terms]
        ranked = sorted(
            ((sum(w * i for w, i in zip(idfs, impacts, strict=True)), doc) for doc, impacts in candidates.items()),
            reverse=True,
        )
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

    def _group_df(self, group: list[int]) -> int:
        return sum(sum(self.terms[t].keys.values()) for t in group)

    def several_cost(self) -> int:
        """Lookups ``holding_several_groups`` makes (at most): each posting of a group but the
        commonest, once per key of the commoner groups."""
        order = sorted((g for g in self.groups if g != self.common), key=self._group_df)
        keys = [sum(len(self.terms[t].keys) for t in g) for g in order]
        return sum(self._group_df(g) * sum(keys[i + 1 :]) for i, g in enumerate(order[:-1]))

    def kth(self, limit: int) -> float:
        """The ``limit``-th best exact score so far (-inf while fewer are known)."""
        if len(self.scored) < limit:
            return -math.inf
        scores = sorted((score for score, _, _ in self.scored.values()), reverse=True)
        return scores[limit - 1]

    def likely_kth(self, limit: int) -> float:
        """What the ``limit``-th best score will be at least, if the documents read pass the
        filters (only to decide when to judge): the ``limit``-th best of what was read of the
        documents at the head of each key's postings."""
        heads = {doc for rows in self.lists.values() for doc, _ in rows[:limit]}
        if len(heads) < limit:
            return -math.inf
        idfs = [t.idf for t in self.terms]
        least = (sum(w * i for w, i in zip(idfs, self.partial[doc], strict=True)) for doc in heads)
        return heapq.nlargest(limit, least)[-1]

    def judge(self, limit: int) -> None:
        """Judge the read documents that could make the answer, most promising first: those read
        for several terms, and the head of each key's postings down to where even its best
        impact with every other term's most could not reach the ``limit``-th best score."""
        caps = self.caps()
        heads = {doc for rows in self.lists.values() for doc, _ in rows[:limit]}
        # documents read for several terms first: the head scan below bounds a document by what
        # it was read for plus the others' caps, which holds only for documents read for one term
        self._judge(self.multi | heads, limit, caps)
        kth = self.kth(limit)
        candidates = set()
        for key, rows in self.lists.items():
            owners = self.owners[key]
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

    def _judge(self, docs: Iterable[int], limit: int, caps: list[float]) -> None:
        # runs once per document considered: kept tight (local names, no per-document lists of groups)
        idfs = [t.idf for t in self.terms]
        several_keys = [len(t.keys) > 1 for t in self.terms]
        terms = range(len(idfs))
        candidates: list[tuple[float, float, int, bool]] = []  # (at most, at least, doc, exact)
        several_docs, judged, partial, every = self.several, self.judged, self.partial, self.every
        common = self.common
        common_set = set(common)
        others = [g for g in self.groups if g != common]  # the groups a document may hold one of
        group_of = [others.index(g) if g != common else -1 for g in (self.groups[self.group_of[i]] for i in terms)]
        for doc in docs:
            if doc in judged:
                continue
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
                judged.add(doc)
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
        candidates.sort(reverse=True)
        if self.lookups_left == 0:  # spent: rank by what was read, check the best few
            rest = sorted(((least, doc) for _, least, doc, _ in candidates), reverse=True)
            self.check({doc: (least, tuple(self.partial[doc])) for least, doc in rest[: 4 * limit]})
            return
        kth, start, batch = self.kth(limit), 0, max(limit, 16)
        while start < len(candidates) and candidates[start][0] >= kth:
            chunk = candidates[start : start + batch]
            start += batch
            batch *= 2
            self.check({doc: (least, tuple(self.partial[doc])) for _, least, doc, exact in chunk if exact})
            inexact = [(least, doc) for _, least, doc, exact in chunk if not exact]
            if self.lookups_left is not None and len(inexact) >= self.lookups_left:
                allowed, self.lookups_left = self.lookups_left, 0
                self.evaluate([doc for _, doc in inexact[:allowed]])
                # no lookups left: the rest ranked by what was read of them, the best few checked
                rest = [*inexact[allowed:], *((least, doc) for _, least, doc, exact in candidates[start:] if not exact)]
                rest.sort(reverse=True)
                self.check({doc: (least, tuple(self.partial[doc])) for least, doc in rest[: 4 * limit]})
                return
            if self.lookups_left is not None:
                self.lookups_left -= len(inexact)
            self.evaluate([doc for _, doc in inexact])
            kth = self.kth(limit)

    def evaluate(self, docs: Sequence[int]) -> None:
        """Score these documents exactly (those that pass the filters, and hold every term for
        ``all``), in one statement."""
        docs = [doc for doc in docs if doc not in self.judged]
        if not docs:
            return
        self.judged.update(docs)
        n = len(self.terms)
        # a term of several keys may give a document several rows, merged by their best impact
        rows = self.source.impacts(docs, [list(t.keys) for t in self.terms], every=self.every)
        idfs = [t.idf for t in self.terms]
        found_impacts: dict[int, tuple[str, list[int]]] = {}
        for doc, updated_at, *found in rows:
            seen = found_impacts.get(doc)
            if seen is None:
                seen = found_impacts[doc] = (updated_at, [0] * n)
            for i, value in enumerate(found):
                if value and value > seen[1][i]:
                    seen[1][i] = value
        for doc, (updated_at, impacts) in found_impacts.items():
            self.scored[doc] = (sum(w * i for w, i in zip(idfs, impacts, strict=True)), updated_at, tuple(impacts))

    def check(self, docs: dict[int, tuple[float, tuple[int, ...]]]) -> None:
        """Filter documents whose score is known already."""
        docs = {doc: v for doc, v in docs.items() if doc not in self.judged}
        if not docs:
            return
        self.judged.update(docs)
        for doc, updated_at in self.source.filtered(list(docs)):
            score, impacts = docs[doc]
            self.scored[doc] = (score, updated_at, impacts)

    def holding_every_term(self, limit: int) -> None:
        """Every document that holds every term (the rarest term's documents that hold the others,
        looked up by the source, with their impacts), the best of them scored."""
        rarest = min(range(len(self.terms)), key=lambda t: sum(self.terms[t].keys.values()))
        found: dict[int, list[int]] = {}
        self._cooccurring(rarest, [t for t in range(len(self.terms)) if t != rarest], every=True, into=found)
        self.take_best({doc: impacts for doc, impacts in found.items() if doc not in self.judged}, limit)

    def passing(self) -> None:
        """Score every document that passes the filters and holds a term (every term, for ``all``):
        the source filters the project's records, and looks up each passing one's impacts. For a
        filter the best postings hardly pass (``recall`` with a narrow ``path_filter`` or a time
        window), where reading every posting of common terms in Python would cost what all their
        matches do."""
        keys = [key for term in self.terms for key in term.keys]
        slots: dict[int, list[int]] = {}
        for i, term in enumerate(self.terms):
            for key in term.keys:
                slots.setdefault(key, []).append(i)
        n, idfs = len(self.terms), [t.idf for t in self.terms]
        found: dict[int, tuple[str, list[int]]] = {}
        for doc, updated_at, key, impact in self.source.matching(keys):
            seen = found.get(doc)
            if seen is None:
                seen = found[doc] = (updated_at, [0] * n)
            for i in slots[key]:
                if impact > seen[1][i]:
                    seen[1][i] = impact
        for doc, (updated_at, impacts) in found.items():
            if self.every and not all(impacts):
                continue
            self.scored[doc] = (sum(w * i for w, i in zip(idfs, impacts, strict=True)), updated_at, tuple(impacts))
        self.judged.update(found)

    def matched(self, doc: int) -> tuple[str, ...]:
        impacts = self.scored[doc][2]
        return tuple(term.text for term, impact in zip(self.terms, impacts, strict=True) if impact)


#: one answer: the document, its score (in impact units) and the terms it matched
Hit = tuple[int, float, tuple[str, ...]]


def top_k(
    source: PostingSource,
    plan: Sequence[Term],
    *,
    mode: Literal["all", "any"],
    limit: int,
    docs: int,
    ceiling: float,
    budgets: Budgets = Budgets(),
) -> list[Hit]:
    """The ``limit`` best documents for the plan's terms (those that match some key), best first,
    ties newest first. ``docs`` is the project's document count; ``ceiling`` the most a posting
    can weigh."""
    terms = [term for term in plan if term.keys]
    if not terms:
        return []
    every = mode == "all" and len(terms) > 1
    search = Search(source, terms, every, ceiling)
    best = _run(search, mode, limit, docs, budgets)
    return [(doc, score, search.matched(doc)) for doc, (score, _, _) in best]


def _run(search: Search, mode: str, limit: int, docs: int, budgets: Budgets) -> list[tuple[int, Scored]]:
    terms, every = search.terms, search.every
    few = min(budgets.few, docs // 8)
    if few > 0 and search.source.passing_at_most(few + 1) <= few:
        # the filter passes few records: score them all, exactly, rather than read postings
        search.passing()
        return _best(search, -math.inf, limit)
    if not every:
        search.lookups_left = budgets.max_lookups
    rarest = min(sum(term.keys.values()) for term in terms)
    if not every and len(search.groups) > 2:
        commonest = max(search.groups, key=search._group_df)
        if search._group_df(commonest) * COMMON_SHARE >= docs:
            search.common = commonest
    if not every and len(search.groups) > 1 and search.several_cost() <= budgets.drive:
        # Terms that seldom meet make a sum threshold fall only when their postings are read
        # deep. Knowing which documents hold several of them (lookups through the rarer terms'
        # postings, by the source) leaves each of the others to its own group's threshold.
        several = search.holding_several_groups()
        search.several = set(several)
        search.take_best(several, limit)
    size = max(budgets.min_size, 2 * limit)
    keys = sum(len(term.keys) for term in terms)
    max_size = budgets.max_size
    if not every:  # recall's budget over all keys (each key at least min_size)
        max_size = max(budgets.min_size, min(budgets.max_size, budgets.max_total // keys))
        size = min(size, max_size)
    rounds = 0
    while True:
        search.read_to(size)
        if not every and size < max_size and search.threshold() > search.likely_kth(limit):
            # Unread documents could still beat what was read: judging now would look up
            # documents that deeper reads (cheaper than lookups) will rule out.
            size = min(4 * size, max_size)
            continue
        search.judge(limit)
        bound = search.threshold()
        if search.kth(limit) > bound or bound == -math.inf:
            return _best(search, bound, limit)
        rounds += 1
        if every and rounds == budgets.drive_after and rarest <= budgets.drive:
            # The best postings of terms that seldom meet hardly make documents holding them
            # all. The rarest term is rare enough to go through its postings: the documents
            # holding every term, exactly, looked up by the source.
            search.holding_every_term(limit)
            return _best(search, -math.inf, limit)
        if size < max_size:
            size = min(4 * size, max_size)
            continue
        if every:
            # bounded reading found too few: every document holding all terms, whatever it costs
            search.holding_every_term(limit)
            return _best(search, -math.inf, limit)
        if mode == "any" and len(search.scored) >= limit:
            # best effort (``any``): answer from the documents read, when enough pass
            return _best(search, -math.inf, limit)
        # too few pass the filters among the best postings: the documents that pass, from the
        # records (exact; its cost is the project's size, in C, not its postings in Python)
        search.passing()
        return _best(search, -math.inf, limit)


def _best(search: Search, bound: float, limit: int) -> list[tuple[int, Scored]]:
    best = [item for item in search.scored.items() if item[1][0] > bound]
    best.sort(key=lambda item: (item[1][0], item[1][1]), reverse=True)
    return best[:limit]
