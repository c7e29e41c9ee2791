"""The cleanup job's budgets on the embedded backend: a deadline met in the middle of a page
skips nothing, and the Lambda deadline keeps a margin."""

from __future__ import annotations

import itertools
import time
from datetime import timedelta

from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import Scope
from mnemo.service import tenancy
from mnemo.service.cleanup import CleanupOptions, deadline_from_remaining, run_cleanup

from tests.support.records import memory_record


def expired_records(backend, n: int) -> list[MemoryRecord]:
    workspace, project = tenancy.create_workspace(backend, "budget")
    scope = Scope(workspace.id, project.id)
    past = utc_now() - timedelta(minutes=5)
    records = []
    for i in range(n):
        record = memory_record(f"note {i}", scope=scope, at=past - timedelta(minutes=1), expires_at=past)
        backend.store.create(record)
        backend.index.upsert(record)
        records.append(record)
    return records


def test_a_deadline_met_mid_page_leaves_the_page_for_the_next_run(sqlite_backend):
    expired_records(sqlite_backend, 10)
    ticks = itertools.count()  # every look at the clock is one tick later
    first = run_cleanup(sqlite_backend, CleanupOptions(page_size=4, deadline=6, clock=lambda: next(ticks)))

    rest = run_cleanup(sqlite_backend)

    assert first.more
    assert first.phases["expire"] == "paused"
    assert 0 < first.counts["expired"] < 10
    assert first.counts["expired"] + rest.counts["expired"] == 10
    assert not rest.more


def test_the_lambda_deadline_keeps_a_margin_of_at_most_a_fifth():
    before = time.monotonic()

    long_run = deadline_from_remaining(300_000) - before
    short_run = deadline_from_remaining(10_000) - before

    assert 295 <= long_run < 300  # 5 s margin
    assert 8 <= short_run < 10  # a fifth of 10 s
