"""Read your writes on AWS: a search's index hits merged with the project's most recent changes.

The index shows a change only a stream batch and a refresh after its write returned, so every
search also reads the project's changes of the last ``window`` from DynamoDB while the OpenSearch
query runs on a pool thread (:class:`ReadYourWrites`), and merges them here exactly as the index
would have matched them (:func:`analysed`, the indexer's own document; ``items.matches`` for the
filters): a stale hit is replaced or dropped, a matching change the index lacks is added with a
provisional score, and vector searches merge at the exact cosine (:func:`merge_similar`). The
rules, case by case: docs/aws.md, "Read your writes".
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Protocol, TypeVar

from mnemo import text
from mnemo.backends.aws.items import RecentChange, matches
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexHit, IndexQuery, Scope, VectorQuery

#: the most recent changes one search merges (a burst beyond this within the window is merged in part)
MAX_RECENT_CHANGES = 1000
#: analyses a process keeps (:func:`analysed`): four full windows of :data:`MAX_RECENT_CHANGES`,
#: ≈ 7 KB each at the bench corpus's 230-byte contents (≈ 28 MB in all; the search function has 512 MB)
ANALYSED_CACHE = 4 * MAX_RECENT_CHANGES

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The process's threads for the OpenSearch half of a search (built on first use, shared)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="mnemo-search")
        return _pool


@dataclass(frozen=True, slots=True)
class IndexPage:
    """What one OpenSearch query returned."""

    hits: list[IndexHit]
    #: the query asked for this many hits (a page with fewer holds every match)
    size: int
    #: memory id → version of the window's documents that match the query (the ``fresh``
    #: aggregation; in a burst of matching changes beyond what it lists, a change it does not list
    #: is merged as if the index did not hold it)
    fresh: dict[str, int] = field(default_factory=dict)

    @property
    def full(self) -> bool:
        return len(self.hits) >= self.size


@dataclass(frozen=True, slots=True)
class Analysed:
    """A record's distinct analysed words (content, tags and path, as the index's ``*_terms``
    fields hold them) and their stems: what a query term is matched against."""

    #: distinct, in no particular order (scanned for prefixes only)
    words: tuple[str, ...]
    stems: frozenset[str]

    def has(self, term: text.QueryTerm) -> bool:
        """``mnemo.text.term_matches`` against these words, with the stems looked up instead of
        computed: a word sharing the term's stem, or with ``prefix`` a word starting with it."""
        return term.stem in self.stems or (term.prefix and any(w.startswith(term.text) for w in self.words))


@lru_cache(maxsize=ANALYSED_CACHE)
def _analyse(content: str, tags: tuple[str, ...], path: str) -> Analysed:
    words = {*text.terms(content), *text.terms(" ".join(tags)), *text.terms(path)}
    return Analysed(tuple(words), frozenset(text.stem(word) for word in words))


def analysed(record: MemoryRecord) -> Analysed:
    """The record's analysis, computed once per process for the same content, tags and path.
    Keyed by what it reads rather than by (id, version): a memory id reused after a delete starts
    again at version 1, and a key of the inputs can never answer for other text."""
    return _analyse(record.content, tuple(record.tags), record.path or "")


def matched_terms(query: IndexQuery, record: MemoryRecord) -> int:
    """How many of the query's terms the record's indexed document contains."""
    found = analysed(record)
    return sum(1 for term in query.terms if found.has(term))


def qualifies(query: IndexQuery, record: MemoryRecord) -> int | None:
    """The number of query terms the record matches when the index would return it, else None."""
    if not matches(record, query.filter):
        return None
    found = matched_terms(query, record)
    needed = len(query.terms) if query.mode == "all" else 1
    return found if found >= needed else None


def provisional_score(found: int, scored: Sequence[tuple[float, int]]) -> float:
    """The score of a memory the index has not scored yet, matching ``found`` query terms, among
    the hits' (score, terms matched): the best score of a hit matching no more terms than it
    does; when every hit matches more, the lowest score; 0 without hits. With ties going to the
    newest, a fresh memory thus ranks just before the best hit it matches at least as well as."""
    no_better = [score for score, hit_found in scored if hit_found <= found]
    if no_better:
        return max(no_better)
    return min((score for score, _ in scored), default=0.0)


def order_key(query: IndexQuery, hit: IndexHit) -> tuple[bool, float, datetime, str]:
    """The index's sort (``index.search_body``), as a key for ``sorted(..., reverse=True)``."""
    record = hit.record
    working = query.prefer_working and (record.kind or "").casefold() == "working"
    return (working, hit.score, record.updated_at, record.id)


class RecentChanges(Protocol):
    """Where a search finds the changes the index may not show yet (``DynamoMemoryStore``)."""

    def recent_changes(
        self, scope: Scope, since: datetime, first_page: int, most: int
    ) -> tuple[list[RecentChange], bool]: ...


_Query = TypeVar("_Query", IndexQuery, VectorQuery)
_Page = TypeVar("_Page", IndexPage, list[IndexHit])


@dataclass(frozen=True, slots=True)
class ReadYourWrites:
    """A search's two halves at once: the index asked on a pool thread while this one reads the
    project's changes of the last ``window`` (one consistent ``Query`` of ``first_page`` items;
    this thread keeps the trace context its DynamoDB call needs), then merged."""

    changes: RecentChanges
    window: timedelta
    first_page: int

    def search(
        self,
        query: _Query,
        ask: Callable[[_Query, datetime], _Page],
        merge: Callable[[_Query, _Page, Sequence[RecentChange]], Merged],
    ) -> list[IndexHit]:
        """``ask`` the index while reading the changes, then ``merge`` them; when the changes
        removed hits from a full page, ask for enough to fill it."""
        since = utc_now() - self.window
        pending = pool().submit(ask, query, since)
        try:
            changes, _ = self.changes.recent_changes(query.scope, since, self.first_page, MAX_RECENT_CHANGES)
        except BaseException:
            pending.cancel()
            raise
        merged = merge(query, pending.result(), changes)
        if merged.short:
            wider = replace(query, limit=query.limit + len(changes))
            merged = merge(query, ask(wider, since), changes)
        return merged.hits


@dataclass(frozen=True, slots=True)
class Merged:
    hits: list[IndexHit]
    #: a full page lost hits to the changes: more matches may follow it in the index
    short: bool


def merge(query: IndexQuery, page: IndexPage, changes: Sequence[RecentChange]) -> Merged:
    """The hits as the index will show them once it has every change."""
    latest = {change.memory_id: change for change in changes}
    kept: list[IndexHit] = []
    dropped = 0
    for hit in page.hits:
        change = latest.get(hit.record.id)
        if change is None or (change.record is not None and change.version == hit.record.version):
            kept.append(hit)  # unchanged, or the index already holds this version
        elif change.record is not None and qualifies(query, change.record) is not None:
            kept.append(IndexHit(change.record, hit.score))  # newer, still matches: keeps its place
        else:
            dropped += 1  # deleted, expired, or no longer matching
    hit_ids = {hit.record.id for hit in page.hits}
    added: list[tuple[MemoryRecord, int]] = []
    for change in changes:
        record = change.record
        if record is None or record.id in hit_ids:
            continue
        if page.fresh.get(record.id) == record.version:
            continue  # the index holds this version as a match and ranks it below the page
        found = qualifies(query, record)
        if found is not None:
            added.append((record, found))
    if added:
        every = len(query.terms)
        scored = [(hit.score, every if query.mode == "all" else matched_terms(query, hit.record)) for hit in kept]
        kept += [IndexHit(record, provisional_score(found, scored)) for record, found in added]
    kept.sort(key=lambda hit: order_key(query, hit), reverse=True)
    return Merged(kept[: query.limit], short=bool(dropped) and page.full and len(kept) < query.limit)


def cosine(query: VectorQuery, record: MemoryRecord) -> float | None:
    """The record's cosine with the query's vector, as the index scores it; None when the record
    has no vector of the query's model and dimension."""
    embedding = record.embedding
    if embedding is None or embedding.model != query.model or embedding.dim != len(query.vector):
        return None
    vector = embedding.vector  # (sum over map: C loops, ≈ 10 µs at 256 dimensions)
    dot = sum(map(operator.mul, query.vector, vector))
    norms = math.sqrt(sum(map(operator.mul, query.vector, query.vector)) * sum(map(operator.mul, vector, vector)))
    return dot / norms if norms else None


def similar_score(query: VectorQuery, record: MemoryRecord) -> float | None:
    """The record's score when the vector search would return it, else None."""
    if not matches(record, query.filter):
        return None
    score = cosine(query, record)
    return score if score is not None and score >= query.min_score else None


def merge_similar(query: VectorQuery, hits: Sequence[IndexHit], changes: Sequence[RecentChange]) -> Merged:
    """A vector search's hits as the index will show them once it has every change."""
    latest = {change.memory_id: change for change in changes}
    kept: list[IndexHit] = []
    dropped = 0
    for hit in hits:
        change = latest.get(hit.record.id)
        if change is None or (change.record is not None and change.version == hit.record.version):
            kept.append(hit)
        elif change.record is not None and (score := similar_score(query, change.record)) is not None:
            kept.append(IndexHit(change.record, score))
        else:
            dropped += 1
    hit_ids = {hit.record.id for hit in hits}
    for change in changes:
        record = change.record
        if record is None or record.id in hit_ids:
            continue
        if (score := similar_score(query, record)) is not None:
            kept.append(IndexHit(record, score))
    kept.sort(key=lambda hit: (hit.score, hit.record.updated_at, hit.record.id), reverse=True)
    full = len(hits) >= query.limit
    return Merged(kept[: query.limit], short=bool(dropped) and full and len(kept) < query.limit)
