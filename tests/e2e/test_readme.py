"""The README is executable documentation: its curl tour and its Administration block run here as
written, pasted command by command into one bash session (as a user does) in a folder like a
fresh clone's, against the server `make run` starts there; then every answer is checked.

What a user changes while pasting, and only that, is filled in:

* ``127.0.0.1:8787`` → the free port the server was given (MNEMO_PORT), so a server already on
  8787 cannot answer instead;
* ``...`` in ``export MNEMO_KEY=...`` → the admin key ``make run`` printed;
* ``ws_…`` → the workspace id ``mnemo workspace create`` printed;
* ``mem_…`` → the id the first ``memory_add`` answered;
* ``key_…`` → ci-bot's id, from the ``key list`` output.

Any other placeholder fails the test, as does a ``mnemo`` that is not ``.venv/bin/mnemo`` (no
``mnemo`` is on PATH here, as in a fresh clone). A ``# → …`` line under a command states its
answer: every quoted key and value in it must be in the command's JSON output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import free_port
from tests.e2e.readme_runner import Session, Step, blocks, commands

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ID = r"[0-9A-Z]{26}"


def run_recipe() -> str:
    """The command `make run` runs, from the Makefile (``$(BIN)`` is ``.venv/bin``)."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^run:.*\n\t(.+)$", makefile, re.M)
    assert recipe, "no run: target in the Makefile"
    return recipe.group(1).replace("$(BIN)", ".venv/bin").replace("$(VENV)", ".venv")


def user_env(**extra: str) -> dict[str, str]:
    """A new shell's environment: no MNEMO_*/POWERTOOLS_* settings, and no `mnemo` on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "POWERTOOLS_", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(
        d for d in env.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "mnemo").exists()
    )
    env.update(extra)
    return env


class Server:
    def __init__(self, cwd: Path, port: int) -> None:
        self.port = port
        self.log = cwd.parent / "make-run.log"
        with self.log.open("w") as sink:
            self.process = subprocess.Popen(
                ["bash", "-c", run_recipe()],
                cwd=cwd,
                env=user_env(MNEMO_PORT=str(port)),
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while not re.search(r'export MNEMO_KEY="', self.log.read_text()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the server did not print its key:\n{self.log.read_text()}")
            time.sleep(0.05)
        self.key = re.search(r'export MNEMO_KEY="([^"]+)"', self.log.read_text()).group(1)  # type: ignore[union-attr]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as reply:
            assert reply.status == 200

    def stop(self) -> str:
        if self.process.poll() is not None:
            return self.log.read_text()
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        return self.log.read_text()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A folder like a fresh clone after `make run` installed: the tests' .venv, nothing else."""
    venv = Path(sys.prefix)
    assert (venv / "bin" / "mnemo").exists(), f"{venv} has no bin/mnemo: run the tests from the project's .venv"
    folder = tmp_path / "mnemo"
    folder.mkdir()
    (folder / ".venv").symlink_to(venv, target_is_directory=True)
    return folder


@pytest.fixture
def server(clone: Path) -> Iterator[Server]:
    running = Server(clone, free_port())
    yield running
    running.stop()


def split_comment(line: str) -> tuple[str, str]:
    """A line's code and its trailing comment (`` #`` starts one in these blocks)."""
    if line.lstrip().startswith("#"):
        return "", line
    code, sep, comment = line.partition(" #")
    return code, sep + comment


def fill(command: str, steps: list[Step], server: Server) -> str:
    """The placeholders a user fills in while pasting (the module's docstring lists them), in the
    code only: comments are kept as written."""

    def printed(pattern: str, where: Callable[[Step], bool]) -> str:
        for step in reversed(steps):
            if where(step):
                found = re.search(pattern, step.out + step.err, re.M)
                if found:
                    return found.group(1)
        raise AssertionError(f"nothing printed {pattern!r} before: {command}")

    lines = []
    for line in command.splitlines():
        code, comment = split_comment(line)
        code = code.replace("127.0.0.1:8787", f"127.0.0.1:{server.port}")
        code = re.sub(r"(export MNEMO_KEY=)\.\.\.(?=\s|$)", rf"\g<1>{server.key}", code)
        if "ws_…" in code:
            code = code.replace("ws_…", printed(rf"\((ws_{ID})\)", lambda s: "workspace create" in s.command))
        if "mem_…" in code:
            first_add = next(s for s in steps if "/memory_add" in s.command)
            code = code.replace("mem_…", json.loads(first_add.out)["memory"]["id"])
        if "key_…" in code:
            where = printed(r"^(key_\w+)\s+ci-bot\s", lambda s: s.command.split(" #")[0].strip().endswith("key list"))
            code = code.replace("key_…", where)
        assert "…" not in code and not re.search(r"(?<![.\w])\.\.\.(?![.\w])", code), f"a placeholder is left: {line}"
        lines.append(code + comment)
    return "\n".join(lines)


def pairs(stated: str) -> list[tuple[str, str]]:
    """The quoted keys with literal values in a ``# → …`` line (``"slug": "default"``, ``"version": 1``)."""
    return re.findall(r'"(\w+)":\s*("(?:[^"\\]|\\.)*"|-?\d+|true|false|null)', stated)


def flatten(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k, v
            yield from flatten(v)
    elif isinstance(value, list):
        for item in value:
            yield from flatten(item)


def holds(stated: str, answer: Any) -> list[str]:
    """What the stated answer says that the real one does not (a value with … is a prefix)."""
    found = list(flatten(answer))
    missing = []
    for key, literal in pairs(stated):
        value = json.loads(literal)
        ok = any(
            k == key
            and (v == value or (isinstance(value, str) and "…" in value and str(v).startswith(value.split("…")[0])))
            for k, v in found
        )
        if not ok:
            missing.append(f"{key}: {literal}")
    keys = set(re.findall(r'"(\w+)":', stated))
    missing += [f"key {k}" for k in keys if all(k != name for name, _ in found)]
    return missing


def run_section(session: Session, heading: str, server: Server) -> list[tuple[Step, list[str]]]:
    ran = []
    for block in blocks(README, heading):
        for command in commands(block):
            step = session.run(fill(command.text, session.steps, server))
            assert step.code == 0, f"{step.command}\nexit {step.code}\n{step.out}\n{step.err}"
            assert "Traceback" not in step.err and "command not found" not in step.err, step.err
            for stated in command.states:
                answer = json.loads(step.out)
                assert not holds(stated, answer), (step.command, stated, holds(stated, answer), step.out)
            ran.append((step, command.states))
    return ran


def answer_of(ran: list[tuple[Step, list[str]]], needle: str, nth: int = 0) -> Any:
    matching = [step for step, _ in ran if needle in step.command]
    return json.loads(matching[nth].out)


def test_the_readme_tour_and_administration_run_as_written(clone: Path, server: Server, tmp_path: Path):
    session = Session(clone, user_env(), tmp_path / "steps")
    try:
        tour = run_section(session, "A quick tour with curl", server)
        admin = run_section(session, "Administration", server)
        # not in the README: ci-bot's key, still in $KEY, is refused from its next call
        after = session.run(
            f'curl -s -o /dev/null -w "%{{http_code}}" -H "Authorization: Bearer $KEY" '
            f"http://127.0.0.1:{server.port}/v1/tools/memory_search -d '{{}}'"
        )
    finally:
        session.close()
    log = server.stop()

    # the tour: each answer is what the README says it is
    first = answer_of(tour, "/memory_add")
    assert first["project"]["slug"] == "default" and first["memory"]["kind"] == "insight"
    found = answer_of(tour, '"q": "reddit"')["memories"]
    assert [m["id"] for m in found] == [first["memory"]["id"]]
    cjk = answer_of(tour, "/memory_add", 1)["memory"]["id"]
    assert [m["id"] for m in answer_of(tour, '"q": "延迟"')["memories"]] == [cjk]
    assert {m["id"] for m in answer_of(tour, "-d '{}'")["memories"]} == {first["memory"]["id"], cjk}
    strict = answer_of(tour, "/search_memory")
    assert strict["matched"] is True and [m["reference"] for m in strict["results"]] == [first["memory"]["id"]]
    assert strict["results"][0]["explanation"]["matched_terms"] == ["reddit", "help"]
    recall = answer_of(tour, "/recall -d")
    assert [m["reference"] for m in recall["results"]] == [first["memory"]["id"], cjk], recall
    context = answer_of(tour, "/recall_context")
    assert context["references"] == [first["memory"]["id"], cjk] and context["used_tokens"] <= 200
    assert "Reddit" in context["context"] and "缓存" in context["context"], context
    forgot = answer_of(tour, "/forget")
    assert forgot["forgotten"]["reference"] == first["memory"]["id"], forgot
    error = answer_of(tour, '"limit": 0')
    assert error["code"] == "invalid_request" and error["details"][0]["loc"] == ["limit"]

    # the administration block: acme, its docs project, ci-bot's memory copied, ci-bot revoked
    steps = [step for step, _ in admin]
    created, _, _, key_create, added, key_list, limits, export, _, imported, revoked = steps
    assert "Exported 1 memories of project 'docs'" in export.err
    assert created.out.strip().startswith("mnemo_") and "Created workspace 'acme' (ws_" in created.err
    assert "Created key key_" in key_create.err and key_create.out == ""  # the key went into $KEY
    memory = json.loads(added.out)
    assert memory["project"]["slug"] == "docs" and memory["memory"]["source"] == "ci-bot"
    assert re.search(r"^key_\w+\s+admin\s+admin\s", key_list.out, re.M)
    assert re.search(r"^key_\w+\s+ci-bot\s+memory:read,memory:write\s+prj_\w+\s+active$", key_list.out, re.M)
    assert "mnemo_" not in key_list.out  # never a secret
    assert limits.out.strip() == "search 600/min  write 120/min  (this workspace's own)"
    exported = [json.loads(line) for line in (clone / "docs.jsonl").read_text().splitlines()]
    assert [r["id"] for r in exported] == [memory["memory"]["id"]]
    assert imported.out.strip().startswith("Imported 1 memories into project 'docs-copy'")
    assert revoked.err.startswith("Revoked key_") and "'ci-bot'" in revoked.err
    assert after.out == "401"
    assert "Traceback" not in log and "Warning" not in log, log


def test_docs_mcp_curl_block_runs_as_written(clone: Path, server: Server, tmp_path: Path):
    mcp = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    session = Session(clone, user_env(), tmp_path / "steps")
    try:
        for heading in ("Mnemo over MCP", "By hand with curl"):
            for command in commands(blocks(mcp, heading)[0]):
                step = session.run(fill(command.text, session.steps, server))
                assert step.code == 0, (step.command, step.err)
    finally:
        session.close()
    initialize, call = (json.loads(step.out) for step in session.steps[-2:])
    assert initialize["result"]["protocolVersion"] == "2025-11-25"
    assert initialize["result"]["serverInfo"]["name"]
    assert call["result"]["isError"] is False and "structuredContent" in call["result"]


def test_the_readme_placeholders_are_all_known():
    """Every placeholder in a run block is one the test fills in (a new one must be taught here)."""
    known = {"ws_…", "mem_…", "key_…", "prj_…"}
    for heading in ("A quick tour with curl", "Administration"):
        for block in blocks(README, heading):
            for command in commands(block):
                code = "\n".join(split_comment(line)[0] for line in command.text.splitlines())
                assert set(re.findall(r"\w+_…", code)) <= known, command.text
    assert shutil.which("bash")


def test_docs_mcp_python_sdk_snippet_runs_as_written(clone: Path, server: Server, tmp_path: Path):
    """docs/mcp.md's official-SDK example, with the user's key for ``<key>`` (the MCP SDK is a test
    dependency: it is in the .venv the tests run from)."""
    mcp = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    (snippet,) = blocks(mcp, "The official Python SDK", lang="python")
    assert snippet.count("<key>") == 1 and "127.0.0.1:8787" in snippet
    script = tmp_path / "snippet.py"
    script.write_text(snippet.replace("<key>", server.key).replace("127.0.0.1:8787", f"127.0.0.1:{server.port}"))

    done = subprocess.run(
        [str(clone / ".venv" / "bin" / "python"), str(script)],
        cwd=clone,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    tools, memory_id = done.stdout.splitlines()
    assert "memory_add" in tools and "recall_context" in tools
    assert re.fullmatch(rf"mem_{ID}", memory_id)
