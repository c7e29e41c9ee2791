"""Cold start: the time to import each function's handler module in a fresh interpreter, against
``bench.baseline_handler`` (a minimal Powertools HTTP handler that imports boto3), as a ratio.

Two columns, because this machine sets ``PYTHONDONTWRITEBYTECODE=1`` and Lambda matters most:

* **source** — no bytecode at all: ``PYTHONPYCACHEPREFIX`` points at an empty folder and
  ``PYTHONDONTWRITEBYTECODE=1``, so every module (ours and our dependencies') is compiled on
  import. We assume this is what Lambda does: ``sam build`` installs wheels without compiling
  them and ``/var/task`` and ``/opt`` are read-only, so a cold start cannot cache bytecode.
* **bytecode** — ``PYTHONPYCACHEPREFIX`` points at a folder filled by one prior import, as on a
  developer machine (or a package built with ``compileall``).

Only the import is timed (inside the child, with ``perf_counter``), not interpreter start-up.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "bench.baseline_handler"

_PROBE = (
    "import time, importlib\n"
    "t = time.perf_counter()\n"
    "importlib.import_module({module!r})\n"
    "print(time.perf_counter() - t)\n"
)


def function_modules() -> list[str]:
    return sorted(
        f"functions.{p.parent.name}.handler" for p in (ROOT / "functions").glob("*/handler.py") if p.is_file()
    )


def _env(prefix: Path, write: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "POWERTOOLS", "MNEMO", "AWS"))}
    env.update(
        {
            "PYTHONPYCACHEPREFIX": str(prefix),
            "POWERTOOLS_SERVICE_NAME": "mnemo",
            "POWERTOOLS_METRICS_NAMESPACE": "Mnemo",
            "AWS_DEFAULT_REGION": "eu-west-1",
        }
    )
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def import_time(module: str, prefix: Path, write: bool) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        cwd=ROOT,
        env=_env(prefix, write),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return float(out.stdout.strip().splitlines()[-1])


def top_imports(module: str, prefix: Path, count: int = 8) -> list[tuple[str, float]]:
    """Where ``module``'s import time goes: ``-X importtime`` self times summed per top-level
    package (ms), heaviest first."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        cwd=ROOT,
        env=_env(prefix, False),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    packages: dict[str, float] = {}
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, _cumulative, name = line.removeprefix("import time:").split("|")
        top = name.strip().split(".")[0]
        packages[top] = packages.get(top, 0.0) + int(own) / 1000
    return [(name, round(ms, 1)) for name, ms in sorted(packages.items(), key=lambda kv: -kv[1])[:count]]


def run(runs: int = 5) -> dict[str, Any]:
    modules = [BASELINE, *function_modules()]
    results: dict[str, Any] = {"runs": runs, "modes": {}}
    with tempfile.TemporaryDirectory(prefix="mnemo-bench-pyc-") as tmp:
        warm = Path(tmp) / "warm"
        for module in modules:  # fill the bytecode cache once
            import_time(module, warm, write=True)
        for mode in ("source", "bytecode"):
            times: dict[str, list[float]] = {m: [] for m in modules}
            for i in range(runs):
                for module in modules:  # interleaved, so load drift hits every module alike
                    prefix = warm if mode == "bytecode" else Path(tmp) / f"empty-{i}"
                    times[module].append(import_time(module, prefix, write=False))
            base = statistics.median(times[BASELINE])
            results["modes"][mode] = {
                m: {
                    "median_ms": round(statistics.median(t) * 1000, 1),
                    "min_ms": round(min(t) * 1000, 1),
                    "ratio": round(statistics.median(t) / base, 2),
                }
                for m, t in times.items()
            }
        results["top_imports"] = {m: top_imports(m, Path(tmp) / "empty-top") for m in modules}
    return results
