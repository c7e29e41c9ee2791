"""``mnemo`` installed as a package, with no clone: the wheel is built from this checkout, holds
exactly the layer's package, the handlers and the SQL schema (nothing from tests/, bench/ or
docs/), installs with its runtime dependencies alone into a fresh virtual environment outside the
checkout, and its ``mnemo`` serves, answers and administers from a folder that is not the repo.

The wheel is the session's (``built_wheel``, tests/support/wheel.py: built once, also unpacked by
tests/e2e/test_console_wheel.py). The build and the install go through pip as a user's would (the
runtime dependencies come from the pip cache or PyPI, pinned by constraints.txt as the Makefile
pins them); pipx and ``uv tool install`` do the same two steps into their own virtual environment.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mnemo.embedding import FALLBACK

from tests.support.http import NO_KEY, request
from tests.support.processes import default_sigint, stop
from tests.support.wheel import BuiltWheel

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def outside_env(**extra: str) -> dict[str, str]:
    """A user's shell: none of the tests' settings, no PYTHONPATH, no virtual environment."""
    drop = ("MNEMO_", "POWERTOOLS_", "PYTHON", "VIRTUAL_ENV", "PYTEST")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra)
    return env


@dataclass
class Installed:
    source: Path  # the checkout's files, as a clone has them
    wheel: Path
    venv: Path
    home: Path  # a folder outside the checkout, where the user runs mnemo

    @property
    def mnemo(self) -> Path:
        return self.venv / "bin" / "mnemo"


@pytest.fixture(scope="module")
def installed(built_wheel: BuiltWheel, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    assert ROOT not in base.parents
    venv = base / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=base)
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check", "--quiet", "install"]
    run(*pip, "-c", ROOT / "constraints.txt", built_wheel.wheel, cwd=base, env=outside_env())
    home = base / "home"
    home.mkdir()
    return Installed(built_wheel.source, built_wheel.wheel, venv, home)


def test_the_wheel_holds_the_package_the_handlers_and_the_schema_and_nothing_else(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    # what the clone has under shared/mnemo/ and functions/ (the Lambda layer and the handlers)
    layer = installed.source / "shared"
    sources = {p.relative_to(layer).as_posix() for p in (layer / "mnemo").rglob("*") if p.is_file()}
    sources |= {p.relative_to(installed.source).as_posix() for p in (installed.source / "functions").rglob("*.py")}
    code = {name for name in names if ".dist-info/" not in name}

    assert "mnemo/backends/sqlite/schema.sql" in code
    assert {f"functions/{role}/handler.py" for role in ("write", "read", "mcp", "admin", "cleanup", "indexer")} <= code
    assert code == sources  # every file of the layer's package and of the handlers, and nothing else
    entry_points = zipfile.ZipFile(installed.wheel).read(
        next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    )
    assert b"mnemo = mnemo.local.cli:main" in entry_points


def test_the_installed_packages_are_the_venvs_own_not_the_checkouts(installed):
    where = run(
        installed.venv / "bin" / "python",
        "-c",
        "import mnemo, functions.write.handler as w; print(mnemo.__file__); print(w.__file__)",
        cwd=installed.home,
        env=outside_env(),
    )
    for line in where.splitlines():
        assert Path(line).is_relative_to(installed.venv) and not Path(line).is_relative_to(ROOT), line
    # only the runtime dependencies: the test tooling of the dev extra is not there
    listed = run(installed.venv / "bin" / "python", "-m", "pip", "list", "--format=json", cwd=installed.home)
    packages = {re.sub(r"[-_.]+", "-", p["name"]).lower() for p in json.loads(listed)}
    assert {"aws-lambda-powertools", "pydantic", "boto3", "aws-xray-sdk"} <= packages
    # the local server never talks to OpenSearch: its client (and the grpcio it brings) is the `aws` extra's
    assert not packages & {"opensearch-py", "grpcio"}
    assert not packages & {"pytest", "moto", "hypothesis", "schemathesis", "mcp", "ruff", "mypy", "cfn-lint"}


@dataclass
class Serving:
    url: str
    key: str
    process: subprocess.Popen[str]


@pytest.fixture(scope="module")
def serving(installed: Installed) -> Iterator[Serving]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [str(installed.mnemo), "serve", "--port", str(port)],
        cwd=installed.home,
        env=outside_env(),
        preexec_fn=default_sigint,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    banner = [process.stdout.readline() for _ in range(5)]
    if not banner[4].startswith("  export MNEMO_KEY="):
        process.kill()
        raise AssertionError(f"mnemo serve did not start: {banner}\n{process.communicate()[1]}")
    assert banner[0].startswith(f"Mnemo listening on http://127.0.0.1:{port} (backend: sqlite, data: .mnemo/mnemo.db)")
    key = banner[4].split('"')[1]
    yield Serving(f"http://127.0.0.1:{port}", key, process)
    rest, err = stop(process, signal.SIGINT)
    # no warning, no traceback; only the one line saying the default embedder fell back to static:
    # the wheel installed without its `minilm` extra has no onnxruntime
    assert process.returncode == 0 and rest == "" and err == FALLBACK + "\n", (rest, err)


def call(serving: Serving, path: str, body: object, headers: dict[str, str] | None = None) -> dict:
    reply = request(serving, "POST", path, body, headers=headers, timeout=10)
    assert reply.status == 200, reply.raw
    answer: dict = reply.body
    return answer


def test_the_installed_mnemo_serves_rest_and_mcp_from_outside_the_checkout(installed, serving):
    assert request(serving, "GET", "/healthz", key=NO_KEY, content_type=None).body == {"status": "ok"}
    added = call(serving, "/v1/tools/memory_add", {"content": "installed from a wheel", "tags": ["pkg"]})
    found = call(serving, "/v1/tools/memory_search", {"q": "wheel"})
    assert [m["id"] for m in found["memories"]] == [added["memory"]["id"]]
    listed = call(
        serving,
        "/mcp",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert "memory_add" in {tool["name"] for tool in listed["result"]["tools"]}
    assert (installed.home / ".mnemo" / "mnemo.db").exists()  # the data went where the user stood


def test_the_installed_mnemo_administers_and_cleans_up_outside_the_checkout(installed, serving):
    mnemo = installed.mnemo
    env = outside_env()
    workspaces = json.loads(run(mnemo, "--json", "workspace", "list", cwd=installed.home, env=env))["workspaces"]
    assert [w["name"] for w in workspaces] == ["default"]
    secret = run(mnemo, "key", "create", "--label", "ci", "--scope", "memory:read", cwd=installed.home, env=env)
    assert call(Serving(serving.url, secret.strip(), serving.process), "/v1/tools/memory_search", {})["memories"]
    assert "ci" in run(mnemo, "key", "list", cwd=installed.home, env=env)
    exported = run(mnemo, "export", cwd=installed.home, env=env).splitlines()
    assert [json.loads(line)["content"] for line in exported] == ["installed from a wheel"]
    summary = json.loads(run(mnemo, "cleanup", cwd=installed.home, env=env).splitlines()[-1])
    assert summary["more"] is False and summary["index_unavailable"] is False
    missing = subprocess.run(
        [str(mnemo), "--data-dir", str(installed.home / "nowhere"), "key", "list"],
        cwd=installed.home,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    assert not (installed.home / "nowhere").exists()


def test_the_installed_mnemo_mcp_serves_the_tools_over_stdio_outside_the_checkout(installed, serving):
    """``mnemo mcp`` as a host starts it (the SDK's stdio client, its small default environment),
    on the folder the server uses: what it saves, the server finds."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import get_default_environment

    params = StdioServerParameters(
        command=str(installed.mnemo),
        args=["--data-dir", str(installed.home / ".mnemo"), "mcp"],
        env=get_default_environment(),
        cwd=str(installed.home),
    )

    async def session() -> tuple[list[str], dict]:
        async with Client(params, read_timeout_seconds=60) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            added = await client.call_tool("memory_add", {"content": "saved over stdio from the wheel"})
            return names, added.structured_content

    names, added = anyio.run(session)

    assert "memory_add" in names and added["memory"]["source"] == "mnemo-mcp"
    found = call(serving, "/v1/tools/memory_search", {"q": "stdio"})
    assert [m["id"] for m in found["memories"]] == [added["memory"]["id"]]
