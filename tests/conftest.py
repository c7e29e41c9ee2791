"""Shared fixtures. Environment for Powertools is set before any handler module is imported."""

from __future__ import annotations

import os

os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "MnemoTest")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mnemo")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemo import runtime
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.service import admin
from mnemo.service.context import Caller
from mnemo.service.core import Service

#: the key that every file in events/ carries
EVENTS_KEY = "test-events-key-0123456789"


@pytest.fixture
def sqlite_backend(tmp_path: Path) -> Iterator[SqliteBackend]:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    yield backend
    backend.close()


@pytest.fixture
def wired_runtime(tmp_path: Path) -> Iterator[Service]:
    """The process-wide service the handlers use, on a fresh SQLite file, with the events' key."""
    cfg = Settings(backend="sqlite", data_dir=tmp_path / "data")
    backend = SqliteBackend(cfg.sqlite_path)
    admin.bootstrap(backend, plain_key=EVENTS_KEY)
    svc = Service(backend)
    runtime.use(svc, cfg)
    yield svc
    runtime.use(None)
    backend.close()


def caller_for(svc: Service, plain_key: str) -> Caller:
    return svc.authenticate(f"Bearer {plain_key}")
