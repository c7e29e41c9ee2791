"""The top-k engine's strategy: Fagin's threshold algorithm over impact-ordered postings, and when
a search changes course (``Budgets``). A :class:`~search.Search` does each step.

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
read, it scores the records that pass them instead (``Verdicts.passing``). So a query of a very
common word costs what its top postings cost, not what its matches do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mnemo.backends.sqlite.topk.search import Search
from mnemo.backends.sqlite.topk.source import Hit, PostingSource, Scored, Term

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
#: scored at once (``Verdicts.passing``): reading the best postings, which hardly pass such a
#: filter, cost a recall of "… last week" with nothing saved last week 10 ms at 10,000 memories
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
    search = Search.start(source, terms, every, ceiling)
    best = _run(search, mode, limit, docs, budgets)
    return [(doc, score, search.verdicts.matched(doc)) for doc, (score, _, _) in best]


def _run(search: Search, mode: str, limit: int, docs: int, budgets: Budgets) -> list[tuple[int, Scored]]:
    terms, every, verdicts = search.terms, search.every, search.verdicts
    if _filter_passes_few(search.source, docs, budgets):
        # the filter passes few records: score them all, exactly, rather than read postings
        verdicts.passing()
        return verdicts.best(-math.inf, limit)
    if not every:
        verdicts.lookups_left = budgets.max_lookups
    rarest = min(sum(term.keys.values()) for term in terms)
    if not every:
        _leave_out_the_commonest_group(search, docs)
    if not every and len(search.groups) > 1 and search.several_cost() <= budgets.drive:
        # Terms that seldom meet make a sum threshold fall only when their postings are read
        # deep. Knowing which documents hold several of them (lookups through the rarer terms'
        # postings, by the source) leaves each of the others to its own group's threshold.
        several = search.holding_several_groups()
        search.several = set(several)
        verdicts.take_best(several, limit)
    size, max_size = _sizes(terms, every, limit, budgets)
    rounds = 0
    while True:
        search.reads.read_to(size)
        if not every and size < max_size and search.threshold() > search.likely_kth(limit):
            # Unread documents could still beat what was read: judging now would look up
            # documents that deeper reads (cheaper than lookups) will rule out.
            size = min(4 * size, max_size)
            continue
        search.judge(limit)
        bound = search.threshold()
        if verdicts.kth(limit) > bound or bound == -math.inf:
            return verdicts.best(bound, limit)
        rounds += 1
        if every and rounds == budgets.drive_after and rarest <= budgets.drive:
            # The best postings of terms that seldom meet hardly make documents holding them
            # all. The rarest term is rare enough to go through its postings: the documents
            # holding every term, exactly, looked up by the source.
            search.holding_every_term(limit)
            return verdicts.best(-math.inf, limit)
        if size < max_size:
            size = min(4 * size, max_size)
            continue
        if every:
            # bounded reading found too few: every document holding all terms, whatever it costs
            search.holding_every_term(limit)
            return verdicts.best(-math.inf, limit)
        if mode == "any" and len(verdicts.scored) >= limit:
            # best effort (``any``): answer from the documents read, when enough pass
            return verdicts.best(-math.inf, limit)
        # too few pass the filters among the best postings: the documents that pass, from the
        # records (exact; its cost is the project's size, in C, not its postings in Python)
        verdicts.passing()
        return verdicts.best(-math.inf, limit)


def _filter_passes_few(source: PostingSource, docs: int, budgets: Budgets) -> bool:
    """Whether the filter passes at most ``few`` records (and an eighth of the project's)."""
    few = min(budgets.few, docs // 8)
    return few > 0 and source.passing_at_most(few + 1) <= few


def _leave_out_the_commonest_group(search: Search, docs: int) -> None:
    """An ``any`` search of three groups or more leaves its commonest group out of the
    co-occurrence lookups (``Search.common``) when that group is very common."""
    if len(search.groups) > 2:
        commonest = max(search.groups, key=search.group_df)
        if search.group_df(commonest) * COMMON_SHARE >= docs:
            search.common = commonest


def _sizes(terms: Sequence[Term], every: bool, limit: int, budgets: Budgets) -> tuple[int, int]:
    """The postings read per key in the first round, and at most: an ``any`` search shares its
    budget over all its keys (each key at least ``min_size``)."""
    size = max(budgets.min_size, 2 * limit)
    max_size = budgets.max_size
    if not every:
        keys = sum(len(term.keys) for term in terms)
        max_size = max(budgets.min_size, min(budgets.max_size, budgets.max_total // keys))
        size = min(size, max_size)
    return size, max_size
