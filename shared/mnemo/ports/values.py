"""The values the ports exchange: where a call acts (``Scope``), what it filters (``MemoryFilter``),
the index's queries and hits, pages of a walk, store changes, and the errors a port raises."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Literal, TypeVar

from mnemo.models.records import MAX_HISTORY_BYTES as MAX_HISTORY_BYTES  # bounds of a record's history
from mnemo.models.records import MAX_VERSIONS as MAX_VERSIONS
from mnemo.models.records import MemoryRecord
from mnemo.text import QueryTerm

#: ``MemoryStore.neighbours``' most neighbours on each side of an anchor
MAX_NEIGHBOURS = 2


def kept_versions(sizes: Iterable[int]) -> int:
    """How many of a memory's versions, newest first with these content sizes (UTF-8 bytes), its
    history keeps: the newest while both bounds hold."""
    kept = total = 0
    for size in sizes:
        if kept == MAX_VERSIONS or total + size > MAX_HISTORY_BYTES:
            break
        kept, total = kept + 1, total + size
    return kept


RateClass = Literal["search", "write"]


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a call acts: one project of one workspace. Every port call carries it."""

    workspace_id: str
    project_id: str


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Filters every listing and search applies; the backends translate it, never widen it.

    ``visible_teams`` None means every team (admin keys); otherwise a memory with a team must
    have one of these. ``include_unteamed`` False hides memories without a team (a ``team_id``
    narrowing). ``kind_like`` / ``path_like`` are SQL LIKE patterns with ``\\`` escapes, matched
    case-insensitively. ``updated_after`` / ``updated_before`` keep memories updated in the half-open
    window ``[updated_after, updated_before)``. ``session`` keeps the memories saved in that
    session. Expired memories (``expires_at <= now``) are never
    returned.
    """

    now: datetime
    kind: str | None = None
    tags_all: tuple[str, ...] = ()
    kind_like: str | None = None
    path_like: str | None = None
    visible_teams: frozenset[str] | None = None
    include_unteamed: bool = True
    updated_after: datetime | None = None
    updated_before: datetime | None = None
    #: only memories saved in this session (``Memory.session``)
    session: str | None = None
    #: also memories another one superseded (``superseded_by`` set); False leaves them out
    include_superseded: bool = False

    def in_window(self, updated_at: datetime) -> bool:
        return (self.updated_after is None or updated_at >= self.updated_after) and (
            self.updated_before is None or updated_at < self.updated_before
        )


@dataclass(frozen=True, slots=True)
class IndexQuery:
    scope: Scope
    terms: Sequence[QueryTerm]
    mode: Literal["all", "any"]
    filter: MemoryFilter
    limit: int
    #: rank memories of kind ``working`` before all others (then by score)
    prefer_working: bool = False


@dataclass(frozen=True, slots=True)
class VectorQuery:
    """The memories of the scope whose vectors (of ``model``) lie nearest ``vector``, best first,
    at cosine ``min_score`` or more, passing ``filter``."""

    scope: Scope
    vector: Sequence[float]
    model: str
    filter: MemoryFilter
    limit: int
    min_score: float = 0.0


@dataclass(frozen=True, slots=True)
class IndexHit:
    record: MemoryRecord
    score: float
    #: the query terms (``QueryTerm.text``) the record matched, when the index knows them (the
    #: service then need not analyse the record again); None: unknown
    matched: tuple[str, ...] | None = None


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One bounded page of a walk or a listing. ``cursor`` resumes after these items (the cleanup
    job persists it with ``save_checkpoint``); ``None`` means the end was reached."""

    items: list[T]
    cursor: str | None
    #: how many items the backend looked at to fill the page (a filtered scan reads more than it
    #: returns); None: ``len(items)``. Budgets count this.
    examined: int | None = None


@dataclass(frozen=True, slots=True)
class StoreChange:
    """One change of the record store, as its change stream reports it (the stream indexer)."""

    action: Literal["upsert", "remove"]
    #: the record after the change (upsert) or before it (remove)
    record: MemoryRecord
    #: when the store made the change (None: unknown, treated as old)
    at: datetime | None = None


class VersionConflict(Exception):
    """A conditional write found another version (or no record) in the store."""


class Duplicate(Exception):
    """``MemoryStore.create(..., dedupe=True)`` found a live record of the project with the same
    ``mnemo.text.fingerprint``; ``memory_id`` is that record's."""

    def __init__(self, memory_id: str) -> None:
        super().__init__(memory_id)
        self.memory_id = memory_id


class IdempotencyMismatch(Exception):
    """An idempotency key was used before with other arguments."""


#: how long a key replays its first result (docs/contract.md §3)
IDEMPOTENCY_TTL_S = 24 * 3600
#: how long the first call's claim holds its key: a call that died (timeout, crash) frees it then
IDEMPOTENCY_IN_PROGRESS_S = 30
