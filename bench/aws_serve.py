"""The README's local AWS stack under a real load: ``scripts/local_aws.py serve`` (patched moto,
an OpenSearch node, ``mnemo serve --backend aws``) fed short memories one after another over
one kept-alive HTTP/1.1 connection, spread over projects; with ``--unpatched-moto``, moto as
``moto_server`` starts it (the README's former first line), for comparison.

Reported: each add's latency (p50 / p90 / p99 / max, by stretches of the run), the answers by
status, and moto's resident memory (``VmRSS``) sampled along the way. The run stops early when
moto outgrows ``--moto-rss-cap-mb`` (the machine is shared) or an add outlasts ``--timeout``.

    python -m bench.aws_serve --adds 10000 --projects 10 --label 2026-12-03-aws-serve-patched
    python -m bench.aws_serve --adds 1500 --unpatched-moto --label 2026-12-03-aws-serve-unpatched
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.processes import free_port, wait_healthy
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
KEY = "mnemo_bench_local_aws_admin_key_0123456789abcdef"


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _moto_pid(launcher: int, moto_port: int) -> int | None:
    """The launcher's child that runs moto (its command line names the moto port)."""
    for child in _children(launcher):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(moto_port) in cmdline and "moto" in cmdline:
            return child
    return None


def _call(conn: http.client.HTTPConnection, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    reply = conn.getresponse()
    data = reply.read()
    return reply.status, (json.loads(data) if data else None)


def run(adds: int, projects: int, *, patched: bool, rss_cap_mb: float, timeout: float, every: int) -> dict[str, Any]:
    port, moto_port = free_port(), free_port()
    env = {
        **os.environ,
        "MNEMO_BOOTSTRAP_KEY": KEY,
        "MNEMO_WRITE_PER_MINUTE": "1000000",  # the load, not the rate limiter, is measured
        "MNEMO_SEARCH_PER_MINUTE": "1000000",
    }
    command = [sys.executable, "scripts/local_aws.py", "serve", "--moto-port", str(moto_port), "--port", str(port)]
    if not patched:
        command.append("--unpatched-moto")
    launcher = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    rss: list[dict[str, Any]] = []
    stopped = ""
    try:
        wait_healthy(port, launcher, 300, "scripts/local_aws.py", poll=0.5)
        moto = _moto_pid(launcher.pid, moto_port)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        slugs = [f"load-{i}" for i in range(projects)]
        for slug in slugs:
            status, _ = _call(conn, "POST", "/v1/admin/projects", {"slug": slug})
            if status != 201:
                raise RuntimeError(f"creating project {slug}: {status}")
        if moto is not None:
            rss.append({"adds": 0, "moto_rss_mb": _rss_mb(moto)})
        for i in range(adds):
            content = f"load note {i}: the deploy of service {i % 97} took {i % 13} minutes"
            body = {"content": content, "project": slugs[i % projects]}
            began = time.perf_counter()
            try:
                status, _ = _call(conn, "POST", "/v1/tools/memory_add", body)
            except (TimeoutError, OSError) as exc:
                stopped = f"add {i + 1} got no answer within {timeout:.0f} s ({type(exc).__name__})"
                break
            latencies.append(time.perf_counter() - began)
            statuses[status] += 1
            if (i + 1) % every == 0 and moto is not None:
                rss.append({"adds": i + 1, "moto_rss_mb": _rss_mb(moto)})
                current = rss[-1]["moto_rss_mb"] or 0
                print(json.dumps({**rss[-1], "p50_ms_last": summary_ms(latencies[-every:])["p50_ms"]}), flush=True)
                if current > rss_cap_mb:
                    stopped = f"moto held {current:.0f} MB after {i + 1} adds (cap {rss_cap_mb:.0f} MB)"
                    break
        conn.close()
    finally:
        launcher.send_signal(signal.SIGTERM)
        try:
            launcher.wait(60)
        except subprocess.TimeoutExpired:
            launcher.kill()
            launcher.wait()
    stretch = max(1, len(latencies) // 5)
    return {
        "moto": "patched (scripts/local_aws.py)" if patched else "unpatched (moto_server)",
        "adds_asked": adds,
        "adds_answered": len(latencies),
        "projects": projects,
        "stopped": stopped,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "latency": summary_ms(latencies),
        "by_stretch": [
            {"adds": f"{s + 1}-{min(s + stretch, len(latencies))}", **summary_ms(latencies[s : s + stretch])}
            for s in range(0, len(latencies), stretch)
        ],
        "moto_rss": rss,
        "moto_rss_max_mb": max((r["moto_rss_mb"] or 0 for r in rss), default=None),
    }


def markdown(res: dict[str, Any], command: str) -> str:
    lat = res["latency"]
    lines = [
        "# The local AWS stack under a real load (bench/aws_serve.py)",
        "",
        f"`{command}`",
        "",
        f"`scripts/local_aws.py serve` (moto {res['moto']}, one OpenSearch 2.19 node, `mnemo serve --backend aws`), "
        f"fed {res['adds_asked']} short memories one after another over one kept-alive HTTP/1.1 connection, "
        f"round robin over {res['projects']} projects; wall time per add as the client sees it. Shared 2-core "
        "machine with other work running: the latencies are noisy, the memory and the statuses are not.",
        "",
        f"- adds answered: {res['adds_answered']} of {res['adds_asked']}"
        + (f" (stopped: {res['stopped']})" if res["stopped"] else ""),
        f"- answers by status: {res['statuses']}",
        f"- add latency: p50 {lat.get('p50_ms')} / p90 {lat.get('p90_ms')} / p99 {lat.get('p99_ms')} / max "
        f"{lat.get('max_ms')} ms",
        f"- moto's resident memory, most seen: {res['moto_rss_max_mb']} MB",
        "",
        "| adds | p50 ms | p90 ms | p99 ms | max ms |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {s['adds']} | {s['p50_ms']} | {s['p90_ms']} | {s['p99_ms']} | {s['max_ms']} |" for s in res["by_stretch"]
    ]
    lines += ["", "moto's resident memory along the run:", "", "| adds | moto RSS MB |", "|---|---|"]
    lines += [f"| {r['adds']} | {r['moto_rss_mb']} |" for r in res["moto_rss"]]
    return "\n".join([*lines, ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=10000)
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--unpatched-moto", action="store_true", help="moto as moto_server starts it")
    parser.add_argument("--moto-rss-cap-mb", type=float, default=4096, help="stop when moto holds more")
    parser.add_argument("--timeout", type=float, default=60, help="the most an add may take, seconds")
    parser.add_argument("--every", type=int, default=250, help="sample moto's memory every N adds")
    parser.add_argument("--label", default="", help="write bench/results/<label>.md and .json")
    args = parser.parse_args(argv)
    res = run(
        args.adds,
        args.projects,
        patched=not args.unpatched_moto,
        rss_cap_mb=args.moto_rss_cap_mb,
        timeout=args.timeout,
        every=args.every,
    )
    command = "python -m bench.aws_serve " + " ".join(argv if argv is not None else sys.argv[1:])
    text = markdown(res, command)
    print(text)
    if args.label:
        (RESULTS / f"{args.label}.md").write_text(text)
        (RESULTS / f"{args.label}.json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
