"""The CPU one cold ``mnemo hook`` process costs (user + system, from the kernel's accounting of
each child), paired with a bare ``python -c pass`` started just before it, so the figure that
matters -- what the hook adds to the interpreter's own start -- is a median of paired differences
and survives a loaded machine. Also lists whether the hook's process imported any module heavier
than the standard library (pydantic, the service).

No server is needed: ``PreCompact`` reads its settings, its state folder and stdin and answers
without a call, which is the hook's fixed cost (the server's answer comes on top, bench/hook_cost.py).

Run: ``.venv/bin/python -m bench.hook_cpu [--runs N] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

MNEMO = Path(sys.executable).parent / "mnemo"
#: modules a light hook must not import
HEAVY = ("pydantic", "mnemo.config", "mnemo.service", "aws_lambda_powertools", "numpy")


def _cpu_of(command: list[str], payload: str, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, input=payload, capture_output=True, text=True, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def heavy_imports(env: dict[str, str]) -> list[str]:
    probe = (
        "import sys, io; sys.argv = ['mnemo', 'hook', 'PreCompact']; sys.stdin = io.StringIO('{}');"
        "from mnemo.local.cli import main; main(['hook', 'PreCompact']);"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"')))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")},
            "MNEMO_HOOK_STATE_DIR": tmp,
            "MNEMO_KEY": "unused",
        }
        hook, bare, diff = [], [], []
        for _ in range(options.runs):
            payload = json.dumps({"session_id": str(uuid.uuid4()), "cwd": tmp, "hook_event_name": "PreCompact"})
            b = _cpu_of([sys.executable, "-c", "pass"], "", env)
            h = _cpu_of([str(MNEMO), "hook", "PreCompact"], payload, env)
            bare.append(b)
            hook.append(h)
            diff.append(h - b)
        report = {
            "command": f".venv/bin/python -m bench.hook_cpu --runs {options.runs}",
            "runs": options.runs,
            "hook_cpu_ms_p50": round(statistics.median(hook), 1),
            "python_c_pass_cpu_ms_p50": round(statistics.median(bare), 1),
            "hook_minus_bare_cpu_ms_p50": round(statistics.median(diff), 1),
            "heavy_modules_imported": heavy_imports(env),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
    text = json.dumps(report, indent=2)
    print(text)
    if options.out:
        options.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
