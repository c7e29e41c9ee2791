"""The servers a bench starts: a free loopback port, waiting for ``/healthz`` within a deadline
(failing at once if the process exits), and stopping the process group afterwards."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import time
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(port: int, proc: subprocess.Popen[Any], seconds: float, what: str, poll: float = 0.1) -> None:
    """Until ``GET /healthz`` on ``port`` answers 200; RuntimeError when ``proc`` exits first or the
    deadline passes (``what`` names the server in the message)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            pass
        time.sleep(poll)
    raise RuntimeError(f"{what} did not become ready in {seconds:.0f} s")


def stop_group(proc: subprocess.Popen[Any], timeout: float = 15) -> None:
    """SIGTERM to the process group (``start_new_session=True``), SIGKILL after ``timeout`` s."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
