"""Starts the real ``mnemo serve`` (a subprocess, as a user runs it) on a free loopback port, once per
module (tests/support/server.py starts and stops it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.server import RunningServer, start_server, stop_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("mnemo-e2e"))
    yield running
    running.banner = stop_server(running)
