"""Every test suite as two pytest sessions side by side: what `make test` runs after its set-up.

The suites keep about one core busy: most of their time waits on a server, a JVM, moto or a
child process. So they run as two parts at once (tests/conftest.py ``--part``): ``engines``, the
tests that need the OpenSearch node or Keycloak (those JVMs start in that session only), and
``rest``, everything else. ``rest`` prints as it goes; ``engines`` writes to
.cache/suites/engines.log, which is printed once ``rest`` ends and followed to its end. The last
line sums both parts; the exit status is the worse of the two (a part with no test selected, pytest's
5, counts as a pass while the other part ran tests).

    python scripts/suites.py [pytest arguments, passed to both parts]
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: where the parts' output is kept (a test of this script points it elsewhere)
LOGS = Path(os.environ.get("MNEMO_SUITES_LOGS") or ROOT / ".cache" / "suites")
NO_TESTS = 5
SUMMARY = re.compile(r"^(?:=+ )?(?P<body>.*\d+ (?:passed|failed|error|errors|skipped|deselected).*) in [\d.]+s")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def pytest(part: str, args: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    # each part its own cache folder: two sessions writing one lastfailed file would race
    command = [sys.executable, "-m", "pytest", f"--part={part}", "-o", f"cache_dir=.pytest_cache/{part}", *args]
    return subprocess.Popen(command, cwd=ROOT, **kwargs)  # type: ignore[call-overload]  # noqa: S603


def follow(log: Path, process: subprocess.Popen[bytes]) -> None:
    """Print the log from its start, then what it gains, until its process has ended."""
    with log.open("rb") as source:
        while True:
            ended = process.poll() is not None  # asked before reading: its last bytes are in the file then
            chunk = source.read()
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            if ended:
                return
            if not chunk:
                time.sleep(0.5)


def summary(log: Path) -> str:
    """The part's pytest summary ("12 passed, 3 deselected"), or what is known without one."""
    for line in reversed(COLOUR.sub("", log.read_text(errors="replace")).splitlines()):
        if match := SUMMARY.match(line.strip()):
            return match.group("body")
    return f"no summary (see {log})"


def outcome(*codes: int) -> int:
    """The run's exit status: the worst part's, where a part without tests (5) passes beside one with."""
    ran = [code for code in codes if code != NO_TESTS]
    return max(ran) if ran else NO_TESTS


def main(args: list[str]) -> int:
    LOGS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    engines_log = LOGS / "engines.log"
    with engines_log.open("wb") as sink:
        engines = pytest("engines", args, stdout=sink, stderr=subprocess.STDOUT)
    print(f"suites: the tests that need OpenSearch or Keycloak run beside these, into {engines_log}")
    sys.stdout.flush()
    rest_log = LOGS / "rest.log"
    rest = None
    try:
        # through a pipe pytest would drop its colours: keep them for a terminal
        colour = ["--color=yes"] if sys.stdout.isatty() else []
        rest = pytest("rest", [*colour, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert rest.stdout is not None
        with rest_log.open("wb") as sink:
            for line in rest.stdout:  # printed as it comes, and kept for the summary
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
                sink.write(line)
        rest_code = rest.wait()
        rest_took = time.monotonic() - started
        print(f"\nsuites: the rest ended after {rest_took:.0f} s; the engines part so far and to its end:\n")
        sys.stdout.flush()
        follow(engines_log, engines)
        engines_code = engines.wait()
    except KeyboardInterrupt:
        # a terminal's Ctrl-C reached both sessions too: a second SIGINT would cut their teardown (the
        # JVMs' stop), so each gets one only if it has not ended on its own within a few seconds
        for process in (engines, rest):
            if process is None:
                continue
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGINT)
                process.wait()
        raise
    took = time.monotonic() - started
    code = outcome(rest_code, engines_code)
    print(
        f"===== suites: {summary(rest_log)} (rest), {summary(engines_log)} (engines)"
        f" in {took:.0f} s side by side: {'passed' if code == 0 else f'exit {code}'} ====="
    )
    return code


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1:]))
