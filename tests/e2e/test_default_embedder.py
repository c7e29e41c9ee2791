"""The default embedder, ``auto`` (``minilm`` where its extra is installed, as ``make run`` and
``make install`` install it), as a user meets it: ``mnemo serve`` saves a memory, which words find
at once and meaning within the bound docs/retrieval.md states ("Embedding after the answer": the
vector is made after the answer); and on a store the previous default (``static``) filled, words
find every memory at once, meaning only once ``mnemo cleanup --until-done`` (run as a user runs it)
has re-embedded them; a second run has nothing left to embed ("Changing the embedder")."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.embedding import build_embedder, default_embedder
from mnemo.ports import Scope
from mnemo.service import tenancy
from mnemo.service.identity import ADMIN
from mnemo.service.pipeline import Service

from tests.support.http import call
from tests.support.server import start_server, stop_server
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow]

MEMORIES = [
    "Bob is allergic to peanuts",
    "The kitchen closes at 3pm",
    "Deploys freeze on Fridays",
    "The VPN certificate expires in March",
]
#: shares no word with the first memory
ASKED = "who has nut allergies"
#: the bound docs/retrieval.md states for a memory's vector after memory_add answered
VECTOR_DEADLINE_S = 30.0


def user_env() -> dict[str, str]:
    """The environment of a user who never set an embedder."""
    return {k: v for k, v in os.environ.items() if k != "MNEMO_EMBEDDER"} | {"MNEMO_BACKEND": "sqlite"}


def cleanup_until_done(data_dir: Path) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(data_dir), "cleanup", "--until-done"],
        capture_output=True,
        text=True,
        timeout=120,
        env=user_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # minilm is installed here: no fallback line
    return [json.loads(line) for line in done.stdout.splitlines()]


def recall(svc: Service, caller: object, **arguments: object) -> list[str]:
    return [r.reference for r in svc.invoke("recall", caller, {"query": ASKED, **arguments}).result.results]


def test_a_store_of_the_old_static_default_keeps_working_and_cleanup_re_embeds_it_for_minilm(tmp_path, monkeypatch):
    monkeypatch.delenv("MNEMO_EMBEDDER", raising=False)
    old = Service(SqliteBackend(tmp_path / "mnemo.db"), embedder=default_embedder())
    workspace, project = tenancy.create_workspace(old.ports, "upgrade")
    key = tenancy.create_key(old.ports, workspace.id, label="admin", scopes=[ADMIN]).plain
    caller = old.authenticate(f"Bearer {key}")
    ids = [old.invoke("memory_add", caller, {"content": c}).result.memory.id for c in MEMORIES]
    old.ports.close()

    default = build_embedder(Settings().embedder)
    assert default is not None and default.model == "all-MiniLM-L6-v2-onnx-int8"
    new = Service(SqliteBackend(tmp_path / "mnemo.db"), embedder=default)
    caller = new.authenticate(f"Bearer {key}")
    # at once, before any re-embedding: words find the memories, meaning sees none of static's vectors
    assert recall(new, caller, query="peanuts") == [ids[0]]
    assert recall(new, caller, mode="semantic") == []

    summaries = cleanup_until_done(tmp_path)

    assert summaries[-1]["more"] is False
    assert sum(s["counts"]["embedded"] for s in summaries) == len(MEMORIES)
    scope = Scope(workspace.id, project.id)
    for memory_id in ids:
        record = new.ports.store.get(scope, memory_id)
        assert record is not None and record.embedding is not None
        assert (record.embedding.model, record.embedding.dim) == (default.model, default.dim)
    assert recall(new, caller, mode="semantic")[0] == ids[0]
    assert recall(new, caller)[0] == ids[0]  # hybrid, the default mode
    assert sum(s["counts"]["embedded"] for s in cleanup_until_done(tmp_path)) == 0
    new.ports.close()


def test_mnemo_serve_by_default_finds_a_memory_by_words_at_once_and_by_meaning_after_the_answer(tmp_path):
    server = start_server(tmp_path, env_extra={"MNEMO_EMBEDDER": "auto"})
    try:
        added = call(server, "memory_add", {"content": MEMORIES[0]})
        assert added.status == 200, added.raw
        memory_id = added.body["memory"]["id"]
        lexical = call(server, "recall", {"query": "peanuts", "mode": "lexical"})
        assert [r["reference"] for r in lexical.body["results"]] == [memory_id]

        def by_meaning() -> list[str]:
            answer = call(server, "recall", {"query": ASKED, "mode": "semantic"})
            assert answer.status == 200, answer.raw
            return [r["reference"] for r in answer.body["results"]]

        assert wait_until(by_meaning, VECTOR_DEADLINE_S, "meaning finds the memory")[0] == memory_id
    finally:
        output = stop_server(server)
    assert "embedder: static" not in output  # minilm, no fallback line


def test_mnemo_serve_re_embeds_a_store_of_the_old_default_by_itself(tmp_path):
    """The upgrade as a user meets it: the store was filled under ``static``; the next ``mnemo
    serve`` (the default, ``auto``: minilm) finds the memories by words at once and by meaning once
    its scheduled cleanup child has re-embedded them — nobody runs ``mnemo cleanup``."""
    old = start_server(tmp_path, env_extra={"MNEMO_EMBEDDER": "static"})
    try:
        ids = [call(old, "memory_add", {"content": c}).body["memory"]["id"] for c in MEMORIES]
    finally:
        stop_server(old)
    env = {k: v for k, v in user_env().items() if k.startswith("MNEMO_")}
    server = start_server(
        tmp_path, env_extra={**env, "MNEMO_EMBEDDER": "auto", "MNEMO_LOCAL_CLEANUP_INTERVAL_S": "900"}
    )
    try:
        lexical = call(server, "recall", {"query": "peanuts", "mode": "lexical"})
        assert [r["reference"] for r in lexical.body["results"]] == [ids[0]]

        def by_meaning() -> list[str]:
            answer = call(server, "recall", {"query": ASKED, "mode": "semantic"})
            assert answer.status == 200, answer.raw
            return [r["reference"] for r in answer.body["results"]]

        assert wait_until(by_meaning, 120, "the scheduled cleanup re-embeds the store", poll=0.5)[0] == ids[0]
    finally:
        stop_server(server)


def _vector_stored(db: Path, memory_id: str) -> bool:
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        row = conn.execute("SELECT vec IS NOT NULL FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return bool(row and row[0])


def _mnemo_mcp(data_dir: Path, stderr: Any = subprocess.DEVNULL) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(data_dir), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=user_env() | {"MNEMO_EMBEDDER": "auto"},
    )


def _ask(server: subprocess.Popen, id_: int, method: str, params: dict) -> dict:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode() + b"\n")
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    assert answer["id"] == id_, answer
    return answer["result"]


HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_mnemo_mcp_ends_cleanly_on_sigterm_with_its_stdin_open_and_a_vector_made(tmp_path):
    """Its messages are read on a thread of their own: SIGTERM while the host keeps stdin open ends
    the process with 0 and a clean stderr (a thread blocked in stdin's buffered reader aborted the
    interpreter's shutdown), and leaves the vector it stored."""
    data_dir = tmp_path / "data"
    errors = tmp_path / "stderr.log"
    with errors.open("wb") as sink:
        server = _mnemo_mcp(data_dir, stderr=sink)
        try:
            _ask(server, 1, "initialize", HELLO)
            added = _ask(server, 2, "tools/call", {"name": "memory_add", "arguments": {"content": MEMORIES[1]}})
            memory_id = added["structuredContent"]["memory"]["id"]
            # the vector stored (waited for: exiting drains for at most 5 s, too short a bound for a loaded box)
            wait_until(lambda: _vector_stored(data_dir / "mnemo.db", memory_id), VECTOR_DEADLINE_S, "the vector")
            server.send_signal(signal.SIGTERM)
            assert server.wait(60) == 0
        finally:
            server.kill()
    assert "Fatal" not in errors.read_text(), errors.read_text()
    assert _vector_stored(data_dir / "mnemo.db", memory_id)  # and still there after the exit


def test_mnemo_mcp_stores_a_memorys_vector_while_it_waits_for_the_next_message(tmp_path):
    """``mnemo mcp`` (stdio) hands the vectors made after an answer to its serving thread, which
    stores them while it waits for the next message: a memory's vector is stored with no message
    after its memory_add (seen through another connection), and meaning then finds it."""
    data_dir = tmp_path / "data"
    server = _mnemo_mcp(data_dir)
    assert server.stdin is not None
    try:
        _ask(server, 1, "initialize", HELLO)
        added = _ask(server, 2, "tools/call", {"name": "memory_add", "arguments": {"content": MEMORIES[0]}})
        memory_id = added["structuredContent"]["memory"]["id"]

        wait_until(
            lambda: _vector_stored(data_dir / "mnemo.db", memory_id),
            VECTOR_DEADLINE_S,
            "the vector stored with no message after the add",
            poll=0.1,
        )
        found = _ask(server, 3, "tools/call", {"name": "recall", "arguments": {"query": ASKED, "mode": "semantic"}})
        assert found["structuredContent"]["results"][0]["reference"] == memory_id
    finally:
        server.stdin.close()
        assert server.wait(60) == 0


def test_mnemo_serve_stores_a_memorys_vector_with_no_request_after_its_add(tmp_path):
    """A handler instance hands the vectors it makes after an answer to the thread that serves its
    invocations, which stores them while it waits for the next: the vector is stored with no
    request after the memory_add (seen through another connection), and the instance still answers."""
    server = start_server(tmp_path, env_extra={"MNEMO_EMBEDDER": "auto"})
    try:
        added = call(server, "memory_add", {"content": MEMORIES[2]})
        assert added.status == 200, added.raw
        memory_id = added.body["memory"]["id"]
        wait_until(lambda: _vector_stored(tmp_path / "mnemo.db", memory_id), VECTOR_DEADLINE_S, "the vector", poll=0.1)
        answer = call(server, "recall", {"query": "when are deploys frozen", "mode": "semantic"})
        assert answer.status == 200, answer.raw
        assert answer.body["results"][0]["reference"] == memory_id
    finally:
        stop_server(server)
