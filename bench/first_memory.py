"""The newcomer's first minute: from ``git clone`` to the first saved memory, as the README says.

    python3 bench/first_memory.py                  # warm pip cache, 3 runs
    python3 bench/first_memory.py --cold           # each run with an empty pip cache (PIP_CACHE_DIR)
    python3 bench/first_memory.py --runs 5 --write bench/results/first-memory.md
    python3 bench/first_memory.py --runs 1 --ref main  # another commit, for a before/after

Each run, in a fresh temporary folder: ``git clone`` this repository (its committed HEAD, or
``--ref``), then
``make run`` (MNEMO_PORT set to a free port, so a server already on 8787 does not matter), wait
for the admin key it prints, and save one memory with ``POST /v1/tools/memory_add`` and that key.
It reports the clone, the ``make run`` until the key is printed, the first memory, the total,
the size of ``.venv``, and every line ``make run`` wrote that is not the commands it echoes, the
banner or the key (on a clean start there must be none). Standard library only: it runs before
any virtual environment exists.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
KEY_LINE = re.compile(r'^\s*export MNEMO_KEY="(?P<key>[^"]+)"\s*$', re.M)
#: what a clean `make run` prints: make's echo of its commands, the banner and the key
EXPECTED = (
    re.compile(r"^Creating \.venv with python3?$"),
    re.compile(r"^Installing the server's dependencies into \.venv \(once; about 30 s\)$"),
    re.compile(r"^\.venv/bin/python scripts/embedder_data\.py --force$"),
    re.compile(r"^embedder data: [\d.]+ \+ [\d.]+ MiB in \S+$"),
    re.compile(r"^\.venv/bin/mnemo serve$"),
    re.compile(r"^Mnemo listening on http://127\.0\.0\.1:\d+ \(backend: sqlite, data: \.mnemo/mnemo\.db\)$"),
    re.compile(r"^  REST http://127\.0\.0\.1:\d+/v1/tools/<tool>   MCP http://127\.0\.0\.1:\d+/mcp   Ctrl-C stops$"),
    re.compile(r"^Created the default workspace and project\. Admin API key \(shown once\):$"),
    re.compile(r"^  mnemo_\S+$"),
    re.compile(r'^  export MNEMO_KEY="mnemo_\S+"$'),
)


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def one_run(cold: bool, timeout: float, ref: str | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="mnemo-first-") as tmp:
        base = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "VIRTUAL_ENV"))}
        port = free_port()
        env["MNEMO_PORT"] = str(port)
        if cold:
            env["PIP_CACHE_DIR"] = str(base / "pip-cache")
        started = time.monotonic()
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(base / "mnemo")], check=True)
        if ref:
            subprocess.run(["git", "checkout", "--quiet", ref], cwd=base / "mnemo", check=True)
        cloned = time.monotonic()
        log = base / "make-run.log"
        with log.open("w") as sink:
            make = subprocess.Popen(
                ["make", "run"],
                cwd=base / "mnemo",
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            key = None
            while time.monotonic() - started < timeout:
                found = KEY_LINE.search(log.read_text())
                if found:
                    key = found["key"]
                    break
                if make.poll() is not None:
                    raise RuntimeError(f"make run exited:\n{log.read_text()}")
                time.sleep(0.05)
            if key is None:
                raise RuntimeError(f"no key within {timeout} s:\n{log.read_text()}")
            printed = time.monotonic()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/tools/memory_add",
                data=json.dumps({"content": "my first memory"}).encode(),
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as reply:
                body = json.loads(reply.read())
            assert body["memory"]["id"].startswith("mem_"), body
            saved = time.monotonic()
        finally:
            os.killpg(make.pid, signal.SIGINT)
            try:
                make.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(make.pid, signal.SIGKILL)
                make.wait()
        output = log.read_text().splitlines()
        # after the key: make's own "Interrupt" lines from the SIGINT that ended the run
        last = max(i for i, line in enumerate(output) if KEY_LINE.match(line))
        unexpected = [line for line in output[: last + 1] if not any(p.match(line) for p in EXPECTED)]
        return {
            "clone_s": round(cloned - started, 2),
            "make_run_to_key_s": round(printed - cloned, 2),
            "first_memory_s": round(saved - printed, 3),
            "total_s": round(saved - started, 2),
            "venv_mb": round(du(base / "mnemo" / ".venv") / 1e6),
            "unexpected_output": unexpected,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 bench/first_memory.py")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="an empty pip cache for each run")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--write", help="append the result, as Markdown, to this file")
    parser.add_argument("--ref", help="the commit or branch to clone (default: HEAD)")
    args = parser.parse_args(argv)

    ref = args.ref or "HEAD"
    commit = subprocess.run(["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True, text=True)
    # what "warm" means here: pip's own HTTP cache (index pages, downloaded wheels) and built wheels
    info = subprocess.run([sys.executable, "-m", "pip", "cache", "info"], capture_output=True, text=True).stdout
    http_files = re.search(r"Number of HTTP files:\s*(\d+)", info)
    built = re.search(r"Number of locally built wheels:\s*(\d+)", info)
    runs = []
    for number in range(1, args.runs + 1):
        result = one_run(args.cold, args.timeout, args.ref)
        print(f"run {number}: {json.dumps(result)}", flush=True)
        runs.append(result)
    cache = "cold (empty PIP_CACHE_DIR each run)" if args.cold else "warm"
    median = {k: statistics.median(float(r[k]) for r in runs) for k in ("clone_s", "make_run_to_key_s", "total_s")}
    lines = [
        f"### {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: pip cache {cache}, {len(runs)} runs",
        "",
        f"`python3 bench/first_memory.py --runs {args.runs}{' --cold' if args.cold else ''}"
        f"{' --ref ' + args.ref if args.ref else ''}` at commit {commit.stdout.strip()}; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at the end, Python {platform.python_version()}; the user's pip "
        f"cache held {http_files.group(1) if http_files else '?'} HTTP files and "
        f"{built.group(1) if built else '?'} locally built wheels.",
        "",
        "| run | git clone | make run → key printed | first memory_add | total | .venv |",
        "|---|---|---|---|---|---|",
        *[
            f"| {i} | {r['clone_s']} s | {r['make_run_to_key_s']} s | {r['first_memory_s']} s | "
            f"**{r['total_s']} s** | {r['venv_mb']} MB |"
            for i, r in enumerate(runs, 1)
        ],
        f"| median | {median['clone_s']} s | {median['make_run_to_key_s']} s | | **{median['total_s']} s** | |",
        "",
        "Unexpected output lines (warnings): "
        + (", ".join(repr(line) for r in runs for line in r["unexpected_output"]) or "none")
        + ".",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        with open(args.write, "a", encoding="utf-8") as out:
            out.write(text + "\n")
    return 0 if all(not r["unexpected_output"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
