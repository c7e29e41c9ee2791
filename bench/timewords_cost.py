"""What reading time in the question costs at import: ``python -X importtime -c "import <module>"``,
the cumulative microseconds of the module itself (its own imports included, the interpreter's
start not), median of ``--runs`` cold processes, for mnemo.timewords and for the parsers it was
weighed against (dateparser, parsedatetime, jionlp — not dependencies of the project: install them
in a throwaway virtualenv and pass its interpreter with ``--other-python``).

Run: ``.venv/bin/python -m bench.timewords_cost --runs 11 [--other-python /tmp/venv/bin/python]``
(prints JSON; bench/results/2026-12-03-timewords.md records a run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys


def import_us(python: str, module: str) -> int:
    done = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, check=True
    )
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1])
    raise RuntimeError(f"{module} not in the importtime output")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--other-python", default=None)
    args = parser.parse_args()
    targets = [(sys.executable, "mnemo.timewords")]
    if args.other_python:
        targets += [(args.other_python, m) for m in ("dateparser", "parsedatetime", "jionlp")]
    out = {}
    for python, module in targets:
        runs = [import_us(python, module) for _ in range(args.runs)]
        out[module] = {"median_ms": round(statistics.median(runs) / 1000, 1), "runs": args.runs}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
