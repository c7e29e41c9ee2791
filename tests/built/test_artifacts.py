"""What ``sam build`` puts in the layer and the functions (docs/aws.md, "What the layer holds")."""

from __future__ import annotations

import importlib.util
import marshal
import re
import struct
from pathlib import Path

import pytest

from tests.built.conftest import ROOT, Builds

pytestmark = [pytest.mark.slow]

#: the budget for the layer, unzipped (Lambda's limit is 250 MB for a function and its layers): 59 MB
#: measured, 16 MB of it cryptography, which PyJWT needs to check an issuer's RS256/ES256 signature
#: (docs/auth.md) and which loads only when OAuth is configured, 2.8 MB the zone database (tzdata)
LAYER_BUDGET = 60 * 1024 * 1024
#: ELF e_machine values
EM_X86_64, EM_AARCH64 = 62, 183


def layer(build: Path) -> Path:
    return build / "SharedLayer" / "python"


def dists(site: Path) -> dict[str, str]:
    """The installed distributions: canonical name → version."""
    out = {}
    for info in site.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        out[re.sub(r"[-_.]+", "-", name).lower()] = version
    return out


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        out[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return out


def machines(site: Path) -> set[int]:
    return {struct.unpack("<H", so.read_bytes()[18:20])[0] for so in site.rglob("*.so")}


def test_the_layer_holds_every_runtime_dependency_pinned_and_nothing_lambda_does_not_need(built: Path):
    site = layer(built)
    top = {p.name for p in site.iterdir()}
    installed = dists(site)

    assert {"mnemo", "aws_lambda_powertools", "aws_xray_sdk", "pydantic", "pydantic_core", "opensearchpy"} <= top
    assert "tzdata" in top  # zoneinfo's fallback: `tz` must not depend on the runtime image's files
    assert "urllib3" in top
    # the runtime's SDK, opensearch-py's unused gRPC stack, dev tools, console scripts: none of them
    assert not top & {"boto3", "botocore", "s3transfer", "grpc", "google", "opensearch_protobufs", "yaml", "bin"}
    assert not set(installed) & {"pytest", "moto", "hypothesis", "ruff", "mypy", "cfn-lint", "pyyaml", "mcp"}
    pinned = pins()
    assert {name: version for name, version in installed.items() if pinned.get(name) != version} == {}


def test_the_layer_fits_its_budget(built: Path):
    size = sum(f.stat().st_size for f in layer(built).rglob("*") if f.is_file())

    assert size <= LAYER_BUDGET, f"the layer is {size / 2**20:.1f} MiB unzipped"


def test_every_module_of_the_layer_is_precompiled_for_a_read_only_rezipped_directory(built: Path):
    """Unchecked-hash pycs: valid whatever mtime the zip gives the sources (sam package uses 1980),
    compiled by CPython 3.11 (the runtime's magic number), with /opt/python file names."""
    site = layer(built)
    magic = importlib.util.MAGIC_NUMBER
    sources = list(site.rglob("*.py"))
    assert len(sources) > 500

    for py in sources:
        pyc = Path(importlib.util.cache_from_source(str(py)))
        assert pyc.exists(), py
        data = pyc.read_bytes()
        assert data[:4] == magic, pyc
        assert struct.unpack("<I", data[4:8])[0] == 0b01, f"{pyc} is not an unchecked-hash pyc"
    code = marshal.loads(Path(importlib.util.cache_from_source(str(site / "mnemo" / "runtime.py"))).read_bytes()[16:])
    assert code.co_filename == "/opt/python/mnemo/runtime.py"


def test_the_layer_carries_the_current_mnemo_package(built: Path):
    source = ROOT / "shared" / "mnemo"
    shipped = layer(built) / "mnemo"

    # all of it but what scripts/build_layer.py leaves out: the local transformer's vocabulary (minilm_*,
    # fetched by make install; the layer has no onnxruntime to run it)
    files = {
        p.relative_to(source)
        for p in source.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith("minilm_")
    }
    assert {p.relative_to(shipped) for p in shipped.rglob("*") if p.is_file() and "__pycache__" not in p.parts} == files
    assert all((shipped / f).read_bytes() == (source / f).read_bytes() for f in files)


def test_each_function_is_its_handler_only(built: Path):
    for role in ("write", "read", "mcp", "admin", "indexer", "cleanup"):
        function = built / f"{role.capitalize()}Function"
        assert (function / "handler.py").read_bytes() == (ROOT / "functions" / role / "handler.py").read_bytes()
        assert {p.name for p in function.iterdir()} <= {"handler.py", "__init__.py"}


def test_the_x86_64_build_has_x86_64_binaries(built: Path):
    assert machines(layer(built)) == {EM_X86_64}


@pytest.fixture(scope="module")
def arm64_layer(builds: Builds) -> Path:
    """The deployed architecture's layer (template default): built (beside the x86_64 build, from
    the session's start), not importable here."""
    return layer(builds.get("arm64_layer"))


def test_the_arm64_layer_has_the_same_distributions_with_aarch64_binaries(built: Path, arm64_layer: Path):
    assert dists(arm64_layer) == dists(layer(built))
    assert machines(arm64_layer) == {EM_AARCH64}
    size = sum(f.stat().st_size for f in arm64_layer.rglob("*") if f.is_file())
    assert size <= LAYER_BUDGET, f"the arm64 layer is {size / 2**20:.1f} MiB unzipped"
