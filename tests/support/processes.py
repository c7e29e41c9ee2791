"""Starting and stopping the servers tests run, whatever shell started pytest.

A non-interactive shell starts a background job (``pytest … &``) with SIGINT ignored, and the
children inherit that: a ``mnemo serve`` sent SIGINT to end a test then keeps running, and a
helper that only waits leaves it behind. So a server a test means to stop with SIGINT starts with
SIGINT at its default (:func:`default_sigint`, a ``preexec_fn``), and :func:`stop` ends it in any
case: the signal the test is about, then SIGTERM, then SIGKILL, each with a deadline, to the
process group when the server has one of its own."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any


def default_sigint() -> None:
    """For ``preexec_fn``: the child gets SIGINT's default disposition, even from a background job."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop(
    process: subprocess.Popen[Any], first: int = signal.SIGINT, timeout: float = 20, *, group: bool = False
) -> tuple[Any, Any]:
    """Send ``first``, wait up to ``timeout`` s, then SIGTERM and SIGKILL (5 s each); returns
    ``communicate()``'s output. ``group``: signal the process group (``start_new_session=True``)."""

    def send(sig: int) -> None:
        try:
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)
        except ProcessLookupError:
            pass

    for sig, wait in ((first, timeout), (signal.SIGTERM, 5.0), (signal.SIGKILL, 30.0)):
        send(sig)
        try:
            out = process.communicate(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if group:
            send(signal.SIGKILL)  # whatever of the group outlived its leader
        return out
    raise AssertionError(f"process {process.pid} survived SIGKILL")
