"""scripts/suites.py: `make test`'s two pytest sessions side by side split the suites without loss."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "suites.py"

spec = importlib.util.spec_from_file_location("suites", SCRIPT)
assert spec is not None and spec.loader is not None
suites = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suites)

#: one quick module of each part (the engine tests are only collected here, so no JVM starts)
ENGINE_MODULE = "tests/integration/test_opensearch_node.py"
PLAIN_MODULE = "tests/unit/test_timestamps.py"
#: needs no engine itself, but shares tests/built's one `sam build` per architecture with those that do
BUILT_MODULE = "tests/built/test_artifacts.py"


def run(logs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "MNEMO_SUITES_LOGS": str(logs)},
        check=False,
    )


def collected(log: str) -> set[str]:
    return {line.split("::", 1)[0] for line in log.splitlines() if "::" in line}


def test_each_test_runs_in_exactly_one_part_and_the_last_line_sums_both(tmp_path: Path) -> None:
    done = run(tmp_path, ENGINE_MODULE, PLAIN_MODULE, BUILT_MODULE, "--collect-only", "-q")

    assert done.returncode == 0, done.stdout[-3000:]
    rest = (tmp_path / "rest.log").read_text()
    engines = (tmp_path / "engines.log").read_text()
    assert collected(rest) == {PLAIN_MODULE}
    assert collected(engines) == {ENGINE_MODULE, BUILT_MODULE}
    last = done.stdout.strip().splitlines()[-1]
    assert "(rest)" in last and "(engines)" in last and last.endswith("passed =====")
    # rest prints live; the engines part is printed after it, whole
    assert done.stdout.index(PLAIN_MODULE) < done.stdout.index(ENGINE_MODULE)


def test_a_selection_that_matches_nothing_is_not_a_pass(tmp_path: Path) -> None:
    done = run(tmp_path, PLAIN_MODULE, "-k", "no_test_is_called_this", "-q")

    assert done.returncode == 5, done.stdout[-3000:]


def test_the_exit_status_is_the_worst_part_and_an_empty_part_passes_beside_a_run_one() -> None:
    assert suites.outcome(0, 0) == 0
    assert suites.outcome(0, 5) == 0
    assert suites.outcome(5, 1) == 1
    assert suites.outcome(1, 2) == 2
    assert suites.outcome(5, 5) == 5


def test_the_summary_is_read_from_plain_quiet_and_coloured_output(tmp_path: Path) -> None:
    log = tmp_path / "part.log"
    log.write_text("..\n===== 2 failed, 7 passed, 3 deselected in 1.20s =====\n")
    assert suites.summary(log) == "2 failed, 7 passed, 3 deselected"
    log.write_text("..\n28 passed in 0.50s\n")
    assert suites.summary(log) == "28 passed"
    log.write_text("\x1b[32m\x1b[1m===== 5 passed\x1b[0m\x1b[32m in 0.10s\x1b[0m =====\r\n")
    assert suites.summary(log) == "5 passed"
    log.write_text("INTERNALERROR> boom\n")
    assert suites.summary(log).startswith("no summary")


class EndsWhileAsked:
    """A part's process that writes its last line and ends just as it is asked whether it has ended."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def poll(self) -> int:
        with self.log.open("a") as sink:
            sink.write("===== 3 passed in 1.00s =====\n")
        return 0


def test_following_a_part_prints_what_it_wrote_as_it_ended(tmp_path: Path, capfdbinary) -> None:
    log = tmp_path / "engines.log"
    log.write_text("")

    suites.follow(log, EndsWhileAsked(log))

    assert b"3 passed" in capfdbinary.readouterr().out
