"""``mnemo serve``'s first start, as a new user meets it: a real subprocess with the environment of a
fresh shell (no MNEMO_* or POWERTOOLS_* variables). Nothing is created before the port is bound
and the bootstrap key checked; every failure is one line and the exit code of docs/operations.md;
a key that was created is always printed; a store the user cannot get into says how to."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from mnemo.backends.sqlite import SqliteBackend

from tests.support.http import NO_KEY, Server, healthy, request
from tests.support.processes import default_sigint, stop
from tests.support.server import free_port

pytestmark = [pytest.mark.slow]

BANNER = "Mnemo listening on http://127.0.0.1:"
#: the AWS backend pointed at a port where nothing listens
NO_DYNAMODB = {
    "MNEMO_BACKEND": "aws",
    "MNEMO_AWS_REGION": "us-east-1",
    "MNEMO_DYNAMODB_ENDPOINT_URL": "http://127.0.0.1:1",
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
}
GOOD_KEY = "first-start-key-0123456789"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "POWERTOOLS_", "PYTHONWARNINGS"))}
    env.update(extra)
    return env


@dataclass
class Start:
    code: int | None  # None: still serving (stopped by the test)
    out: str
    err: str
    port: int

    @property
    def key(self) -> str:
        for line in self.out.splitlines():
            if line.startswith('  export MNEMO_KEY="'):
                return line.split('"')[1]
        raise AssertionError(f"no key printed:\n{self.out}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def serve(
    data_dir: Path,
    *args: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
    then=None,
) -> Start:
    """Run ``mnemo serve`` until it exits or answers /healthz; then ``then(url)``, then Ctrl-C."""
    port = port if port is not None else free_port()
    command = [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(data_dir), "serve", "--port", str(port)]
    process = subprocess.Popen(
        [*command, *args],
        env=env if env is not None else clean_env(),
        preexec_fn=default_sigint,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 180  # a deadline, not a speed check: a loaded 2-core box starts slowly
    while process.poll() is None and time.monotonic() < deadline:
        if healthy(f"http://127.0.0.1:{port}"):
            break
        time.sleep(0.05)
    if process.poll() is not None:
        out, err = process.communicate(timeout=10)
        return Start(process.returncode, out, err, port)
    try:
        if then is not None:
            then(f"http://127.0.0.1:{port}")
    finally:
        out, err = stop(process, signal.SIGINT)
    assert process.returncode == 0, err
    return Start(None, out, err, port)


def post(url: str, path: str, key: str, body: object) -> tuple[int, dict]:
    reply = request(Server(url, key), "POST", path, body)
    return reply.status, reply.body


def get(url: str, path: str, key: str | None = None) -> int:
    return request(Server(url, key or NO_KEY), "GET", path, content_type=None).status


def one_error_line(start: Start, code: int, *needles: str) -> str:
    assert start.code == code, (start.out, start.err)
    assert start.out == ""
    lines = start.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mnemo: error: "), start.err
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def workspaces(data_dir: Path) -> list:
    backend = SqliteBackend(data_dir / "mnemo.db")
    try:
        return backend.tenants.list_workspaces()
    finally:
        backend.close()


def test_a_clean_first_start_prints_the_banner_and_the_key_and_nothing_else(tmp_path):
    answers: dict[str, object] = {}

    def use(url: str) -> None:
        key = started_key[0]
        # routes whose handlers record no metric: Powertools used to warn on each of them
        answers["gets"] = [get(url, "/healthz"), get(url, "/openapi.json"), get(url, "/v1/admin/keys", key)]
        answers["add"] = post(url, "/v1/tools/memory_add", key, {"content": "first memory"})
        answers["search"] = post(url, "/v1/tools/memory_search", key, {"q": "first"})
        answers["mcp"] = post(url, "/mcp", key, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    # the key is read from stdout while the server runs, as a user reads it off the terminal
    started_key: list[str] = []
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(tmp_path / "data"), "serve", "--port", str(port)],
        env=clean_env(),
        preexec_fn=default_sigint,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(5)]
        started_key.append(lines[4].split('"')[1])
        use(f"http://127.0.0.1:{port}")
    finally:
        rest, err = stop(process, signal.SIGINT)

    assert process.returncode == 0
    assert lines[0].startswith(BANNER) and "(backend: sqlite, data: " in lines[0]
    assert (
        lines[1] == f"  REST http://127.0.0.1:{port}/v1/tools/<tool>   MCP http://127.0.0.1:{port}/mcp   Ctrl-C stops\n"
    )
    assert lines[2] == "Created the default workspace and project. Admin API key (shown once):\n"
    assert lines[3].strip() == started_key[0] and started_key[0].startswith("mnemo_")
    assert rest == "" and err == ""  # no warning, no note, no traceback
    status, added = answers["add"]  # type: ignore[misc]
    assert status == 200 and added["memory"]["id"].startswith("mem_")
    assert answers["search"][1]["memories"][0]["id"] == added["memory"]["id"]  # type: ignore[index]
    assert answers["gets"] == [200, 200, 200]
    status, listed = answers["mcp"]  # type: ignore[misc]
    assert status == 200 and "memory_add" in {tool["name"] for tool in listed["result"]["tools"]}


def test_a_port_in_use_is_one_line_and_creates_nothing(tmp_path):
    data = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        refused = serve(data, port=port)
        as_json = serve(data, "--json", port=port)

    one_error_line(refused, 1, f"127.0.0.1:{port}", "in use", "--port")
    assert "Traceback" not in refused.err
    assert not data.exists()  # not even the folder: nothing to lose
    assert as_json.code == 1 and json.loads(as_json.err)["code"] == "address_in_use"

    started = serve(data, port=port)  # the port is free again: the first start happens now
    assert started.code is None and started.key.startswith("mnemo_")


def test_a_short_bootstrap_key_is_refused_before_anything_exists(tmp_path):
    data = tmp_path / "data"

    refused = serve(data, env=clean_env(MNEMO_BOOTSTRAP_KEY="short"))

    one_error_line(refused, 1, "MNEMO_BOOTSTRAP_KEY", "at least 16", "unset it")
    assert not data.exists()
    statuses: list[int] = []
    started = serve(
        data,
        env=clean_env(MNEMO_BOOTSTRAP_KEY=GOOD_KEY),
        then=lambda url: statuses.append(post(url, "/v1/tools/memory_add", GOOD_KEY, {"content": "x"})[0]),
    )
    assert started.key == GOOD_KEY and statuses == [200]  # the key chosen is the key registered


def test_a_different_bootstrap_key_on_restart_says_so_and_how_to_get_a_key(tmp_path):
    data = tmp_path / "data"
    assert serve(data, env=clean_env(MNEMO_BOOTSTRAP_KEY=GOOD_KEY)).key == GOOD_KEY

    refused = serve(data, env=clean_env(MNEMO_BOOTSTRAP_KEY="another-key-0123456789"))
    line = one_error_line(refused, 1, "MNEMO_BOOTSTRAP_KEY is not a key of this store", "unset it")
    assert len(workspaces(data)) == 1  # nothing changed

    # the command it gives, run as printed, makes an admin key that works
    command = line.split("to create another admin key: ", 1)[1]
    made = subprocess.run(shlex.split(command), env=clean_env(), capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    statuses: list[int] = []
    again = serve(data, then=lambda url: statuses.append(get(url, "/v1/admin/keys", made.stdout.strip())))
    assert again.code is None and statuses == [200] and again.err == ""
    # the registered key still starts the server silently
    assert serve(data, env=clean_env(MNEMO_BOOTSTRAP_KEY=GOOD_KEY)).err == ""


def test_a_revoked_bootstrap_key_says_it_was_revoked(tmp_path):
    data = tmp_path / "data"
    serve(data, env=clean_env(MNEMO_BOOTSTRAP_KEY=GOOD_KEY))
    backend = SqliteBackend(data / "mnemo.db")
    (key,) = backend.tenants.list_keys(backend.tenants.list_workspaces()[0].id)
    assert backend.tenants.revoke_key(key.workspace_id, key.id)
    backend.close()

    refused = serve(data, env=clean_env(MNEMO_BOOTSTRAP_KEY=GOOD_KEY))

    one_error_line(refused, 1, "MNEMO_BOOTSTRAP_KEY was revoked", "key create -w ws_")


def test_a_store_without_a_usable_admin_key_says_how_to_create_one(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    made = subprocess.run(
        [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(data), "workspace", "create", "acme"],
        env=clean_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    workspace_id = made.stdout.strip()

    started = serve(data)

    assert started.code is None and "Created" not in started.out
    (note,) = started.err.splitlines()
    assert note.startswith("mnemo: note: no workspace") and "has an active admin key" in note
    command = note.split("to create one (printed once): ", 1)[1]
    assert f"key create -w {workspace_id} --label admin --scope admin" in command
    created = subprocess.run(shlex.split(command), env=clean_env(), capture_output=True, text=True, check=False)
    assert created.returncode == 0 and created.stdout.startswith("mnemo_"), created.stderr
    assert serve(data).err == ""  # now it has one: no note


def test_a_first_start_that_stopped_before_its_key_is_finished_by_the_next(tmp_path):
    # what a start killed between its two writes leaves: the default workspace and no key at all
    data = tmp_path / "data"
    data.mkdir()
    from mnemo.service import tenancy

    backend = SqliteBackend(data / "mnemo.db")
    tenancy.create_workspace(backend, tenancy.BOOTSTRAP_WORKSPACE)
    backend.close()

    started = serve(data)

    assert started.key.startswith("mnemo_") and len(workspaces(data)) == 1
    statuses: list[int] = []
    check = serve(data, then=lambda url: statuses.append(get(url, "/v1/admin/keys", started.key)))
    assert check.err == "" and "Created" not in check.out and statuses == [200]


def test_two_first_starts_on_one_new_folder_make_one_workspace_and_one_key(tmp_path):
    # The race made deterministic: this test is the first process. It holds the first-start lock
    # while a real `mnemo serve` starts on the same new folder, bootstraps the store itself, then
    # lets go. The server must have waited, and must find the store bootstrapped: without the
    # lock it creates a second `default` workspace with a second admin key.
    import fcntl
    import threading

    from mnemo.local.startup import LOCK_NAME
    from mnemo.service import tenancy

    data = tmp_path / "data"
    data.mkdir()
    created: list[str] = []
    with open(data / LOCK_NAME, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result: list[Start] = []
        starting = threading.Thread(target=lambda: result.append(serve(data)))
        starting.start()
        time.sleep(2.0)  # the server is bound and waiting on the lock (its /healthz is not up yet)
        assert not result, "the server started without waiting for the first start in progress"
        backend = SqliteBackend(data / "mnemo.db")
        new = tenancy.bootstrap(backend)
        assert new is not None
        created.append(new.plain)
        backend.close()
        fcntl.flock(lock, fcntl.LOCK_UN)
    starting.join(timeout=90)
    (started,) = result
    assert started.code is None, started.err
    assert "Created" not in started.out and "export MNEMO_KEY" not in started.out, started.out
    (only,) = workspaces(data)
    backend = SqliteBackend(data / "mnemo.db")
    try:
        assert len(backend.tenants.list_keys(only.id)) == 1
    finally:
        backend.close()


@pytest.mark.parametrize(
    ("prepare", "env", "code", "needles"),
    [
        ("file", {}, 3, ("is a file, not a folder", "--data-dir")),
        ("under-a-file", {}, 3, ("cannot create the data folder", "--data-dir")),
        ("garbage-db", {}, 3, ("cannot open the SQLite store", "not a database")),
        (None, {"MNEMO_PORT": "eighty"}, 2, ("MNEMO_PORT must be a port number",)),
        (None, {"MNEMO_SEARCH_PER_MINUTE": "lots"}, 2, ("MNEMO_SEARCH_PER_MINUTE", "integer")),
        (None, {"MNEMO_BACKEND": "mysql"}, 2, ("MNEMO_BACKEND",)),
        (None, {**NO_DYNAMODB}, 3, ("cannot reach the AWS backend", "DynamoDB at http://127.0.0.1:1")),
        (None, {**NO_DYNAMODB, "MNEMO_AWS_CREATE_TABLES": "true"}, 3, ("cannot create the DynamoDB tables",)),
    ],
)
def test_every_startup_error_is_one_line_with_its_exit_code(tmp_path, prepare, env, code, needles):
    data = tmp_path / "data"
    if prepare == "file":
        data.write_text("not a folder")
    elif prepare == "under-a-file":
        (tmp_path / "blocker").write_text("")
        data = tmp_path / "blocker" / "data"
    elif prepare == "garbage-db":
        data.mkdir()
        (data / "mnemo.db").write_text("this is not a database, just text that is long enough to be read" * 100)
    port = free_port()
    args = [sys.executable, "-m", "mnemo.local.cli", "--data-dir", str(data), "serve"]
    if "MNEMO_PORT" not in env:
        args += ["--port", str(port)]
    done = subprocess.run(args, env=clean_env(**env), capture_output=True, text=True, timeout=60, check=False)

    one_error_line(Start(done.returncode, done.stdout, done.stderr, port), code, *needles)
