"""What an ``Idempotency-Key`` costs on the SQLite backend: ``IdempotencyStore.run_once`` on a
fresh file, first calls (claim, compute, store the result) and replays (the stored result),
CPU time per call of this process (``time.process_time``; the computation is a constant dict,
so only the store's work is measured), median of ``--rounds`` rounds.

    python -m bench.idempotency --calls 2000 --rounds 3 --label 2026-12-03-idempotency-powertools
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def _round(calls: int) -> dict[str, float]:
    from mnemo.backends.sqlite import SqliteBackend

    with tempfile.TemporaryDirectory() as folder:
        backend = SqliteBackend(Path(folder) / "mnemo.db")
        try:
            store = backend.idempotency
            result = {"memory": {"id": "mem_x", "content": "a result of a few hundred bytes " * 8}}
            out: dict[str, float] = {}
            for phase in ("first", "replay"):
                started = time.process_time()
                for i in range(calls):
                    store.run_once("ws_bench", f"key-{i}", "fingerprint", lambda: result)
                out[phase] = (time.process_time() - started) * 1000 / calls
            return out
        finally:
            backend.close()


def run(calls: int, rounds: int) -> dict[str, Any]:
    from mnemo.backends.sqlite import idempotency

    samples = [_round(calls) for _ in range(rounds)]
    return {
        "implementation": (idempotency.__doc__ or "").strip().splitlines()[0],
        "calls": calls,
        "rounds": rounds,
        "cpu_ms_per_call": {
            phase: round(statistics.median(s[phase] for s in samples), 4) for phase in ("first", "replay")
        },
        "rounds_cpu_ms_per_call": samples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="", help="write bench/results/<label>.json")
    args = parser.parse_args(argv)
    res = run(args.calls, args.rounds)
    res["command"] = "python -m bench.idempotency " + " ".join(argv if argv is not None else sys.argv[1:])
    print(json.dumps(res, indent=2))
    if args.label:
        (RESULTS / f"{args.label}.json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
