"""tests/support/processes.py: a server a test stops with SIGINT stops even when pytest runs as a
non-interactive shell's background job (SIGINT ignored, and inherited by every child)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.support.processes import default_sigint, stop

#: a stand-in for `mnemo serve`: exits 0 on Ctrl-C (KeyboardInterrupt), runs until then
SERVER = "import time\ntry:\n    print('ready', flush=True)\n    time.sleep(600)\nexcept KeyboardInterrupt:\n    pass\n"


@pytest.fixture
def background_job() -> Iterator[None]:
    """This process as a background job of a non-interactive shell sees it: SIGINT ignored."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_server_started_from_a_background_job_ends_on_sigint(background_job):
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], preexec_fn=default_sigint, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"

    stop(process, signal.SIGINT, timeout=20)

    assert process.returncode == 0  # Ctrl-C reached it: it ended as it would at a terminal


def test_a_server_that_ignores_sigint_is_still_stopped(background_job):
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"  # SIGINT ignored: inherited

    stop(process, signal.SIGINT, timeout=1, group=True)

    assert process.returncode == -signal.SIGTERM
