"""The cleanup job's port (``Maintenance``) and what its walks see: index entries, a record
beside its entry, and the marks of index writes to repair."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mnemo.models.records import MemoryRecord
from mnemo.ports.values import Page, Scope


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
