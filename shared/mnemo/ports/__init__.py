"""The interfaces the service needs. Each backend (``backends/sqlite``, ``backends/aws``)
implements them; the service never imports a backend. The values they exchange are in
``ports.values``, the cleanup job's port in ``ports.maintenance``; both are named here too, so a
caller imports every port name from ``mnemo.ports``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from mnemo.gcra import RateDecision  # defined beside the algorithm that decides it
from mnemo.models.records import ApiKey, MemoryRecord, Principal, Project, RateLimits, Workspace
from mnemo.ports.maintenance import Comparison, IndexEntry, Maintenance, RepairMark
from mnemo.ports.values import (
    IDEMPOTENCY_IN_PROGRESS_S,
    IDEMPOTENCY_TTL_S,
    MAX_HISTORY_BYTES,
    MAX_NEIGHBOURS,
    MAX_VERSIONS,
    Duplicate,
    IdempotencyMismatch,
    IndexHit,
    IndexQuery,
    MemoryFilter,
    Page,
    RateClass,
    Scope,
    StoreChange,
    VectorQuery,
    VersionConflict,
    kept_versions,
)

__all__ = [
    "IDEMPOTENCY_IN_PROGRESS_S",
    "IDEMPOTENCY_TTL_S",
    "MAX_HISTORY_BYTES",
    "MAX_NEIGHBOURS",
    "MAX_VERSIONS",
    "Comparison",
    "Duplicate",
    "Embedder",
    "IdempotencyMismatch",
    "IdempotencyStore",
    "IndexEntry",
    "IndexHit",
    "IndexQuery",
    "Maintenance",
    "MemoryFilter",
    "MemoryStore",
    "Page",
    "Ports",
    "RateClass",
    "RateDecision",
    "RateLimiter",
    "RepairMark",
    "Scope",
    "SearchIndex",
    "StoreChange",
    "TenantStore",
    "TokenVerifier",
    "VectorQuery",
    "VersionConflict",
    "kept_versions",
]


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
        of another project gets an empty list. A neighbour may come without its ``embedding``
        (SQLite leaves the vectors unread): callers use its id and score, never its vector.

        Cost: SQLite, two indexed range reads per anchor in one statement (index
        ``memories_session`` on (project, session, id), or the (project, id) key), no scan; AWS,
        one ``_msearch`` request to the search index for all anchors (two searches in it per
        anchor), which holds every record in full — so a memory saved in the last moment (before
        the stream indexer has brought it to the index, ≈ 1 s) is not yet anyone's neighbour."""
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

    def idle(self) -> bool:
        """The host waits for its next call, on the thread that serves them: work the backend keeps
        off the calls, when due (SQLite: checkpoint its write-ahead log). Whether it did any."""
        ...

    def close(self) -> None: ...
