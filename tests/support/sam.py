"""``sam build`` of the real template, and a runtime-like AWS SDK directory (stdlib only; used by
tests/built and bench/coldstart_built.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: where `make test` installs aws-sam-cli (its own venv: its pins conflict with constraints.txt)
LOCAL_SAM = ROOT / ".cache" / "sam-venv" / "bin" / "sam"


def find_sam() -> str | None:
    found = os.environ.get("MNEMO_SAM") or shutil.which("sam")
    if not found and LOCAL_SAM.exists():
        found = str(LOCAL_SAM)
    return found


class SamBuildError(RuntimeError):
    pass


def sam_build(sam: str, out: Path, arch: str, *resources: str) -> Path:
    """``sam build`` of template.yaml for ``arch`` into ``out`` (a fresh directory: SAM wipes it).

    cwd is ``out``'s parent, an empty temp directory (SAM reads samconfig.toml and writes .aws-sam/
    there); SAM's own state goes there too; this interpreter's directory comes first on PATH, as
    SAM builds the functions with the ``python3.11`` it finds, and the layer's Makefile runs
    ``$PYTHON``. ``--no-cached``: a cached layer would not see a change to constraints.txt.
    """
    work = out.parent
    env = {
        **os.environ,
        "SAM_CLI_TELEMETRY": "0",
        "__SAM_CLI_APP_DIR": str(work / "sam-app"),
        "LAYER_ARCH": arch,
        "PYTHON": sys.executable,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    cmd = [sam, "build", *resources, "--template-file", str(ROOT / "template.yaml"), "--build-dir", str(out)]
    cmd += ["--parameter-overrides", f"Architecture={arch}", "--no-cached"]
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        raise SamBuildError(f"sam build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    return out


def pinned(*names: str) -> list[str]:
    """``name==version`` of each name, as constraints.txt pins it."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        pins[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return [f"{n}=={pins[n]}" for n in names]


def install_sdk(target: Path, *requirements: str, constraints: bool = True) -> Path:
    """An SDK directory like the python3.11 runtime's /var/lang/lib/python3.11/site-packages."""
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target", str(target)]
    if constraints:
        cmd += ["-c", str(ROOT / "constraints.txt")]
    subprocess.run([*cmd, *requirements], check=True, timeout=600, capture_output=True)
    return target


def runtime_sdk(target: Path) -> Path:
    """boto3, botocore and s3transfer at constraints.txt's versions, with their dependencies."""
    return install_sdk(target, *pinned("boto3", "botocore", "s3transfer"))
