"""``mnemo serve``'s start readies the index through its port, whatever the backend: the start-up
knows no backend (issue 42), ``SearchIndex.prepare`` does what its backend needs (on AWS the index
created and its shards awaited, tests/e2e/test_local_server_aws.py; nothing on SQLite), and an
index that is not ready is the start's one line with exit 3, as any store it cannot open."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemo import runtime
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.errors import IndexUnavailable
from mnemo.local import startup
from mnemo.local.cli.output import EXIT_UNAVAILABLE
from mnemo.service.pipeline import Service


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[SqliteBackend]:
    ports = SqliteBackend(tmp_path / "mnemo.db")
    yield ports
    ports.close()


def started(backend: SqliteBackend, tmp_path: Path) -> object:
    cfg = Settings(backend="sqlite", data_dir=tmp_path)
    with runtime.using(Service(backend, embedder=None), cfg):
        return startup.open_store(startup.plan(cfg, "127.0.0.1", 0))


def test_the_start_asks_the_index_port_to_prepare_on_sqlite_too(backend, tmp_path, monkeypatch):
    asked: list[float] = []
    monkeypatch.setattr(backend.index, "prepare", asked.append)

    ports = started(backend, tmp_path)

    assert ports is backend
    assert asked == [startup.INDEX_WAIT_S]


def test_an_index_that_is_not_ready_is_one_line_and_exit_3(backend, tmp_path, monkeypatch):
    def not_ready(wait_s: float) -> None:
        raise IndexUnavailable(cause=f"the shards did not start in {wait_s:g} s")

    monkeypatch.setattr(backend.index, "prepare", not_ready)

    with pytest.raises(startup.StartupError) as refused:
        started(backend, tmp_path)

    assert refused.value.exit_code == EXIT_UNAVAILABLE
    assert "did not start in 30 s" in str(refused.value)
    assert "\n" not in str(refused.value)
