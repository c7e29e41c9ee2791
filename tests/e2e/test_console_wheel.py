"""The console ships inside the built package: a wheel built from a copy of the sources (the
session's ``built_wheel``, tests/support/wheel.py, which tests/package installs too), unpacked on
its own, serves every console file from ``mnemo serve`` byte for byte."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.http import NO_KEY, send
from tests.support.server import start_server, stop_server
from tests.support.wheel import BuiltWheel

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "shared" / "mnemo" / "api" / "console"


def test_a_built_wheel_serves_the_console(built_wheel: BuiltWheel, tmp_path: Path) -> None:
    wheel = built_wheel.wheel
    installed = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(installed)
    files = sorted(p.name for p in CONSOLE.iterdir() if p.is_file())
    assert {f"mnemo/api/console/{name}" for name in files} <= names

    # the unpacked wheel first on the path: the console comes from it, not from this checkout
    server = start_server(tmp_path / "data", env_extra={"PYTHONPATH": str(installed)})
    try:
        where = subprocess.run(
            [sys.executable, "-c", "import mnemo.api.routers.console as c; print(c.__file__)"],
            env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert where.startswith(str(installed)), where
        for name in files:
            path = "/console" + ("" if name == "index.html" else f"/{name}")
            reply = send(server, path, None, method="GET", key=NO_KEY, content_type=None, timeout=10)
            assert reply.status == 200
            assert reply.headers["Content-Security-Policy"].startswith("default-src 'none'")
            assert reply.raw == (CONSOLE / name).read_bytes(), name
    finally:
        stop_server(server)
