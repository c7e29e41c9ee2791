"""The local hosts fold SQLite's write-ahead log into the database file while they wait between
calls (``service.between.Between``, ``Ports.idle``: docs/architecture.md), as a user runs them:
``mnemo serve`` (one handler instance) and ``mnemo mcp`` (stdio). Seen from outside: after a few
writes that change well over ``CHECKPOINT_AFTER`` rows but write far fewer pages than SQLite's own
checkpoint needs (1,000), the database file grows with no call after them — nothing else copies
the log's pages into it while the host runs (the log is folded in by SQLite only at 1,000 pages, or
when the last connection closes)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from mnemo.backends.sqlite.db import CHECKPOINT_AFTER

from tests.e2e.test_default_embedder import HELLO, _ask, _mnemo_mcp
from tests.support.http import call
from tests.support.server import start_server, stop_server
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow]

#: words no memory shares: each is a new key (its postings and its dictionary row), and new keys'
#: rows land at the end of their tables, so a memory of many of them changes many rows in few pages:
#: these memories change more than twice ``CHECKPOINT_AFTER`` rows in all, in a few hundred pages (both
#: tests fail when the host never checkpoints: checked)
WORDS_PER_MEMORY = 150
MEMORIES = 8
assert 2 * MEMORIES * WORDS_PER_MEMORY >= 2 * CHECKPOINT_AFTER  # a posting and a dictionary row a word


def _contents(seed: int) -> list[str]:
    rng = random.Random(seed)
    letters = "bcdfghjklmnpqrstvwz"
    return [
        " ".join("".join(rng.choice(letters) + rng.choice("aeiou") for _ in range(4)) for _ in range(WORDS_PER_MEMORY))
        for _ in range(MEMORIES)
    ]


def test_mnemo_serve_folds_the_log_into_the_database_while_it_waits(tmp_path: Path):
    server = start_server(tmp_path, args=("--workers", "1"))
    db = tmp_path / "mnemo.db"
    try:
        assert call(server, "memory_search", {"q": "nothing"}).status == 200
        size = db.stat().st_size
        for content in _contents(1):
            added = call(server, "memory_add", {"content": content})
            assert added.status == 200, added.raw
        wait_until(lambda: db.stat().st_size > size, 30, "the log folded into the database file", poll=0.1)
    finally:
        stop_server(server)


def test_mnemo_mcp_folds_the_log_into_the_database_while_it_waits(tmp_path: Path):
    data_dir = tmp_path / "data"
    db = data_dir / "mnemo.db"
    server = _mnemo_mcp(data_dir)
    assert server.stdin is not None
    try:
        _ask(server, 1, "initialize", HELLO)
        size = db.stat().st_size
        for i, content in enumerate(_contents(2), start=2):
            answer = _ask(server, i, "tools/call", {"name": "memory_add", "arguments": {"content": content}})
            assert answer["isError"] is False, answer
        wait_until(lambda: db.stat().st_size > size, 30, "the log folded into the database file", poll=0.1)
    finally:
        server.stdin.close()
        assert server.wait(60) == 0
