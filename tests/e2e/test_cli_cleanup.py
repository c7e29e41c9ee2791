"""``mnemo cleanup`` as a user runs it (a subprocess) on the embedded backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.models.common import utc_now
from mnemo.ports import Scope
from mnemo.service import tenancy

from tests.support.records import memory_record

pytestmark = [pytest.mark.slow]


def test_mnemo_cleanup_removes_expired_memories_and_prints_a_summary(tmp_path):
    backend = SqliteBackend(tmp_path / "mnemo.db")
    workspace, project = tenancy.create_workspace(backend, "cli")
    past = utc_now() - timedelta(minutes=5)
    record = memory_record(
        "a private note that expired",
        scope=Scope(workspace.id, project.id),
        at=past - timedelta(minutes=1),
        expires_at=past,
    )
    backend.store.create(record)
    backend.index.upsert(record)
    backend.close()

    done = subprocess.run(
        [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(tmp_path), "cleanup", "--until-done"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MNEMO_BACKEND": "sqlite"},
        check=False,
    )

    assert done.returncode == 0, done.stderr
    summaries = [json.loads(line) for line in done.stdout.splitlines()]
    assert summaries[-1]["more"] is False
    assert sum(s["counts"]["expired"] for s in summaries) == 1
    assert "private note" not in done.stdout + done.stderr
    reopened = SqliteBackend(tmp_path / "mnemo.db")
    assert reopened.store.get(Scope(workspace.id, project.id), record.id) is None
    reopened.close()
