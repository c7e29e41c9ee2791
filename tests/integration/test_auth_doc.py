"""docs/auth.md is executable documentation too: its shell blocks run here as written, command by
command in one bash session (tests/support/doc_runner.py), against a real ``mnemo serve`` (and the
session's real Keycloak); each ``# → …`` line under a command states its answer, and every quoted
key and value in it must be in the command's JSON output.
The blocks are those of "Keycloak (self-hosted), step by step" and of "Principals: who a token is,
and where it may act" (the latter needs no Keycloak: binding only names an issuer).

What a user changes while pasting, and only that, is filled in:

* ``https://sso.example.com/realms/acme`` → the Keycloak node's issuer (its realm is
  tests/fixtures/keycloak/realm.json, which has the ``mnemo-gateway`` client of the block);
* ``https://mnemo.example.com`` → the URL of the ``mnemo serve`` started for the test;
* ``client_secret=…`` → that client's secret;
* ``5b1e…-user-uuid`` → a user id, ``prn_…`` → the first id ``mnemo principal list`` printed.

What the test adds: a running ``mnemo serve`` and its project ``notes`` for the principals block,
and, for the Keycloak block, ``mnemo serve`` is started after the block's ``export`` lines, with
the environment they made (as a user starts it in that shell), plus ``MNEMO_OAUTH_AUDIENCES`` = the
audience the test realm's mapper stamps (``http://mnemo.test``; a realm whose mapper names Mnemo's
URL, as step 2 says, needs none).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.doc_runner import Session, blocks, commands, pairs, unmet
from tests.support.keycloak import GATEWAY_SECRET, KeycloakNode
from tests.support.server import RunningServer, free_port, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
AUTH = (ROOT / "docs" / "auth.md").read_text(encoding="utf-8")
KEYCLOAK = "Keycloak (self-hosted), step by step"
PRINCIPALS = "Principals: who a token is, and where it may act"


def filled(text: str, keycloak: KeycloakNode, url: str) -> str:
    text = text.replace("https://sso.example.com/realms/acme", keycloak.issuer)
    text = text.replace("https://mnemo.example.com", url)
    return text.replace("client_secret=…", f"client_secret={GATEWAY_SECRET}")


def user_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A new shell's: no MNEMO_* settings but a data folder of its own, the tests' .venv/bin first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "POWERTOOLS_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.prefix) / "bin"), env.get("PATH", "")])
    env["MNEMO_DATA_DIR"] = str(tmp_path / "data")
    return {**env, **extra}


@pytest.fixture
def session(tmp_path: Path, keycloak_node: KeycloakNode) -> Iterator[Session]:
    running = Session(tmp_path, user_env(tmp_path, MNEMO_OAUTH_AUDIENCES=keycloak_node.resource), tmp_path / "steps")
    yield running
    running.close()


@pytest.mark.keycloak
def test_the_keycloak_steps_run_as_written(session: Session, keycloak_node: KeycloakNode, tmp_path: Path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server: RunningServer | None = None
    checked = 0
    try:
        for block in blocks(AUTH, KEYCLOAK):
            for command in commands(block):
                text = filled(command.text, keycloak_node, url)
                assert "…" not in text, f"a placeholder is left: {text}"
                if server is None and not text.startswith("export "):
                    exported = session.run("env").out.splitlines()
                    env = dict(line.split("=", 1) for line in exported if line.startswith("MNEMO_"))
                    server = start_server(Path(env.pop("MNEMO_DATA_DIR")), env, port=port)
                step = session.run(text)
                assert step.code == 0, f"{step.command}\nexit {step.code}\n{step.out}\n{step.err}"
                for stated in command.states:
                    stated = filled(stated, keycloak_node, url)
                    assert not unmet(stated, json.loads(step.out)), (step.command, stated, step.out)
                    checked += len(pairs(stated))
    finally:
        if server is not None:
            stop_server(server)

    assert server is not None and checked >= 4  # the block started a server and stated answers


def test_the_principal_commands_run_as_written(tmp_path: Path):
    issuers = {
        "MNEMO_OAUTH_ISSUERS": "https://sso.example.com/realms/acme",
        "MNEMO_OAUTH_RESOURCE": "http://mnemo.test",
    }
    env = user_env(tmp_path, **issuers)
    server = start_server(Path(env["MNEMO_DATA_DIR"]), issuers)  # the deployment being administered
    shell = Session(tmp_path, env, tmp_path / "steps")
    try:
        assert shell.run("mnemo project create notes").code == 0
        listed = ""
        for block in blocks(AUTH, PRINCIPALS):
            for command in commands(block):
                text = command.text.replace("5b1e…-user-uuid", "5b1e2c4d-0000-4000-8000-00000000a11c")
                if "prn_…" in text:
                    text = text.replace("prn_…", re.findall(r"^(prn_\w+)\s", listed, re.M)[0])
                assert "…" not in text, f"a placeholder is left: {text}"
                step = shell.run(text)
                assert step.code == 0, f"{step.command}\nexit {step.code}\n{step.out}\n{step.err}"
                if text.startswith("mnemo principal list"):
                    listed = step.out
        after = json.loads(shell.run("mnemo --json principal list").out)["principals"]
    finally:
        shell.close()
        stop_server(server)

    bound = re.findall(r"^(prn_\w+)\s+(\w+)\s+(\S+)", listed, re.M)
    assert sorted((kind, value) for _, kind, value in bound) == [
        ("client", "mnemo-gateway"),
        ("group", "mnemo-readers"),
        ("sub", "5b1e2c4d-0000-4000-8000-00000000a11c"),
    ]
    assert sorted(p["id"] for p in after) == sorted(pid for pid, _, _ in bound[1:])  # the first was removed
