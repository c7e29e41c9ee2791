"""Cold start of the *built* functions, in the simulated python3.11 runtime the built-artifact
tests use (``tests/support/lambda_harness.py``: ``python -I -S -B``, only the function's code, its
layer and a runtime-like SDK on ``sys.path``, tracing on as in Lambda), against the baseline handler
``bench/baseline_handler.py`` built the same way: its code directory holds just the handler, its
layer is ``aws-lambda-powertools[tracer]`` built by ``scripts/build_layer.py`` exactly as the real
layer is (same pins, same platform wheels, same unchecked-hash bytecode), boto3 comes from the same
runtime-like SDK.

Only the import of the handler module is timed (wall and CPU, inside the child), runs interleaved
so load drift hits every module alike. Also records the layer's size unzipped and zipped, for
both architectures.

    python -m bench.coldstart_built [--runs 15]     # needs aws-sam-cli (`make test` installs it)

Writes bench/results/coldstart-built.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.sam import ROOT, find_sam, install_sdk, pinned, runtime_sdk, sam_build

RESULTS = ROOT / "bench" / "results"
HARNESS = ROOT / "tests" / "support" / "lambda_harness.py"
FUNCTIONS = ["WriteFunction", "ReadFunction", "McpFunction", "AdminFunction", "IndexerFunction", "CleanupFunction"]
BASELINE = "Baseline"
BASELINE_LAYER = ("--requirement", "aws-lambda-powertools[tracer]")
#: what a first call sets up before its own work: the functions build their backend's clients
#: (boto3's DynamoDB client, the SigV4-signing OpenSearch client; no request is sent), the
#: baseline a DynamoDB client
INIT = {
    BASELINE: "import boto3; boto3.session.Session().client('dynamodb', region_name='us-east-1')",
    "function": "from mnemo import runtime; runtime.service()",
}
TARGET_RATIO = 1.5
LAYER_BUDGET_MB = 45.0


def build_baseline(work: Path) -> tuple[Path, Path]:
    code = work / "baseline" / "code"
    code.mkdir(parents=True)
    shutil.copy(ROOT / "bench" / "baseline_handler.py", code / "handler.py")
    layer = work / "baseline" / "layer" / "python"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_layer.py"), "--arch", "x86_64", *BASELINE_LAYER, str(layer)],
        check=True,
    )
    return code, layer


def environment(function: str, code: Path) -> dict[str, str]:
    """The template's variables and the runtime's; no backend is reached (the import only)."""
    return {
        "MNEMO_BACKEND": "aws",
        "MNEMO_OPENSEARCH_ENDPOINT": "https://search-mnemo-bench.us-east-1.es.amazonaws.com",
        "MNEMO_OPENSEARCH_SIGV4": "true",
        "AWS_ACCESS_KEY_ID": "ASIABENCHBENCHBENCH0",
        "AWS_SECRET_ACCESS_KEY": "bench-secret-access-key-0000000000000000",
        "AWS_SESSION_TOKEN": "bench-session-token",
        "POWERTOOLS_SERVICE_NAME": "mnemo",
        "POWERTOOLS_METRICS_NAMESPACE": "Mnemo",
        "POWERTOOLS_LOG_LEVEL": "INFO",
        "AWS_LAMBDA_FUNCTION_NAME": function,
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "LAMBDA_TASK_ROOT": str(code),  # Tracer is on in Lambda: it patches botocore at import
        "PATH": "/usr/bin:/bin",
        "HOME": str(code.parent),
        "TZ": ":UTC",
    }


def import_once(function: str, code: Path, layer: Path, sdk: Path, work: Path) -> dict[str, float]:
    out = work / f"out-{function}.json"
    spec = work / f"spec-{function}.json"
    spec.write_text(
        json.dumps(
            {
                "code": str(code),
                "layer": str(layer),
                "sdk": str(sdk),
                "function": function,
                "events": [],
                "out": str(out),
                "init": INIT.get(function, INIT["function"]),
            }
        )
    )
    subprocess.run(
        [sys.executable, "-I", "-S", "-B", str(HARNESS), str(spec)],
        env=environment(function, code),
        check=True,
        capture_output=True,
        timeout=120,
    )
    result: dict[str, float] = json.loads(out.read_text())["import_ms"]
    return result


#: what the layer no longer pays at import, measured in the simulated runtime against the built
#: layer (the dropped packages installed beside it): (set-up, statement) as it was, and as it is;
#: each statement's CPU time is measured after its set-up
MODELS = "import mnemo.models.records, mnemo.models.tools, mnemo.models.retrieval, mnemo.models.admin"
MARGINAL = {
    "settings: pydantic-settings' BaseSettings with mnemo's fields / mnemo.config": (
        ("import pydantic, mnemo.config as m", "import pydantic_settings as p; pydantic.create_model("
         "'S', __base__=p.BaseSettings, **{n: (f.annotation, f) for n, f in m.Settings.model_fields.items()})"),
        ("from pydantic import BaseModel, ConfigDict, Field", "import mnemo.config"),
    ),
    "ids: python-ulid / mnemo.ids": (
        ("from pydantic import BaseModel", "import ulid"),
        ("from pydantic import BaseModel", "import mnemo.ids"),
    ),
    "models: validators built at import / on first use (defer_build)": (
        ("import mnemo.models.common as c; c.Model.model_config['defer_build'] = False", MODELS),
        ("import mnemo.models.common", MODELS),
    ),
}  # fmt: skip
_PROBE = (
    "import sys, time\n"
    "sys.path[:] = [*sys.argv[1:4], *[p for p in sys.path if p]]\n"
    "exec(sys.argv[4], globals())\n"
    "t = time.process_time()\n"
    "exec(sys.argv[5], globals())\n"
    "print((time.process_time() - t) * 1000)\n"
)


def marginal(layer: Path, extra: Path, sdk: Path, setup: str, statement: str) -> float:
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", _PROBE, str(layer), str(extra), str(sdk), setup, statement],
        check=True,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    return float(out.stdout.strip().splitlines()[-1])


def layer_sizes(site: Path) -> dict[str, float]:
    unzipped = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "layer.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(site.rglob("*")):
                if f.is_file():
                    zf.write(f, Path("python") / f.relative_to(site))
        zipped = archive.stat().st_size
    return {"unzipped_mb": round(unzipped / 1e6, 1), "zipped_mb": round(zipped / 1e6, 1)}


def run(runs: int) -> dict[str, Any]:
    sam = find_sam()
    if not sam:
        sys.exit("aws-sam-cli not found: run `make test` once (it installs .cache/sam-venv) or set MNEMO_SAM")
    with tempfile.TemporaryDirectory(prefix="mnemo-coldstart-") as tmp:
        work = Path(tmp)
        started = time.monotonic()
        (work / "x86").mkdir()
        (work / "arm").mkdir()
        build = sam_build(sam, work / "x86" / "build", "x86_64")
        build_s = time.monotonic() - started
        arm = sam_build(sam, work / "arm" / "build", "arm64", "SharedLayer")
        sdk = runtime_sdk(work / "sdk")
        base_code, base_layer = build_baseline(work)
        targets = {BASELINE: (base_code, base_layer)}
        targets.update({f: (build / f, build / "SharedLayer" / "python") for f in FUNCTIONS})
        kinds = ("wall", "cpu", "init_wall", "init_cpu")
        times: dict[str, dict[str, list[float]]] = {name: {kind: [] for kind in kinds} for name in targets}
        for name, (code, layer) in targets.items():  # one unmeasured import each (page cache)
            import_once(name, code, layer, sdk, work)
        for _ in range(runs):
            for name, (code, layer) in targets.items():
                measured = import_once(name, code, layer, sdk, work)
                for kind in kinds:
                    times[name][kind].append(measured[kind])
                times[name]["total_cpu"] = [*times[name].get("total_cpu", []), measured["cpu"] + measured["init_cpu"]]
        kinds = (*kinds, "total_cpu")
        extra = install_sdk(work / "dropped", *pinned("pydantic-settings", "python-dotenv", "python-ulid"), "--no-deps")
        site = build / "SharedLayer" / "python"
        handler = f"import sys; sys.path.insert(0, {str(build / 'WriteFunction')!r}); import handler"
        lambda_env = "import os; os.environ['LAMBDA_TASK_ROOT'] = '/var/task'"
        # mnemo.coldstart imported while the collector is off does not pause it: the import then runs
        # with the collector on, in the same environment
        unpaused = f"{lambda_env}; import gc; gc.disable(); import mnemo.coldstart; gc.enable()"
        items = {
            **MARGINAL,
            "garbage collector: on while WriteFunction loads / paused (mnemo.coldstart)": (
                (unpaused, handler),
                (lambda_env, handler),
            ),
        }
        costs: dict[str, dict[str, list[float]]] = {name: {"then": [], "now": []} for name in items}
        for _ in range(runs):
            for name, (then, now) in items.items():
                costs[name]["then"].append(marginal(site, extra, sdk, *then))
                costs[name]["now"].append(marginal(site, extra, sdk, *now))
        base = {kind: statistics.median(times[BASELINE][kind]) for kind in kinds}
        modules = {
            name: {
                **{f"{kind}_median_ms": round(statistics.median(t[kind]), 1) for kind in kinds},
                **{f"{kind}_min_ms": round(min(t[kind]), 1) for kind in kinds},
                **{f"{kind}_ratio": round(statistics.median(t[kind]) / base[kind], 2) for kind in kinds},
            }
            for name, t in times.items()
        }
        return {
            "runs": runs,
            "sam_build_s": round(build_s, 1),
            "avoided": {
                name: {when: round(statistics.median(values), 1) for when, values in c.items()}
                for name, c in costs.items()
            },
            "modules": modules,
            "layer": {
                "x86_64": layer_sizes(build / "SharedLayer" / "python"),
                "arm64": layer_sizes(arm / "SharedLayer" / "python"),
                "baseline_x86_64": layer_sizes(base_layer),
            },
        }


def report(results: dict[str, Any], command: str) -> str:
    lines = [
        "# Cold start of the built functions (simulated python3.11 runtime)",
        "",
        f"Command: `{command}` — {results['when']}, {results['machine']}.",
        "",
        "Import of each built handler module in `python -I -S -B` with only its code directory, its",
        "layer and a runtime-like SDK on `sys.path` (tests/support/lambda_harness.py), tracing on;",
        "the baseline is bench/baseline_handler.py (Powertools Logger, Tracer, Metrics, resolver, boto3)",
        "with a layer of aws-lambda-powertools[tracer] built by the same scripts/build_layer.py.",
        f"Medians of {results['runs']} interleaved runs; ratio = median ÷ the baseline's median. CPU time",
        "is the criterion (wall time on this shared machine mostly measures the other jobs). The",
        "last columns add what a first call sets up before its own work: the functions build their",
        "backend (boto3's DynamoDB client and the SigV4 OpenSearch client, no request sent), the",
        "baseline a boto3 DynamoDB client; the functions import boto3 only there, the baseline at import.",
        "The functions pause the garbage collector while their handler module loads (mnemo.coldstart);",
        "the baseline, a plain minimal handler, does not.",
        "",
        "| handler | import, CPU | ratio | import, wall | ratio | CPU ≤ 1.5× | + first-call set-up, CPU | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in results["modules"].items():
        ok = "—" if name == BASELINE else ("yes" if m["cpu_ratio"] <= TARGET_RATIO else "no")
        cpu, wall = f"{m['cpu_median_ms']} ms | {m['cpu_ratio']}", f"{m['wall_median_ms']} ms | {m['wall_ratio']}"
        lines.append(f"| {name} | {cpu} | {wall} | {ok} | {m['total_cpu_median_ms']} ms | {m['total_cpu_ratio']} |")
    lines += ["", "| layer | unzipped | zipped | ≤ 45 MB unzipped |", "|---|---|---|---|"]
    for name, size in results["layer"].items():
        ok = "yes" if size["unzipped_mb"] <= LAYER_BUDGET_MB else "no"
        lines.append(f"| {name} | {size['unzipped_mb']} MB | {size['zipped_mb']} MB | {ok} |")
    lines += ["", "What the layer no longer pays at import (CPU, median, each after its set-up):", ""]
    lines += ["| | as it was | as it is | saved |", "|---|---|---|---|"]
    for name, c in results["avoided"].items():
        lines.append(f"| {name} | {c['then']} ms | {c['now']} ms | {round(c['then'] - c['now'], 1)} ms |")
    lines += ["", f"`sam build` (x86_64, --no-cached): {results['sam_build_s']} s.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.coldstart_built")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    results = run(args.runs)
    results["when"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    results["machine"] = f"{os.cpu_count()} CPUs, load average {load} at the end, Python {platform.python_version()}"
    command = "python -m bench.coldstart_built" + (f" --runs {args.runs}" if args.runs != 15 else "")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "coldstart-built.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / "coldstart-built.md").write_text(report(results, command))
    print(report(results, command))


if __name__ == "__main__":
    main()
