"""The ``mnemo`` administration commands as an operator runs them: ``python -m mnemo.local.cli``
in a subprocess on a SQLite store in a temporary folder (MNEMO_DATA_DIR)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from mnemo.backends.sqlite import SqliteBackend
from mnemo.embedding import default_embedder
from mnemo.service.pipeline import Service

pytestmark = [pytest.mark.slow]


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> dict:
        return json.loads(self.out)


def mnemo(data_dir: Path, *args: str, stdin: str | None = None, env_extra: dict[str, str] | None = None) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env["MNEMO_DATA_DIR"] = str(data_dir)
    env.update(env_extra or {})
    done = subprocess.run(
        [sys.executable, "-m", "mnemo.local.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


def test_an_operator_sets_up_a_workspace_keys_and_limits(store):
    created = mnemo(store, "--json", "workspace", "create", "acme", "--admin-key")
    assert created.code == 0, created.err
    workspace_id = created.json()["workspace"]["id"]
    admin_secret = created.json()["admin_key"]["secret"]

    project = mnemo(store, "project", "create", "docs", "--name", "Docs", "--json")
    assert project.code == 0 and project.json()["project"]["slug"] == "docs"

    key = mnemo(store, "key", "create", "--label", "ci", "--scope", "memory:read,memory:write", "--project", "docs")
    assert key.code == 0, key.err
    secret = key.out.strip()
    assert secret.startswith("mnemo_") and "\n" not in secret  # stdout holds the key alone
    assert "shown once" in key.err

    listed = mnemo(store, "key", "list", "--json", "--workspace", workspace_id)
    assert listed.code == 0
    assert secret not in listed.out and admin_secret not in listed.out
    assert "secret_hash" not in listed.out and "salt" not in listed.out
    ci = next(k for k in listed.json()["keys"] if k["label"] == "ci")
    assert (ci["scopes"], ci["default_project_id"], ci["revoked"]) == (
        ["memory:read", "memory:write"],
        project.json()["project"]["id"],
        False,
    )

    lowered = mnemo(store, "limits", "set", "--search", "5", "--json")
    assert (lowered.code, lowered.json()["search"], lowered.json()["write"]) == (0, 5, 60)
    assert mnemo(store, "--json", "limits", "show").json() == {
        "workspace_id": workspace_id,
        "search": 5,
        "write": 60,
        "custom": True,
    }

    revoked = mnemo(store, "key", "revoke", ci["id"])
    assert revoked.code == 0 and revoked.out.strip() == ci["id"]
    backend = SqliteBackend(store / "mnemo.db")
    try:
        assert backend.tenants.get_key(ci["id"]).revoked
    finally:
        backend.close()


def test_an_operator_turns_the_secret_check_off_and_on(store):
    from mnemo.errors import SecretDetected

    created = mnemo(store, "--json", "workspace", "create", "acme", "--admin-key")
    assert created.code == 0, created.err
    workspace_id, admin_secret = created.json()["workspace"]["id"], created.json()["admin_key"]["secret"]
    note = "the bucket is reached with " + "AKIA" + "Z7QW3RTY5UIOPASD"  # built from parts: no key in the repository

    shown = mnemo(store, "privacy", "show")
    assert shown.code == 0 and shown.out.startswith("secret check on"), shown.err
    off = mnemo(store, "--json", "privacy", "set", "--secret-check", "off")
    assert (off.code, off.json()) == (0, {"workspace_id": workspace_id, "secret_check": False})
    assert mnemo(store, "--json", "workspace", "list").json()["workspaces"][0]["secret_check"] is False

    backend = SqliteBackend(store / "mnemo.db")
    try:
        svc = Service(backend, embedder=None)
        caller = svc.authenticate(f"Bearer {admin_secret}")
        assert svc.invoke("memory_add", caller, {"content": note}).result.memory.content == note

        assert mnemo(store, "privacy", "set", "--secret-check", "on", "-w", workspace_id).code == 0
        with pytest.raises(SecretDetected):
            svc.invoke("memory_add", caller, {"content": note + " again"})
    finally:
        backend.close()
    wrong = mnemo(store, "privacy", "set", "--secret-check", "maybe")
    assert wrong.code == 2 and "invalid choice" in wrong.err
    assert mnemo(store, "--json", "privacy", "show").json()["secret_check"] is True


def test_export_then_import_round_trips_through_a_file(store, tmp_path):
    assert mnemo(store, "workspace", "create", "acme").code == 0
    assert mnemo(store, "project", "create", "copy").code == 0
    backend = SqliteBackend(store / "mnemo.db")
    try:
        svc = Service(backend, embedder=default_embedder())
        workspace_id = backend.tenants.list_workspaces()[0].id
        from mnemo.service import tenancy

        caller = svc.authenticate(
            f"Bearer {tenancy.create_key(backend, workspace_id, label='t', scopes=['admin']).plain}"
        )
        added = [
            svc.invoke("memory_add", caller, {"content": text, "tags": ["x"], "team_id": team}).result.memory
            for text, team in [("数据库延迟很高", None), ("red plan", "red"), ("plain note", None)]
        ]
        svc.invoke("memory_update", caller, {"id": added[2].id, "content": "plain note, edited"})
    finally:
        backend.close()
    dump = tmp_path / "default.jsonl"

    exported = mnemo(store, "export", "-o", str(dump))
    assert exported.code == 0, exported.err
    assert "Exported 3 memories" in exported.err
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == sorted(m.id for m in added)

    imported = mnemo(store, "import", "--project", "copy", "--json", stdin=dump.read_text())
    assert imported.code == 0, imported.err
    assert (imported.json()["imported"], imported.json()["skipped"]) == (3, [])

    again = mnemo(store, "import", "--project", "copy", "-i", str(dump))
    assert again.code == 1 and "already exist" in again.err and "--on-existing skip" in again.err
    skipped = mnemo(store, "import", "--project", "copy", "-i", str(dump), "--on-existing", "skip", "--json")
    assert skipped.code == 0 and len(skipped.json()["skipped"]) == 3

    copy = mnemo(store, "export", "--project", "copy")
    assert copy.code == 0

    def without_project(text):
        return [{k: v for k, v in json.loads(line).items() if k != "project_id"} for line in text.splitlines()]

    assert without_project(copy.out) == without_project(dump.read_text())


def test_import_refuses_another_workspaces_records_unless_forced(store, tmp_path):
    first = mnemo(store, "--json", "workspace", "create", "one").json()["workspace"]["id"]
    second = mnemo(store, "--json", "workspace", "create", "two").json()["workspace"]["id"]
    line = {
        "id": "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "workspace_id": first,
        "project_id": "prj_01ARZ3NDEKTSV4RRFFQ69G5FAW",
        "content": "moved note",
        "kind": None,
        "tags": [],
        "path": None,
        "team_id": None,
        "session": None,
        "source": "cli",
        "expires_at": None,
        "version": 4,
        "created_at": "2026-01-02T03:04:05.678Z",
        "updated_at": "2026-02-03T04:05:06.789Z",
    }
    text = json.dumps(line) + "\n"

    refused = mnemo(store, "import", "--workspace", second, stdin=text)
    assert refused.code == 1 and "--force-workspace" in refused.err

    forced = mnemo(store, "import", "--workspace", second, "--force-workspace", stdin=text)
    assert forced.code == 0, forced.err
    out = mnemo(store, "export", "--workspace", second).out
    assert {k: v for k, v in json.loads(out).items() if k not in ("workspace_id", "project_id")} == {
        k: v for k, v in line.items() if k not in ("workspace_id", "project_id")
    }


def test_exit_codes_for_usage_and_an_unusable_store(store, tmp_path):
    assert mnemo(store, "bogus").code == 2

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    broken = mnemo(blocker, "--json", "workspace", "list")
    assert broken.code == 3 and json.loads(broken.err)["code"] == "unavailable"
