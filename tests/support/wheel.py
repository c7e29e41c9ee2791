"""The ``mnemo`` wheel as a user builds it: ``pip wheel`` of a copy of the checkout's files as a
fresh clone has them, outside the checkout. Built once per session (``built_wheel`` in
tests/conftest.py) for the suites that check it: tests/package (installed into a fresh virtual
environment) and tests/e2e/test_console_wheel.py (unpacked, serving the console)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class BuiltWheel:
    source: Path  # the checkout's files, as a clone has them
    wheel: Path


def run(*args: str | Path, cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def clone_files(source: Path) -> Path:
    """The checkout's files as a fresh clone has them (tracked and new, nothing ignored: no .venv),
    and the embedder's files, which every clone's first ``make run`` / ``make install`` makes
    (scripts/embedder_data.py; not in git)."""
    listed = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    listed += "\0" + "\0".join(str(p.relative_to(ROOT)) for p in (ROOT / "shared/mnemo/embedding/data").iterdir())
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((ROOT / name).read_bytes())
    return source


def build_wheel(base: Path) -> BuiltWheel:
    """``pip wheel`` (build isolation, as a user's pip) of the clone's files copied under ``base``,
    a folder outside the checkout."""
    assert ROOT not in base.parents
    source = clone_files(base / "source")
    dist = base / "dist"
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", dist, source, cwd=base)
    (wheel,) = dist.glob("mnemo-*.whl")
    return BuiltWheel(source, wheel)
