"""The interfaces the service needs. Each backend (``backends/sqlite``, ``backends/aws``)
implements them; the service never imports a backend."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypeVar

from mnemo.gcra import RateDecision as RateDecision  # defined beside the algorithm that decides it
from mnemo.models.records import MAX_HISTORY_BYTES as MAX_HISTORY_BYTES  # bounds of a record's history
from mnemo.models.records import MAX_VERSIONS as MAX_VERSIONS
from mnemo.models.records import ApiKey, MemoryRecord, Principal, Project, RateLimits, Workspace
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


class Embedder(Protocol):
    """Text → vectors of meaning (``mnemo.embedding``). ``model`` names the model and its
    version: vectors of different models never compare, so each stored vector carries it."""

    @property
    def model(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector of ``dim`` numbers per text. Raises
        ``mnemo.errors.EmbedderUnavailable`` when it cannot."""
        ...


class MemoryStore(Protocol):
    """The system of record."""

    def unit_of_work(self) -> AbstractContextManager[None]:
        """Groups a record write with its index write where the backend can (SQLite: one
        transaction); elsewhere a no-op, the record store being the commit point."""
        ...

    def create(self, record: MemoryRecord, *, dedupe: bool = False, marks: Sequence[MemoryRecord] = ()) -> None:
        """Store ``record`` exactly as given (id, version, timestamps: a restore keeps them).
        Raises VersionConflict when its project already holds a record with that id; ids are
        unique inside a project, so a copy of a project may reuse its ids.

        Each project keeps, per ``mnemo.text.fingerprint``, a *claim*: which live record holds
        it. The new record takes its fingerprint's claim when no live record holds it (one of an
        expired record passes on). With ``dedupe``, a live holder makes ``create`` raise
        ``Duplicate`` and store nothing — atomically: of two identical creates racing, one is
        stored and the other raises.

        ``marks``: other records of the project written in the same transaction (supersession's
        marks), each only if the stored one is at ``mark.version - 1`` and not deleted; a mark
        never changes a fingerprint. When one is not, VersionConflict and nothing is written —
        neither ``record`` nor any mark."""
        ...

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        """The record, expired or not (the service hides expired ones)."""
        ...

    def replace(
        self,
        record: MemoryRecord,
        *,
        expected_version: int,
        previous: MemoryRecord | None = None,
        marks: Sequence[MemoryRecord] = (),
    ) -> None:
        """Write ``record`` if the stored one is at ``expected_version``; else VersionConflict.
        When the fingerprint changes (``previous`` is the record being replaced), the record
        gives up its old claim and takes the new one if no live record holds it. ``marks`` as
        in ``create``: all written with ``record`` or none."""
        ...

    def delete(
        self, scope: Scope, memory_id: str, *, expected_version: int, record: MemoryRecord | None = None
    ) -> None:
        """Remove the record if it is at ``expected_version``; else VersionConflict. Its claim goes
        with it (``record``, the stored record, lets a backend find the claim without a read), and
        every version of its history (forgetting means forgetting)."""
        ...

    def keep_version(self, previous: MemoryRecord, *, expires_at: datetime | None, dropped: int = 0) -> None:
        """Keep ``previous``, the stored version a write is about to replace, in the memory's
        history (until ``expires_at``, the memory's expiry after the write), then drop the oldest
        versions beyond :data:`MAX_VERSIONS` or :data:`MAX_HISTORY_BYTES`, counting them (plus
        ``dropped``: versions an import's source had dropped already). Called
        before the write: a write that then fails leaves a kept version at the stored version,
        which ``history`` never shows (SQLite: inside the write's unit of work, undone with it)."""
        ...

    def history(self, scope: Scope, memory_id: str, *, below: int, limit: int) -> tuple[list[MemoryRecord], int]:
        """The kept versions older than version ``below`` (the stored one), newest first, at most
        ``limit``; and how many versions were dropped to keep the history within its bounds."""
        ...

    def recent(self, scope: Scope, flt: MemoryFilter, limit: int) -> list[MemoryRecord]:
        """Newest ``updated_at`` first, filtered; never a full scan of other tenants."""
        ...

    def scan_project(self, scope: Scope, *, cursor: str | None = None, limit: int = 100) -> Page[MemoryRecord]:
        """Every stored record of the project, expired or not, ``limit`` at a time in id order;
        pass the returned cursor back for the next page. For export; never crosses projects."""
        ...

    def mark_for_repair(self, record: MemoryRecord) -> None:
        """Remember that the index may not hold this version of the record."""
        ...

    def neighbours(
        self,
        scope: Scope,
        anchors: Sequence[MemoryRecord],
        flt: MemoryFilter,
        *,
        per_side: int = 1,
        same_session: bool = True,
    ) -> dict[str, list[MemoryRecord]]:
        """For each anchor's id: the memories of the project saved just before and just after it,
        at most ``per_side`` (1 or 2) each side, oldest first, the anchor itself left out. With
        ``same_session`` and an anchor that has a session, only memories of that session; else the
        project's memories adjacent in creation order. Creation order is id order (a ULID made at
        ``created_at``; an import keeps both). Only memories passing ``flt`` count (recall passes
        the caller's visibility: teams, expiry), and a memory that fails it (deleted, expired,
        another team's) is skipped, not a gap: the next one further out takes its place. An anchor
        of another project gets an empty list.

        Cost: SQLite, two indexed range reads per anchor (index ``memories_session`` on (project,
        session, id), or the (project, id) key), no scan; AWS, one ``_msearch`` request to the
        search index for all anchors (two searches in it per anchor), which holds every record in
        full — so a memory saved in the last moment (before the stream indexer has brought it to
        the index, ≈ 1 s) is not yet anyone's neighbour."""
        ...

    def set_embedding(self, record: MemoryRecord) -> bool:
        """Store ``record.embedding`` for the stored record if it is still at ``record.version``
        (the version does not change: a vector is derived from the content); False when the
        record is gone or changed."""
        ...


class SearchIndex(Protocol):
    def upsert(self, record: MemoryRecord) -> None:
        """Index this version; an older version never overwrites a newer one. Raises
        ``IndexUnavailable`` when the index cannot be reached."""
        ...

    def remove(self, record: MemoryRecord) -> None:
        """Make this record unsearchable (the record carries the version being deleted)."""
        ...

    def search(self, query: IndexQuery) -> list[IndexHit]:
        """Best first, ties newest first."""
        ...

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        """Nearest first by cosine (``IndexHit.score``), ties newest first; only records whose
        vector was made by ``query.model``. Raises ``IndexUnavailable`` like ``search``."""
        ...

    def ensure(self) -> None:
        """The index exists: created when missing (the cleanup job's first step on each run);
        nothing to do where it lives in the store's own database."""
        ...

    def prepare(self, wait_s: float) -> None:
        """Before a server takes traffic: the index created when missing, its layout current and
        ready to answer within ``wait_s`` (else ``IndexUnavailable``); nothing to do where it lives
        in the store's own database."""
        ...


class RateLimiter(Protocol):
    def acquire(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        """Take one call from the bucket, atomically, or say when to retry."""
        ...

    def peek(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        """The bucket's current level, taking nothing (a bucket never used is full)."""
        ...


class TenantStore(Protocol):
    def is_empty(self) -> bool: ...

    def create_workspace(self, workspace: Workspace, default_project: Project) -> None: ...

    def get_workspace(self, workspace_id: str) -> Workspace | None: ...

    def list_workspaces(self) -> list[Workspace]: ...

    def set_limits(self, workspace_id: str, limits: RateLimits | None) -> None: ...

    def set_secret_check(self, workspace_id: str, on: bool) -> None:
        """Raises VersionConflict when the workspace does not exist."""
        ...

    def create_project(self, project: Project) -> None:
        """Raises VersionConflict when the slug is taken in the workspace."""
        ...

    def get_project(self, workspace_id: str, ref: str) -> Project | None:
        """By id or by slug, inside the workspace only."""
        ...

    def list_projects(self, workspace_id: str) -> list[Project]: ...

    def create_key(self, key: ApiKey) -> None: ...

    def get_key(self, key_id: str) -> ApiKey | None: ...

    def list_keys(self, workspace_id: str) -> list[ApiKey]: ...

    def revoke_key(self, workspace_id: str, key_id: str) -> bool: ...

    def create_principal(self, principal: Principal) -> None:
        """Raises VersionConflict when the principal is bound already (in any workspace)."""
        ...

    def get_principal(self, principal_id: str) -> Principal | None: ...

    def list_principals(self, workspace_id: str) -> list[Principal]: ...

    def remove_principal(self, workspace_id: str, principal_id: str) -> bool:
        """False when no such principal is bound in this workspace."""
        ...


class TokenVerifier(Protocol):
    def verify(self, token: str) -> Mapping[str, Any]:
        """The claims of a valid access token for this resource. Raises ``Unauthorized`` for any
        token that is not one, ``Unavailable`` when its issuer's keys cannot be fetched."""
        ...


#: how long a key replays its first result (docs/contract.md §3)
IDEMPOTENCY_TTL_S = 24 * 3600
#: how long the first call's claim holds its key: a call that died (timeout, crash) frees it then
IDEMPOTENCY_IN_PROGRESS_S = 30


class IdempotencyStore(Protocol):
    def run_once(
        self, workspace_id: str, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        """The first call with ``key`` runs ``compute`` and stores its result; a later call with
        the same ``fingerprint`` returns that result without running ``compute``, for
        :data:`IDEMPOTENCY_TTL_S`. Raises ``IdempotencyMismatch`` when the key was used with
        another fingerprint, and ``VersionConflict`` while the first call with the key is still
        running — at once, without waiting for it, and without keeping other writes waiting
        meanwhile. A claim older than :data:`IDEMPOTENCY_IN_PROGRESS_S` (its call died) is taken
        over by the next call. When ``compute`` raises, nothing is stored and the key is free again."""
        ...


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """What the search index holds for one memory: a live document or a delete tombstone.

    ``ref`` is the backend's own name for the entry (OpenSearch: the document id; SQLite: the
    index's document number). ``scope`` / ``memory_id`` are None when the backend cannot tell whose
    entry it is (an OpenSearch document missing those fields). ``version`` is None when the index
    keeps no versions. ``token`` is what a version-checked purge compares (OpenSearch: seq_no and
    primary term)."""

    ref: str
    scope: Scope | None
    memory_id: str | None
    version: int | None
    deleted: bool = False
    #: when a tombstone was written (its age decides when it may be purged)
    deleted_at: datetime | None = None
    token: str = ""
    #: the analysis (``mnemo.text.ANALYSIS``) a live entry was built with, where the index records
    #: it per entry ("" for one too old to say); None where it does not (SQLite re-indexes as a
    #: whole when the analysis changes)
    analysis: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """One memory seen from both sides, as a walk found it: the stored record (None when there is
    none) and the index entry (None when the index has none)."""

    record: MemoryRecord | None
    entry: IndexEntry | None


@dataclass(frozen=True, slots=True)
class RepairMark:
    """A record whose index write failed (``MemoryStore.mark_for_repair``).

    ``record`` is the current stored record, or None when it is gone (its delete could not reach
    the index); then ``entry`` names the index entry to remove. ``token`` lets ``clear_repair``
    clear exactly this mark and not a newer one."""

    scope: Scope
    memory_id: str
    version: int
    record: MemoryRecord | None
    entry: IndexEntry | None = None
    token: str = ""


class Maintenance(Protocol):
    """What the cleanup job needs from a backend: bounded, resumable walks over the store and the
    index, the repair marks, and the few writes the index port does not offer. Every write here is
    conditional or idempotent, so two jobs running at once cannot undo each other."""

    def expired(self, now: datetime, cursor: str | None, limit: int) -> Page[MemoryRecord]:
        """Records of every tenant with ``expires_at <= now``, examining at most ``limit`` items."""
        ...

    def repair_marks(self, cursor: str | None, limit: int) -> Page[RepairMark]: ...

    def clear_repair(self, mark: RepairMark) -> None:
        """Drop this mark unless the record was marked again since (another version)."""
        ...

    def store_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        """Pages the record store (every tenant), each record with what the index holds for it."""
        ...

    def index_walk(self, cursor: str | None, limit: int) -> Page[Comparison]:
        """Pages the index (tombstones included), each entry with the stored record, if any."""
        ...

    def drop(self, entry: IndexEntry) -> bool:
        """Make an index entry whose record is gone unsearchable for good (OpenSearch: a tombstone
        at ``version + 1``). False when there was nothing to do (e.g. done by another run)."""
        ...

    def purge(self, entry: IndexEntry) -> bool:
        """Delete a tombstone for good if it is still exactly ``entry`` (version-checked)."""
        ...

    def checkpoint(self, name: str) -> str | None: ...

    def save_checkpoint(self, name: str, cursor: str | None) -> None: ...


class Ports(Protocol):
    """One backend: every port, plus closing what it holds open."""

    @property
    def store(self) -> MemoryStore: ...

    @property
    def index(self) -> SearchIndex: ...

    @property
    def limiter(self) -> RateLimiter: ...

    @property
    def tenants(self) -> TenantStore: ...

    @property
    def idempotency(self) -> IdempotencyStore: ...

    @property
    def maintenance(self) -> Maintenance: ...

    def close(self) -> None: ...
