"""The billed duration of a tool call on Lambda: the *built* MCP function (``sam build
McpFunction``, its layer included) run the way the python3.11 runtime runs it
(``tests/support/lambda_harness.py``: ``python -I -S -B``, only its code, its layer and the
runtime's SDK importable, X-Ray on), against DynamoDB (moto, its own process) and a real
OpenSearch node holding ``size`` memories of the bench corpus (``bench.aws.load_corpus``), with
the template's defaults (its ``Embedder`` parameter among them).

One process serves every call, as one warm instance does: after the cold start, ``calls`` MCP
``tools/call`` events per tool, the tools taking turns call by call. Per call: the wall time of
``lambda_handler`` (Lambda bills it, rounded up to the millisecond) and the process's CPU time.
The floor is search_memory on an empty project. Each tool's answers are hashed (``digests``).

    python -m bench.lambda_calls [--size 10000] [--calls 100] [--label NAME]   # needs aws-sam-cli

Writes bench/results/<date>-lambda-calls-<label>.{json,md}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import corpus, resultfiles
from bench.stats import summary_ms

ROOT = Path(__file__).resolve().parent.parent
FUNCTION = "McpFunction"


def _calls(n: int) -> dict[str, list[dict[str, Any]]]:
    qs = [q for _, q in corpus.queries(7, n)]
    return {
        "floor": [{"query": q, "project": "empty"} for q in qs],
        "search_memory": [{"query": q} for q in qs],
        "memory_search": [{"q": q} for q in qs],
        "recall": [{"query": q} for q in qs],
    }


def _event(tool: str, arguments: dict[str, Any], request_id: int, key: str) -> dict[str, Any]:
    from tests.support import events as samples

    call = json.loads(samples.load("mcp_tools_call.json")["body"])
    call["id"] = request_id
    call["params"].update({"name": tool, "arguments": arguments})
    headers = {"mcp-name": tool, "authorization": f"Bearer {key}"}
    return samples.http_event("mcp_tools_call.json", body=call, headers=headers)


def run(size: int, n_calls: int, split: bool = False) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from mnemo.backends.aws import AwsBackend
    from mnemo.service import tenancy

    from bench.aws import available, load_corpus, local_stack
    from tests.built.conftest import BuiltStack
    from tests.support.recording_proxy import RecordingProxy
    from tests.support.sam import find_sam, runtime_sdk, sam_build
    from tests.support.xray import XRayListener

    ok, reason = available()
    sam = find_sam()
    if not ok or sam is None:
        return {"status": "not run", "reason": reason if not ok else "no aws-sam-cli (make test installs it)"}
    with tempfile.TemporaryDirectory(prefix="mnemo-lambda-calls-") as tmp:
        work = Path(tmp)
        print("[bench] lambda_calls: sam build …", file=sys.stderr, flush=True)
        (work / "sam").mkdir()
        build = sam_build(sam, work / "sam" / "build", "x86_64", FUNCTION)
        if not (build / "SharedLayer" / "python").is_dir():  # this SAM builds a function's layer only with all
            build = sam_build(sam, work / "sam" / "build", "x86_64")
        sdk = runtime_sdk(work / "sdk")
        with local_stack() as cfg:
            backend = AwsBackend.from_settings(cfg)
            workspace, project = tenancy.create_workspace(backend, "lambda-bench")
            from mnemo.models.records import RateLimits

            backend.tenants.set_limits(
                workspace.id, RateLimits(search=corpus.MAX_PER_MINUTE, write=corpus.MAX_PER_MINUTE)
            )
            key = tenancy.create_key(
                backend, workspace.id, label="bench", scopes=["memory:read", "memory:write"], team_ids=["team-a"]
            ).plain
            tenancy.create_project(backend, workspace.id, "empty")
            print(f"[bench] lambda_calls: loading {size} memories …", file=sys.stderr, flush=True)
            load_corpus(backend, workspace.id, project.id, corpus.generate(corpus.CorpusParams(size)))
            calls = _calls(n_calls)
            names = list(calls)
            invocations = []
            for i in range(n_calls):
                for name in names:
                    tool = "search_memory" if name == "floor" else name
                    invocations.append((f"{name}#{i}", _event(tool, calls[name][i], i, key)))
            with (
                RecordingProxy(cfg.dynamodb_endpoint_url) as dynamodb,
                RecordingProxy(cfg.opensearch_endpoint) as opensearch,
                XRayListener() as xray,
            ):
                stack = BuiltStack(build, sdk, cfg, backend, dynamodb, opensearch, xray, work)
                print(f"[bench] lambda_calls: {len(invocations)} invocations …", file=sys.stderr, flush=True)
                one, records = _run(stack, invocations, work / "split.jsonl" if split else None)
            backend.close()
    warmup = min(10, n_calls // 10)
    out: dict[str, Any] = {"status": "done", "size": size, "calls_per_tool": n_calls, "warmup": warmup}
    out["cold_start_import_ms"] = {k: round(v, 1) for k, v in one.import_ms.items()}
    tools: dict[str, Any] = {}
    for name in names:
        rows = [one.results[f"{name}#{i}"] for i in range(n_calls)]
        for row in rows:
            if row.get("response", {}).get("statusCode") != 200 or '"isError":true' in row["response"]["body"]:
                raise RuntimeError(f"{name}: {str(row)[:400]}")
        digest = hashlib.sha256()
        for row in rows:
            structured = json.loads(row["response"]["body"])["result"]["structuredContent"]
            structured.pop("project", None)  # each run's workspace and projects are new
            digest.update(json.dumps(structured, sort_keys=True).encode())
        counted = rows[warmup:]
        billed = [math.ceil(r["wall_ms"]) for r in counted]
        tools[name] = {
            "wall": summary_ms([r["wall_ms"] / 1000 for r in counted]),
            "cpu": summary_ms([r["cpu_ms"] / 1000 for r in counted]),
            "billed_ms_p50": statistics.median(billed),
            "billed_ms_mean": round(statistics.fmean(billed), 2),
            "digest": digest.hexdigest()[:16],
        }
    out["tools"] = tools
    if split:
        out["split"] = _split(records, names, n_calls, warmup)
    return out


def _run(stack: Any, invocations: list[tuple[str, dict[str, Any]]], sink: Path | None) -> tuple[Any, list[dict]]:
    """``BuiltStack.run``, with the timers of ``bench.callsplit_hooks`` installed after the import
    (the harness's ``init``) when ``sink`` is given: the split then goes to that file."""
    if sink is None:
        return stack.run(FUNCTION, invocations), []
    from tests.built.conftest import HARNESS
    from tests.built.conftest import Run as BuiltRun

    out_path = stack.workdir / "split-out.json"
    spec = {
        "code": str(stack.build / FUNCTION),
        "layer": str(stack.build / "SharedLayer" / "python"),
        "sdk": str(stack.sdk),
        "function": FUNCTION,
        "events": [{"name": name, "event": event} for name, event in invocations],
        "out": str(out_path),
        "init": f"import sys; sys.path.append({str(ROOT)!r}); "
        f"from bench.callsplit_hooks import install_lambda; install_lambda({str(sink)!r})",
    }
    spec_path = stack.workdir / "split-spec.json"
    spec_path.write_text(json.dumps(spec))
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-B", str(HARNESS), str(spec_path)],
        env=stack.environment(FUNCTION),
        cwd=stack.workdir,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0 or not out_path.exists():
        raise RuntimeError(f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    got = json.loads(out_path.read_text())
    records = [json.loads(line) for line in sink.read_text().splitlines() if line.strip()]
    return BuiltRun(FUNCTION, [n for n, _ in invocations], {r["name"]: r for r in got["results"]}, got["import_ms"],
                    got["gc"], got["origins"], got["outside"], "", [], [], {}), records  # fmt: skip


def _split(rows: list[dict[str, Any]], names: list[str], n_calls: int, warmup: int) -> dict[str, Any]:
    """Each tool's stages: the median of each over the counted calls, wall and CPU (the handler's
    thread only: a search's pool thread is not in its CPU time)."""
    from bench.callsplit import STAGES

    calls = [r for r in rows if r["tool"] is not None]
    if len(calls) != n_calls * len(names):
        raise RuntimeError(f"{len(calls)} records for {n_calls * len(names)} invocations")
    out: dict[str, Any] = {}
    for k, name in enumerate(names):
        mine = calls[k :: len(names)][warmup:]
        stages = {}
        for stage in STAGES:
            walls = [r["wall"].get(stage, 0.0) for r in mine]
            if any(walls):
                stages[stage] = {
                    "wall_p50_ms": round(statistics.median(walls) * 1000, 3),
                    "cpu_p50_ms": round(statistics.median(r["cpu"].get(stage, 0.0) for r in mine) * 1000, 3),
                }
        out[name] = stages
    return out


def markdown(res: dict[str, Any], command: str) -> str:
    from bench.report import _table

    if res["status"] != "done":
        return f"# Lambda billed duration\n\nnot run: {res['reason']}\n"
    rows = [
        [name, t["wall"]["p50_ms"], t["wall"]["p99_ms"], t["billed_ms_p50"], t["billed_ms_mean"], t["cpu"]["p50_ms"],
         t["digest"]]
        for name, t in res["tools"].items()
    ]  # fmt: skip
    return "\n".join(
        [
            f"# Billed duration per call: the built {FUNCTION}, {res['size']} memories",
            "",
            f"`{command}` ({res.get('date', '')}; commit {res.get('commit', '?')}). The built function in the "
            "simulated python3.11 runtime (tests/support/lambda_harness.py), one warm process, against moto and "
            f"a real OpenSearch node on this shared 2-core machine; {res['calls_per_tool']} MCP tools/call per "
            f"tool, taking turns (the first {res['warmup']} not counted). Billed = the handler's wall time "
            "rounded up to the millisecond; its CPU time is the process's (moto and OpenSearch run in their own).",
            "",
            *_table(["tool", "wall p50 ms", "p99", "billed p50 ms", "billed mean ms", "CPU p50 ms", "digest"], rows),
            "",
            f"Cold start (import, and the first call's set-up): {res['cold_start_import_ms']} ms.",
            "",
            *_split_table(res),
        ]
    )


def _split_table(res: dict[str, Any]) -> list[str]:
    from bench.callsplit import STAGES
    from bench.report import _table

    split = res.get("split")
    if not split:
        return []
    names = list(split)
    used = [st for st in STAGES if any(st in split[n] for n in names)]
    lines = []
    for measure in ("wall", "cpu"):
        rows = [[st, *[split[n].get(st, {}).get(f"{measure}_p50_ms", "") for n in names]] for st in used]
        lines += [
            f"With bench.callsplit's timers in the function: median per call, ms of {measure} time"
            + (" (the handler's thread)" if measure == "cpu" else "")
            + ":",
            "",
            *_table(["stage", *names], rows),
            "",
        ]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.lambda_calls")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--label", default="run")
    parser.add_argument("--split", action="store_true", help="with bench.callsplit's timers in the function")
    a = parser.parse_args(argv)
    res = run(a.size, a.calls, a.split)
    command = "python -m bench.lambda_calls " + " ".join(sys.argv[1:] if argv is None else argv)
    resultfiles.write(resultfiles.stamp(res, command), "lambda-calls", a.label, markdown(res, command))


if __name__ == "__main__":
    main()
