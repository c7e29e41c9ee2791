"""One handler instance (``instance_main``) whose server goes away: it exits at once, quietly.

A ``kill -9`` of ``mnemo serve`` closes its end of every instance's pipe. An instance then meets
``EOFError`` or ``ConnectionResetError`` (an answer the server never read) in ``recv``, or
``BrokenPipeError`` in ``send`` when it finishes a call: none of them may print a traceback."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
from mnemo.local.workers import instance_main

from tests.support.scripted_gateway import Hold
from tests.support.waiting import wait_until

SCRIPTED = "tests.support.scripted_gateway:ScriptedGateway"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def started(context: multiprocessing.context.SpawnContext):  # type: ignore[no-untyped-def]
    parent_end, child_end = context.Pipe(duplex=True)
    process = context.Process(target=instance_main, args=(child_end, SCRIPTED, None), daemon=True)
    process.start()
    child_end.close()
    assert parent_end.poll(60) and parent_end.recv() == "ready"
    return process, parent_end


def request(path: str) -> tuple:
    return ("POST", path, {}, b"", "127.0.0.1", 30.0)


@pytest.fixture
def context() -> multiprocessing.context.SpawnContext:
    return multiprocessing.get_context("spawn")


def test_a_server_gone_mid_call_ends_the_instance_quietly_when_its_answer_cannot_be_sent(context, tmp_path, capfd):
    hold = Hold(tmp_path)
    process, server_end = started(context)
    server_end.send(request(hold.path))
    wait_until(hold.holders, timeout=60, what="the call to start")

    server_end.close()  # the server is killed while the call runs
    hold.release()
    process.join(30)

    assert process.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err


def test_a_server_gone_before_reading_an_answer_ends_the_instance_quietly(context, capfd):
    process, server_end = started(context)
    server_end.send(request("/quick"))
    assert server_end.poll(30)  # the answer is there, unread

    server_end.close()  # unread data: the instance's next recv is a ConnectionResetError
    process.join(30)

    assert process.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err


def test_a_server_gone_between_calls_ends_the_instance_quietly(context, capfd):
    process, server_end = started(context)
    server_end.send(request("/quick"))
    server_end.recv()

    server_end.close()  # EOF
    process.join(30)

    assert process.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err


INTERMEDIATE = """
import multiprocessing, sys, time
from mnemo.local.workers import instance_main
context = multiprocessing.get_context("fork")
server_end, child_end = context.Pipe(duplex=True)
process = context.Process(target=instance_main, args=(child_end, sys.argv[1], None))
process.start()
assert server_end.recv() == "ready"
server_end.send(("POST", sys.argv[2], {}, b"", "127.0.0.1", 30.0))
print(process.pid, flush=True)
time.sleep(600)
"""


def test_an_instance_never_outlives_its_killed_parent(tmp_path):
    # Given an instance busy with a call that never ends, under a parent that is then killed -9
    hold = Hold(tmp_path)
    parent = subprocess.Popen(
        [sys.executable, "-c", INTERMEDIATE, SCRIPTED, hold.path], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        instance = int(parent.stdout.readline())  # type: ignore[union-attr]
        wait_until(hold.holders, timeout=60, what="the call to start")
        parent.kill()
        parent.wait(30)

        # Then the instance is gone at once (no call ends it: it is killed with its parent), quietly
        wait_until(lambda: not running(instance), timeout=10, what="the instance to end")
    finally:
        parent.kill()
        hold.release()
    assert "Traceback" not in parent.stderr.read().decode()  # type: ignore[union-attr]


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
