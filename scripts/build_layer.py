"""Build a Lambda layer's ``python/`` directory: pinned runtime dependencies for the target
architecture, the given packages, and bytecode compiled for a read-only, re-zipped directory.

``sam build`` runs it through ``shared/Makefile`` (target ``build-SharedLayer``); ``bench.coldstart_built``
builds the baseline handler's layer with it too, so both are built the same way.

1. **Resolve** with pip itself for the target platform (``manylinux2014_<arch>``, CPython 3.11,
   wheels only): ``[project].dependencies`` of pyproject.toml (or ``--requirement``), constrained by
   constraints.txt. Every resolved distribution must be pinned there, or the build fails: the
   layer and the test venv come from one list and cannot drift.
2. **Drop** what Lambda does not need (:data:`NOT_IN_LAYER`), then install exactly the remaining
   pins with ``--no-deps``, so a dropped distribution cannot come back as somebody's dependency:
   the very files the resolution chose (fetched by their URL and sha256, from pip's cache when it
   has them), installed with ``--no-index`` from that folder. Asking the index again for every
   name would cost as much as the resolution: pip reads every file of every release of each
   project (≈ 55,000 links, about 10 s of CPU), botocore's and pydantic-core's the longest.
3. **Copy** the packages (without ``__pycache__``) and **compile** everything with
   ``unchecked-hash`` pycs: Lambda's code directories are read-only, so Python cannot cache
   bytecode there, and ``sam package`` zips every file with a 1980 timestamp, which would make
   timestamp-based pycs stale. ``-d /opt/python`` (where Lambda mounts a layer's ``python/``) and a
   fixed hash seed make two builds byte-identical.

usage: python scripts/build_layer.py --arch {arm64,x86_64} [--package DIR]... [--requirement REQ]... TARGET
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: distributions the layer never carries, and why (docs/aws.md, "What the layer holds")
NOT_IN_LAYER = {
    # the python3.11 runtime ships the AWS SDK; shipping only part of it (aws-xray-sdk depends
    # on botocore) would mix SDK releases, so all three stay out together
    "boto3": "runtime SDK",
    "botocore": "runtime SDK",
    "s3transfer": "runtime SDK",
    # opensearch-py 3.x depends on its gRPC client's protobufs; the REST client never imports them
    "opensearch-protobufs": "never imported",
    "grpcio": "never imported",
    "protobuf": "never imported",
    # the embedded backend's vector search only; on AWS, OpenSearch searches the vectors
    "numpy": "SQLite backend only",
    "usearch": "SQLite backend only",
    # Markdown frontmatter for the CLI's imports from other tools and its Markdown export
    "pyyaml": "CLI only",
}

PLATFORMS = {"arm64": "manylinux2014_aarch64", "x86_64": "manylinux2014_x86_64"}
PIP_TARGET = ["--platform", "", "--implementation", "cp", "--python-version", "3.11", "--only-binary=:all:"]
#: where Lambda mounts a layer's python/ directory (file names in compiled tracebacks)
LAYER_MOUNT = "/opt/python"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project_requirements(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text())["project"]
    # the server's dependencies and the AWS backend's (the `aws` extra)
    deps: list[str] = [*project["dependencies"], *project["optional-dependencies"]["aws"]]
    return [d for d in deps if canonical(re.split(r"[\s\[<>=!~;]", d, maxsplit=1)[0]) not in NOT_IN_LAYER]


def pins(constraints: Path) -> dict[str, str]:
    out = {}
    for line in constraints.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, _, version = line.partition("==")
            out[canonical(name)] = version.strip()
    return out


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args], check=True)  # noqa: S603


def resolve(requirements: list[str], constraints: Path, arch: str) -> dict[str, str]:
    """The exact ``name==version`` of each distribution to install, with the URL (and sha256) of
    the file pip chose for it, or exit when something is not pinned."""
    platform = [PLATFORMS[arch] if a == "" else a for a in PIP_TARGET]
    with tempfile.TemporaryDirectory(prefix="mnemo-layer-") as tmp:
        report = Path(tmp, "report.json")
        pip("install", "--dry-run", "--ignore-installed", "--report", str(report), "--target", str(Path(tmp, "t")),
            *platform, "-c", str(constraints), *requirements)  # fmt: skip
        resolved = json.loads(report.read_text())["install"]
    pinned = pins(constraints)
    versions = [(item["metadata"]["name"], item["metadata"]["version"]) for item in resolved]
    floating = [f"{name}=={version}" for name, version in versions if pinned.get(canonical(name)) != version]
    if floating:
        sys.exit(f"not pinned by {constraints.name}: {', '.join(sorted(floating))}")
    return {
        f"{item['metadata']['name']}=={item['metadata']['version']}": file_url(item["download_info"])
        for item in sorted(resolved, key=lambda item: canonical(item["metadata"]["name"]))
        if canonical(item["metadata"]["name"]) not in NOT_IN_LAYER
    }


def file_url(download_info: dict[str, Any]) -> str:
    """The file's URL with its sha256 as a fragment, which pip checks on download."""
    digest = download_info.get("archive_info", {}).get("hashes", {}).get("sha256")
    return f"{download_info['url']}#sha256={digest}" if digest else str(download_info["url"])


#: the default embedder's files inside the package (made by scripts/embedder_data.py, not in git)
EMBEDDER_DATA = Path("embedding", "data")
EMBEDDER_FILES = ("l2_supercat_256.i8", "tokenizer.json", "merges.u16")


def embedder_data(into: Path) -> None:
    """The embedder's files in the layer: copied from the checkout, made there first when a clone
    never ran ``make install`` (a layer without them would store every memory without its vector)."""
    source = ROOT / "shared" / "mnemo" / EMBEDDER_DATA
    if not all((source / name).is_file() for name in EMBEDDER_FILES):
        subprocess.run([sys.executable, str(ROOT / "scripts" / "embedder_data.py")], check=True)  # noqa: S603
    into.mkdir(parents=True, exist_ok=True)
    for name in EMBEDDER_FILES:
        shutil.copyfile(source / name, into / name)


def build(target: Path, arch: str, packages: list[Path], requirements: list[str], constraints: Path) -> None:
    if sys.version_info[:2] != (3, 11):
        sys.exit(f"build the layer with CPython 3.11 (the runtime's bytecode), not {sys.version.split()[0]}")
    locked = resolve(requirements, constraints, arch)
    target.mkdir(parents=True, exist_ok=True)
    platform = [PLATFORMS[arch] if a == "" else a for a in PIP_TARGET]
    with tempfile.TemporaryDirectory(prefix="mnemo-wheels-") as wheels:
        pip("download", "--no-deps", "--dest", wheels, *platform, *locked.values())
        pip("install", "--no-deps", "--no-compile", "--no-index", "--find-links", wheels, "--target", str(target),
            *platform, *locked)  # fmt: skip
    shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts: nothing runs them in Lambda
    for package in packages:
        # the local transformer's vocabulary (minilm_*) stays out: it needs onnxruntime, which the layer has not
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "minilm_*")
        shutil.copytree(package, target / package.name, ignore=ignore)
        if package.name == "mnemo":
            embedder_data(target / "mnemo" / EMBEDDER_DATA)
    compile_env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(  # noqa: S603 - our own interpreter, our arguments
        [sys.executable, "-m", "compileall", "-q", "-j0", "-d", LAYER_MOUNT,
         "--invalidation-mode", "unchecked-hash", str(target)],
        check=True,
        env=compile_env,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="the layer's python/ directory (created)")
    parser.add_argument("--arch", choices=sorted(PLATFORMS), default=os.environ.get("LAYER_ARCH", "arm64"))
    parser.add_argument("--package", type=Path, action="append", default=[], help="a package directory to copy in")
    parser.add_argument(
        "--requirement", action="append", help="instead of pyproject.toml's dependencies (must be pinned)"
    )
    parser.add_argument("--constraints", type=Path, default=ROOT / "constraints.txt")
    args = parser.parse_args(argv)
    requirements = args.requirement or project_requirements(ROOT / "pyproject.toml")
    build(args.target, args.arch, args.package, requirements, args.constraints)


if __name__ == "__main__":
    main()
