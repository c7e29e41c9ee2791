"""``make serve-aws`` (``scripts/local_aws.py serve``), the README's AWS backend on this machine:
moto started with the test suite's patches (never a plain ``moto_server``, whose transactions
copy every table: docs/pitfalls.md), an OpenSearch node of its own and ``mnemo serve --backend
aws`` on them; a memory added is found, and SIGTERM to the command stops all three."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.aws_stack import free_port
from tests.support.processes import stop

pytestmark = [pytest.mark.slow, pytest.mark.aws]

ROOT = Path(__file__).resolve().parents[2]
KEY = "mnemo_local_aws_stack_test_admin_key_0123456789"
START_S = 300.0  # an OpenSearch node of its own on a loaded 2-core machine


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _call(port: int, path: str, body: dict | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
        conn.request("POST" if body is not None else "GET", path, json.dumps(body) if body else None, headers)
        reply = conn.getresponse()
        data = reply.read()
        return reply.status, json.loads(data) if data else {}
    finally:
        conn.close()


def _ready(port: int, launcher: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        assert launcher.poll() is None, f"scripts/local_aws.py exited with {launcher.returncode}"
        try:
            if _call(port, "/healthz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"the local AWS stack did not answer within {START_S:.0f} s")


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")  # a zombie has ended
    except OSError:
        return True


def test_the_local_aws_stack_starts_patched_moto_serves_and_stops_on_sigterm(tmp_path):
    port, moto_port = free_port(), free_port()
    env = {**os.environ, "MNEMO_BOOTSTRAP_KEY": KEY, "MNEMO_DATA_DIR": str(tmp_path)}
    command = [sys.executable, "scripts/local_aws.py", "serve", "--moto-port", str(moto_port), "--port", str(port)]
    with (tmp_path / "output.log").open("w+") as output:
        launcher = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
        try:
            # Given the command has started the stack
            _ready(port, launcher)
            children = {pid: _cmdline(pid) for pid in _children(launcher.pid)}
            # Then its moto is the patched one, not moto_server
            (moto,) = [pid for pid, cmd in children.items() if f"moto --port {moto_port}" in cmd]
            assert not any("moto_server" in cmd for cmd in children.values())
            # and a memory added through the server is found
            status, added = _call(port, "/v1/tools/memory_add", {"content": "the stack holds a real load"})
            assert status == 200, added
            status, found = _call(port, "/v1/tools/memory_search", {"q": "real load"})
            assert status == 200 and [m["id"] for m in found["memories"]] == [added["memory"]["id"]]

            # When the command gets SIGTERM
            launcher.send_signal(signal.SIGTERM)
            code = launcher.wait(timeout=90)

            # Then it ends, and so do moto, the server and the OpenSearch node it started
            assert code == 0
            deadline = time.monotonic() + 30
            while not all(_gone(pid) for pid in children):
                assert time.monotonic() < deadline, {pid: _cmdline(pid) for pid in children if not _gone(pid)}
                time.sleep(0.2)
            assert _gone(moto)
        finally:
            stop(launcher, signal.SIGTERM, timeout=30)
            output.seek(0)
            print(output.read()[-4000:])
