"""The scheduled cleanup job (docs/contract.md §6): written once, against the ports, for every backend.

One run walks four phases in order — ``repair`` (marked records re-embedded and re-indexed),
``expire`` (records past ``expires_at`` deleted), ``store`` (every record against the index, and
against the current embedder) and ``index`` (every entry against the store; old tombstones
purged) — each resuming where the previous run stopped, within an item budget and a deadline.
Every write is idempotent or conditional, so two runs at once cannot undo each other. The summary
holds counts, timings and flags only, never memory contents. The phases' rules, one by one:
docs/background-jobs.md, "The cleanup job".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from mnemo import text
from mnemo.config import Settings
from mnemo.errors import IndexUnavailable
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.observability import logger
from mnemo.ports import Comparison, Embedder, IndexEntry, Page, Ports, RepairMark, Scope, VersionConflict
from mnemo.service.vectors import needs_embedding, with_embedding

T = TypeVar("T")

#: the phases, in the order a run works through them (also the checkpoint names)
PHASES = ("repair", "expire", "store", "index")

#: a walk's checkpoint once it finished its pass in the current cycle (see ``CleanupSummary.more``)
WALK_FINISHED = "#done"

#: what a run counts; each becomes a metric ``Cleanup<Name>``
COUNTS = (
    "examined",  # items the walks looked at
    "repaired",  # repair marks resolved
    "expired",  # expired records deleted from store and index
    "reindexed",  # records the index lacked, held at an older version or built with another analysis
    "unindexed",  # index entries without a record, made unsearchable
    "purged",  # delete tombstones past the retention, removed for good
    "skipped",  # work another run (or a concurrent write) had done first
    "conflicts",  # the index is ahead of the store (e.g. after a restore): left alone, counted
    "embedded",  # records given a vector of the current embedder (none yet, or another model's)
    "embed_failed",  # records the embedder could not embed (retried by the next run)
)

#: OpenSearch forgets a delete's version after ``index.gc_deletes`` (60 s); tombstones must outlive
#: every late write the stream can still deliver, so they stay well beyond that
DEFAULT_TOMBSTONE_RETENTION = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class CleanupOptions:
    max_items: int = 5000
    page_size: int = 100
    tombstone_retention: timedelta = DEFAULT_TOMBSTONE_RETENTION
    #: a ``clock()`` value after which no new item is handled (None: the item budget only)
    deadline: float | None = None
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_settings(cls, cfg: Settings, *, deadline: float | None = None, **overrides: Any) -> CleanupOptions:
        values: dict[str, Any] = {
            "max_items": cfg.cleanup_max_items,
            "page_size": cfg.cleanup_page_size,
            "tombstone_retention": timedelta(seconds=cfg.cleanup_tombstone_retention_s),
            "deadline": deadline,
        }
        return cls(**{**values, **{k: v for k, v in overrides.items() if v is not None}})


@dataclass
class CleanupSummary:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    #: per phase: ``done`` (reached the end of its walk), ``paused`` (budget ran out) or ``pending``
    phases: dict[str, str] = field(default_factory=lambda: dict.fromkeys(PHASES, "pending"))
    duration_ms: int = 0
    index_unavailable: bool = False

    @property
    def more(self) -> bool:
        """Whether the current cycle is unfinished: a next run continues it. A cycle is one pass
        of every walk, spread over as many runs as the budgets need; a walk that finished its
        pass waits (checkpoint ``WALK_FINISHED``) until the others have, then all start afresh."""
        return self.index_unavailable or any(state != "done" for state in self.phases.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "phases": dict(self.phases),
            "duration_ms": self.duration_ms,
            "index_unavailable": self.index_unavailable,
            "more": self.more,
        }


class _Budget:
    def __init__(self, options: CleanupOptions) -> None:
        self.items = options.max_items
        self.deadline = options.deadline
        self.clock = options.clock
        self.page_size = options.page_size

    def out_of_time(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline

    def grant(self) -> int:
        """How many items the next page may examine (0: stop here)."""
        if self.items <= 0 or self.out_of_time():
            return 0
        return min(self.page_size, self.items)

    def spend(self, n: int) -> None:
        # An empty page costs nothing: it ends its walk or moves its cursor, so it cannot loop.
        self.items -= n


class _Run:
    def __init__(self, ports: Ports, options: CleanupOptions, now: datetime, embedder: Embedder | None) -> None:
        self.ports = ports
        self.embedder = embedder
        self.maint = ports.maintenance
        self.options = options
        self.now = now
        self.budget = _Budget(options)
        self.summary = CleanupSummary()

    def count(self, name: str, n: int = 1) -> None:
        self.summary.counts[name] += n

    # -- the walk every phase shares ----------------------------------------------------------

    def walk(
        self,
        name: str,
        fetch: Callable[[str | None, int], Page[T]],
        handle: Callable[[T], None],
        *,
        resume: bool = True,
    ) -> None:
        cursor = self.maint.checkpoint(name) if resume else None
        if cursor == WALK_FINISHED:
            self.summary.phases[name] = "done"  # finished earlier in this cycle
            return
        while True:
            limit = self.budget.grant()
            if limit == 0:
                self.summary.phases[name] = "paused"
                return
            page = fetch(cursor, limit)
            examined = len(page.items) if page.examined is None else page.examined
            self.budget.spend(examined)
            self.count("examined", examined)
            for item in page.items:
                if self.budget.out_of_time():
                    # The cursor stays before this page: the next run redoes it (every action is
                    # idempotent), so a deadline never skips an item.
                    self.summary.phases[name] = "paused"
                    return
                handle(item)
            # Saved only after the whole page is handled: a run that dies mid-page redoes it.
            cursor = page.cursor
            if resume:
                self.maint.save_checkpoint(name, WALK_FINISHED if cursor is None else cursor)
            if cursor is None:
                self.summary.phases[name] = "done"
                return

    # -- actions ------------------------------------------------------------------------------

    def expire(self, record: MemoryRecord) -> None:
        """Delete an expired record from the store, only at the version seen; its index entry
        follows the store's change like any delete's (SQLite: in the same transaction; AWS: the
        delete marker's stream record becomes a tombstone)."""
        try:
            self.ports.store.delete(
                Scope(record.workspace_id, record.project_id),
                record.id,
                expected_version=record.version,
                record=record,
            )
        except VersionConflict:
            self.count("skipped")  # deleted by another run (or TTL) already
            return
        self.count("expired")

    def reindex(self, record: MemoryRecord) -> None:
        self.ports.index.upsert(record)  # external versions: never overwrites a newer version
        self.count("reindexed")

    def embed(self, record: MemoryRecord) -> MemoryRecord | None:
        """The record with a vector of the current embedder, stored (version-checked: the vector
        is the content's, so a record changed meanwhile keeps its own). None: the embedder failed,
        or the record changed or went (``skipped``)."""
        embedded = with_embedding(self.embedder, record)
        if embedded is record:
            self.count("embed_failed")
            return None
        if not self.ports.store.set_embedding(embedded):
            self.count("skipped")
            return None
        self.count("embedded")
        return embedded

    def reconcile(self, item: Comparison) -> None:
        """Bring one memory's index entry in line with its record; the decision table of drift."""
        record, entry = item.record, item.entry
        if record is not None:
            if record.expired(self.now):
                self.expire(record)
            elif needs_embedding(self.embedder, record) and (embedded := self.embed(record)) is not None:
                self.reindex(embedded)  # the index holds the vector beside the terms
            elif entry is None:
                self.reindex(record)
            elif entry.version is not None and entry.version < record.version:
                self.reindex(record)  # a stale document, or a tombstone of an older version
            elif not entry.deleted and entry.version == record.version and entry.analysis not in (None, text.ANALYSIS):
                self.reindex(record)  # built with another analysis (an older stemmer, no stems)
            elif entry.deleted or (entry.version is not None and entry.version > record.version):
                self.count("conflicts")  # the index is ahead of the store; re-indexing cannot win
            return
        if entry is None:
            return
        if entry.deleted:
            if self._purgeable(entry):
                self.count("purged" if self.maint.purge(entry) else "skipped")
            return
        self.count("unindexed" if self.maint.drop(entry) else "skipped")

    def _purgeable(self, entry: IndexEntry) -> bool:
        deleted_at = entry.deleted_at
        return deleted_at is None or self.now - deleted_at >= self.options.tombstone_retention

    def repair(self, mark: RepairMark) -> None:
        record = mark.record
        if record is None:
            if mark.entry is not None:
                self.maint.drop(mark.entry)
        elif record.expired(self.now):
            self.expire(record)
        elif needs_embedding(self.embedder, record):
            embedded = self.embed(record)
            if embedded is None:
                self.ports.index.upsert(record)  # its words at least; the mark stays for the vector
                return
            self.ports.index.upsert(embedded)
        else:
            self.ports.index.upsert(record)
        self.maint.clear_repair(mark)
        self.count("repaired")

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> CleanupSummary:
        maint = self.maint
        try:
            # Handled marks disappear, so the repair walk always starts at the first mark: a mark
            # set behind a saved cursor would otherwise wait a whole cycle.
            self.walk("repair", maint.repair_marks, self.repair, resume=False)
            self.walk("expire", lambda cursor, limit: maint.expired(self.now, cursor, limit), self.expire)
            self.walk("store", maint.store_walk, self.reconcile)
            self.walk("index", maint.index_walk, self.reconcile)
            if not self.summary.more:
                for name in PHASES:  # the cycle is complete: the next run starts a new one
                    maint.save_checkpoint(name, None)
        except IndexUnavailable:
            self.summary.index_unavailable = True
            logger.warning("cleanup stopped: the index is unreachable; the next run resumes")
        return self.summary


def run_cleanup(
    ports: Ports,
    options: CleanupOptions | None = None,
    *,
    now: datetime | None = None,
    embedder: Embedder | None = None,
) -> CleanupSummary:
    """One bounded cleanup run; returns (and logs) its summary. ``embedder`` is the service's
    (None: vectors are left as they are)."""
    started = time.monotonic()
    summary = _Run(ports, options or CleanupOptions(), now or utc_now(), embedder).run()
    summary.duration_ms = round((time.monotonic() - started) * 1000)
    logger.info("cleanup run", extra={"cleanup": summary.as_dict()})
    return summary


def deadline_from_remaining(remaining_ms: int, *, margin_s: float = 5.0) -> float:
    """A run's deadline from a Lambda context's remaining time, keeping ``margin_s`` (at most a
    fifth of the remaining time) to finish the item in flight, save and report."""
    remaining_s = remaining_ms / 1000
    return time.monotonic() + remaining_s - min(margin_s, remaining_s / 5)


class _MetricsSink(Protocol):
    def add_metric(self, name: str, unit: Any, value: float) -> None: ...


def publish_metrics(summary: CleanupSummary, metrics: _MetricsSink) -> None:
    """One Powertools metric per count, plus the run's duration and whether work remains."""
    from aws_lambda_powertools.metrics import MetricUnit

    for name, value in summary.counts.items():
        metrics.add_metric(name="Cleanup" + name.capitalize(), unit=MetricUnit.Count, value=value)
    metrics.add_metric(name="CleanupDuration", unit=MetricUnit.Milliseconds, value=summary.duration_ms)
    metrics.add_metric(name="CleanupMoreWork", unit=MetricUnit.Count, value=int(summary.more))
    metrics.add_metric(name="CleanupIndexUnavailable", unit=MetricUnit.Count, value=int(summary.index_unavailable))
