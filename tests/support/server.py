"""A real ``mnemo serve`` (a subprocess, as a user runs it) on a free loopback port: what the e2e and
hardening suites and the benches start. Stdlib only, no pytest: ``bench/`` imports it too."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.http import healthy
from tests.support.processes import stop

SERVER_KEY = "e2e-admin-key-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningServer:
    url: str
    key: str
    process: subprocess.Popen[str]
    banner: str
    #: the server's stdout and stderr: a file, not a pipe nobody reads while it runs (a long run
    #: filled the 64 KiB pipe buffer and the server blocked on its next log line)
    output: Path | None = None


def start_server(
    data_dir: Path,
    env_extra: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    port: int | None = None,
    *,
    new_session: bool = False,
) -> RunningServer:
    """``mnemo serve`` on ``port`` (a free one by default: pass one when the settings must name the URL);
    ``new_session``: in a process group of its own, as systemd starts a service."""
    port = port or free_port()
    # no scheduled cleanup child unless a test asks for it (tests/e2e/test_default_embedder.py):
    # each server here starts on an empty store, where its one run at start finds nothing to do
    # and costs the loaded CI machine a spawned interpreter per server
    env = {**os.environ, "MNEMO_DATA_DIR": str(data_dir), "MNEMO_BOOTSTRAP_KEY": SERVER_KEY,
           "MNEMO_LOCAL_CLEANUP_INTERVAL_S": "0", **(env_extra or {})}  # fmt: skip
    data_dir.mkdir(parents=True, exist_ok=True)
    output = data_dir / f"serve-{port}.log"
    with output.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "mnemo.local.cli", "serve", "--port", str(port), *args],
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=new_session,
        )
    url = f"http://127.0.0.1:{port}"
    banner = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mnemo serve exited: {output.read_text()}")
        if healthy(url):
            break
        time.sleep(0.1)
    else:
        process.kill()
        raise RuntimeError("mnemo serve did not answer /healthz within 60 s")
    return RunningServer(url, SERVER_KEY, process, banner, output)


def stop_server(server: RunningServer) -> str:
    """Stop the server; returns everything it wrote."""
    stop(server.process, signal.SIGTERM, timeout=10)
    return server.output.read_text() if server.output else ""
