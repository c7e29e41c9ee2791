"""What each Claude Code hook costs as Claude Code pays it: a cold ``mnemo hook <event>`` process per
event (the plugin's command), its JSON on stdin, against a real ``mnemo serve`` on the embedded
store (one instance, warmed, 200 memories in the repository's project). p50 / p95 wall time per
event, and the hook's own import cost (``python -X importtime``, no server).

Measure on a quiet machine: on a box whose load is several times its cores, every figure scales
with the load (``load_average`` and ``python_c_pass_p50_ms``, the interpreter's own cold start,
are recorded beside them).

Targets: SessionStart p95 <= 300 ms, UserPromptSubmit p95 <= 150 ms, PreCompact / Stop (no server
call) <= 100 ms.

Run: ``.venv/bin/python -m bench.hook_cost [--runs N]`` (writes bench/results/hook_cost.json).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from tests.support.server import start_server, stop_server

#: what `mnemo hook <event>` imports before it reads stdin
HOOK_IMPORTS = "from mnemo.local.cli import main; import mnemo.local.cli.hook, mnemo.hook.events"
OUT = Path(__file__).resolve().parent / "results" / "hook_cost.json"
MNEMO = Path(sys.executable).parent / "mnemo"
TARGET_MS = {"SessionStart": 300, "UserPromptSubmit": 150, "PreCompact": 100, "Stop": 100}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def _post(url: str, key: str, path: str, body: dict) -> None:
    for _ in range(20):
        request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST")
        request.add_header("Authorization", f"Bearer {key}")
        request.add_header("Content-Type", "application/json")
        try:
            urllib.request.urlopen(request, timeout=30).read()
            return
        except urllib.error.HTTPError as exc:
            if exc.code not in (429, 503):
                raise
            time.sleep(0.5)
    raise SystemExit(f"{path}: the server kept refusing")


def import_ms() -> float:
    """The hook's own imports, cumulative, in ms (``-X importtime``: top-level entries only)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", HOOK_IMPORTS],
        capture_output=True,
        text=True,
        check=True,
    )
    total = 0
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and re.match(r"^ \S", parts[2]):
            total += int(parts[1])
    return total / 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        limits = {"MNEMO_WRITE_PER_MINUTE": "100000", "MNEMO_SEARCH_PER_MINUTE": "100000"}
        server = start_server(root / "data", env_extra=limits, args=("--workers", "1"))
        try:
            repo = root / "checkout"
            (repo / ".git").mkdir(parents=True)
            (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/bench-hooks.git\n')
            _post(server.url, server.key, "/v1/admin/projects", {"slug": "bench-hooks"})
            for i in range(200):
                _post(
                    server.url,
                    server.key,
                    "/v1/tools/memory_add",
                    {"project": "bench-hooks", "content": f"Decision {i}: service {i % 17} deploys on day {i % 7}"},
                )
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")},
                "MNEMO_URL": server.url,
                "MNEMO_KEY": server.key,
                "MNEMO_HOOK_STATE_DIR": str(root / "state"),
                "MNEMO_HOOK_DEADLINE_S": "10",
            }
            results = {}
            for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop"):
                times = []
                failed = 0
                for i in range(runs + 2):  # the first two warm the server's instance and the page cache
                    payload = {
                        "session_id": str(uuid.uuid4()),
                        "transcript_path": str(repo / "t.jsonl"),
                        "cwd": str(repo),
                        "hook_event_name": event,
                        "source": "startup",
                        "prompt": "when does service 3 deploy?",
                        "trigger": "auto",
                        "stop_hook_active": False,
                    }
                    started = time.perf_counter()
                    done = subprocess.run(
                        [str(MNEMO), "hook", event], input=json.dumps(payload), capture_output=True, text=True, env=env
                    )
                    elapsed = (time.perf_counter() - started) * 1000
                    if done.returncode != 0:
                        raise SystemExit(f"{event}: exit {done.returncode} {done.stderr}")
                    if i >= 2:
                        times.append(elapsed)
                        failed += bool(done.stderr)
                results[event] = {
                    "p50_ms": round(_pct(times, 0.5), 1),
                    "p95_ms": round(_pct(times, 0.95), 1),
                    "target_p95_ms": TARGET_MS[event],
                    "failed_open": failed,
                }
        finally:
            stop_server(server)
    bare = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append((time.perf_counter() - started) * 1000)
    report = {
        "command": f".venv/bin/python -m bench.hook_cost --runs {runs}",
        "runs": runs,
        "load_average": os.getloadavg(),
        "hook_imports_ms": round(import_ms(), 1),
        # the interpreter's own cold start on the same box, for scale: the hook's floor
        "python_c_pass_p50_ms": round(_pct(bare, 0.5), 1),
        "events": results,
    }
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
