"""The pool of handler instances behind ``mnemo serve``: worker processes, each serving one call at
a time, so a slow call holds one instance and never the others; a call past its budget loses its
instance, as a timed-out Lambda invocation does. The instances run ``ScriptedGateway``."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemo.local.workers import PoolOptions, WorkerPool

from tests.support.scripted_gateway import Hold
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SCRIPTED = "tests.support.scripted_gateway:ScriptedGateway"


def pool_of(**options: object) -> WorkerPool:
    pool = WorkerPool(PoolOptions(gateway=SCRIPTED, **options))  # type: ignore[arg-type]
    pool.start()
    return pool


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    running = pool_of(min_instances=2, max_instances=4, budget_s=30, demote_after_s=None)
    yield running
    running.close()


def call(pool: WorkerPool, path: str, body: bytes = b"") -> tuple[int, dict[str, str], dict]:
    status, headers, data = pool.dispatch("POST", path, {}, body)
    return status, headers, json.loads(data)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_warm_instances_are_running_when_start_returns(pool):
    assert pool.instances == 2
    assert len(pool.pids()) == 2 and all(alive(pid) for pid in pool.pids())


def test_a_slow_call_holds_one_instance_while_the_others_keep_answering(pool, tmp_path):
    hold = Hold(tmp_path)
    slow: list[dict] = []
    running = threading.Thread(target=lambda: slow.append(call(pool, hold.path)[2]))
    running.start()
    try:
        wait_until(hold.holders, timeout=30, what="the slow call to start")
        answers = [call(pool, "/quick", f"{i}".encode())[2] for i in range(20)]
        still_running = running.is_alive()
    finally:
        hold.release()
        running.join()

    assert still_running, "the twenty quick calls were answered while the slow one ran"
    assert [a["body"] for a in answers] == [str(i) for i in range(20)]
    assert slow[0]["pid"] not in {a["pid"] for a in answers}


def test_busy_instances_make_the_pool_scale_out_up_to_its_maximum(pool, tmp_path):
    hold = Hold(tmp_path)
    seen: list[int] = []
    lock = threading.Lock()

    def slow_call() -> None:
        pid = call(pool, hold.path)[2]["pid"]
        with lock:
            seen.append(pid)

    callers = [threading.Thread(target=slow_call) for _ in range(8)]
    for caller in callers:
        caller.start()
    try:
        wait_until(lambda: len(hold.holders()) == 4, timeout=60, what="four instances holding a call")
    finally:
        hold.release()
        for caller in callers:
            caller.join()

    assert len(seen) == 8
    assert len(set(seen)) == 4  # max_instances: two warm ones and two cold starts
    assert pool.instances == 4


def test_a_call_past_its_budget_is_503_and_its_instance_is_replaced():
    pool = pool_of(min_instances=1, max_instances=2, budget_s=0.5)
    try:
        (before,) = pool.pids()
        status, headers, body = call(pool, "/sleep/30")
        after = call(pool, "/quick")[2]["pid"]
        instances = pool.instances
    finally:
        pool.close()

    assert status == 503
    assert body["code"] == "unavailable" and "0.5 s" in body["message"]
    assert headers["Retry-After"] == "1"
    assert not alive(before), "the timed-out instance was killed"
    assert after != before
    assert 1 <= instances <= 2  # the replacement, and maybe a cold start for the next call


def test_every_call_gets_the_budget_as_its_remaining_time(pool):
    assert call(pool, "/quick")[2]["budget_s"] == 30


def test_an_instance_that_dies_is_a_500_and_is_replaced(pool):
    before = set(pool.pids())

    status, _, body = call(pool, "/crash")
    after = call(pool, "/quick")

    assert (status, body) == (500, {"message": "internal error", "code": "internal"})
    assert after[0] == 200
    (dead,) = before - set(pool.pids())
    assert not alive(dead)
    assert pool.instances >= 2  # the warm count is kept


def test_taking_the_last_idle_instance_warms_a_spare(tmp_path):
    hold = Hold(tmp_path)
    pool = pool_of(min_instances=1, max_instances=3, budget_s=30)
    try:
        slow = threading.Thread(target=lambda: call(pool, hold.path))
        slow.start()
        # the spare comes up while the slow call runs
        pids = wait_until(lambda: set(pool.pids()) if len(pool.pids()) >= 2 else None, 30, "a spare")
        quick = call(pool, "/quick")[2]["pid"]
        still_running = slow.is_alive()
        hold.release()
        slow.join()
    finally:
        hold.release()
        pool.close()

    assert still_running and len(pids) == 2
    assert quick in pids


def test_close_stops_every_instance():
    pool = pool_of(min_instances=2, max_instances=2)
    pids = pool.pids()

    pool.close()

    assert not any(alive(pid) for pid in pids)
    status, _, body = call(pool, "/quick")
    assert status == 503 and body["code"] == "unavailable"


def test_each_calls_metrics_go_to_the_sink_as_one_emf_line(tmp_path: Path):
    sink = tmp_path / "metrics.jsonl"
    pool = pool_of(min_instances=1, max_instances=1, metrics_to=str(sink))
    try:
        call(pool, "/metric/first_call")
        call(pool, "/quick")  # records nothing, writes nothing
        call(pool, "/metric/second_call")
    finally:
        pool.close()

    lines = [json.loads(line) for line in sink.read_text().splitlines()]
    names = [[m["Name"] for m in line["_aws"]["CloudWatchMetrics"][0]["Metrics"]] for line in lines]
    # each line holds its own call's metric only: the set is emptied after every call
    assert names == [["first_call"], ["second_call"]]
    assert lines[0]["first_call"] == [1.0] and lines[1]["second_call"] == [1.0]


def may_raise_priorities() -> bool:
    """Whether this process may raise a priority it lowered (root, or RLIMIT_NICE): probed on a
    child of its own."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        os.setpriority(os.PRIO_PROCESS, child.pid, 10)
        try:
            os.setpriority(os.PRIO_PROCESS, child.pid, 0)
        except OSError:
            return False
        return True
    finally:
        child.kill()
        child.wait()


def long_call_then_quick_ones(tmp_path: Path) -> dict:
    """A call held past demote_after_s beside quick ones; the priorities seen while it ran, and
    which instances the pool kept after it."""
    hold = Hold(tmp_path)
    pool = pool_of(min_instances=2, max_instances=3, budget_s=30, demote_after_s=0.3)
    try:
        answers: list[dict] = []
        slow = threading.Thread(target=lambda: answers.append(call(pool, hold.path)[2]))
        slow.start()
        (holder,) = wait_until(hold.holders, timeout=30, what="the slow call to start")
        # past demote_after_s, while the call runs
        wait_until(lambda: os.getpriority(os.PRIO_PROCESS, holder) == 10, timeout=30, what="the demotion")
        priorities = {pid: os.getpriority(os.PRIO_PROCESS, pid) for pid in pool.pids()}
        quick = call(pool, "/quick")[2]["pid"]
        hold.release()
        slow.join()
        (slow_pid,) = [a["pid"] for a in answers]
        after = {pid: os.getpriority(os.PRIO_PROCESS, pid) for pid in pool.pids()}
    finally:
        hold.release()
        pool.close()
    assert priorities[slow_pid] == 10, "the long call's instance runs at nice 10"
    assert priorities[quick] == 0, "quick calls keep their priority"
    assert answers[0]["path"] == hold.path
    return {"slow": slow_pid, "after": after}


def test_a_long_call_gives_way_to_quick_ones_then_gets_its_priority_back_where_the_os_allows(tmp_path):
    seen = long_call_then_quick_ones(tmp_path)

    if may_raise_priorities():  # root, as on CI: the instance is kept, at its old priority
        assert seen["after"].get(seen["slow"]) == 0, "the demoted instance is reused at its priority"
    else:
        assert seen["slow"] not in seen["after"] and not alive(seen["slow"]), "replaced where it cannot"


def test_a_demoted_instance_that_cannot_get_its_priority_back_is_replaced(tmp_path, monkeypatch):
    """As for a process without the privilege to raise a priority again (most users' own)."""
    lower_only = os.setpriority

    def setpriority(which: int, who: int, priority: int) -> None:
        if priority < os.getpriority(which, who):
            raise PermissionError(1, "Operation not permitted")
        lower_only(which, who, priority)

    monkeypatch.setattr(os, "setpriority", setpriority)
    seen = long_call_then_quick_ones(tmp_path)

    assert seen["slow"] not in seen["after"] and not alive(seen["slow"]), "a demoted instance is not reused"
