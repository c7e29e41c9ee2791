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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.doc_runner import Session, Step, blocks, commands, unmet
from tests.support.http import healthy
from tests.support.processes import default_sigint, stop
from tests.support.server import free_port
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.node]

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
                preexec_fn=default_sigint,
            )
        deadline = time.monotonic() + 60
        while not re.search(r'export MNEMO_KEY="', self.log.read_text()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the server did not print its key:\n{self.log.read_text()}")
            time.sleep(0.05)
        self.key = re.search(r'export MNEMO_KEY="([^"]+)"', self.log.read_text()).group(1)  # type: ignore[union-attr]
        assert healthy(f"http://127.0.0.1:{port}", timeout=10)

    def stop(self) -> str:
        if self.process.poll() is not None:
            return self.log.read_text()
        stop(self.process, signal.SIGINT, group=True)
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


def run_section(session: Session, heading: str, server: Server) -> list[tuple[Step, list[str]]]:
    ran = []
    for block in blocks(README, heading):
        for command in commands(block):
            step = session.run(fill(command.text, session.steps, server))
            assert step.code == 0, f"{step.command}\nexit {step.code}\n{step.out}\n{step.err}"
            assert "Traceback" not in step.err and "command not found" not in step.err, step.err
            for stated in command.states:
                answer = json.loads(step.out)
                assert not unmet(stated, answer), (step.command, stated, unmet(stated, answer), step.out)
            ran.append((step, command.states))
    return ran


def answer_of(ran: list[tuple[Step, list[str]]], needle: str, nth: int = 0) -> Any:
    matching = [step for step, _ in ran if needle in step.command]
    return json.loads(matching[nth].out)


def found_first(out: str, memory_id: str) -> list[Any] | None:
    """A recall answer's results when ``memory_id`` ranks first, else None."""
    results: list[Any] = json.loads(out)["results"]
    return results if results and results[0]["reference"] == memory_id else None


def test_the_readme_tour_and_administration_run_as_written(clone: Path, server: Server, tmp_path: Path):
    session = Session(clone, user_env(), tmp_path / "steps")
    try:
        tour = run_section(session, "A quick tour with curl", server)
        # meaning follows a write by a moment (the default model embeds after the answer:
        # docs/retrieval.md, "Embedding after the answer"): the tour's recall by meaning, asked
        # again as a user would until the memory's vector is stored, within the stated bound
        allergy = answer_of(tour, "/memory_add", 2)["memory"]["id"]
        asked = next(step for step, _ in tour if "who has nut allergies" in step.command)
        meaning = found_first(asked.out, allergy) or wait_until(
            lambda: found_first(session.run(asked.command).out, allergy), 30, "recall by meaning to find the memory"
        )
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
    assert meaning[0]["reference"] == allergy and meaning[0]["explanation"]["matched_by"] == "meaning", meaning
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
    assert limits.out.strip() == "search 600/min  write 120/min  (this workspace's own; every server applies them)"
    exported = [json.loads(line) for line in (clone / "docs.jsonl").read_text().splitlines()]
    assert [r["id"] for r in exported] == [memory["memory"]["id"]]
    assert imported.out.strip().startswith("Imported 1 memories into project 'docs-copy'")
    assert revoked.err.startswith("Revoked key_") and "'ci-bot'" in revoked.err
    assert after.out == "401"
    assert "Traceback" not in log and "Warning" not in log, log


def test_the_readme_placeholders_are_all_known():
    """Every placeholder in a run block is one the test fills in (a new one must be taught here)."""
    known = {"ws_…", "mem_…", "key_…", "prj_…"}
    for heading in ("A quick tour with curl", "Administration"):
        for block in blocks(README, heading):
            for command in commands(block):
                code = "\n".join(split_comment(line)[0] for line in command.text.splitlines())
                assert set(re.findall(r"\w+_…", code)) <= known, command.text
    assert shutil.which("bash")


# -- docs/mcp.md: every snippet whose client is here (curl, the Python SDK, the Inspector CLI, the
# TypeScript SDK, mnemo mcp and mcp-remote as the host configurations start them; the pinned npm
# clients come from tests/clients, installed by `make clients`). Its placeholders, filled in as a
# user does: /abs/path/to/mnemo → the clone, /abs/path/to/memories → a data folder, <key> and
# <your key> → the admin key, 127.0.0.1:8787 → the server's port.

MCP_DOC = ROOT / "docs" / "mcp.md"
CLIENTS = ROOT / "tests" / "clients"


def mcp_doc() -> str:
    return MCP_DOC.read_text(encoding="utf-8")


def fill_paths(text: str, clone: Path, memories: Path, server: Server) -> str:
    text = text.replace("/abs/path/to/mnemo", str(clone)).replace("/abs/path/to/memories", str(memories))
    text = text.replace("<your key>", server.key).replace("<key>", server.key)
    return text.replace("127.0.0.1:8787", f"127.0.0.1:{server.port}")


def npm_env(**extra: str) -> dict[str, str]:
    """npx from tests/clients, offline: the pinned local client or a failure, never a download."""
    assert (CLIENTS / "node_modules").is_dir(), "the pinned MCP clients are missing: run `make clients`"
    return user_env(npm_config_offline="true", npm_config_update_notifier="false", **extra)


def test_docs_mcp_curl_and_inspector_blocks_run_as_written(clone: Path, server: Server, tmp_path: Path):
    mcp = mcp_doc()
    memories = tmp_path / "memories"
    session = Session(CLIENTS, npm_env(), tmp_path / "steps")
    try:
        for heading in ("Mnemo over MCP", "By hand with curl", "MCP Inspector"):
            for command in commands(blocks(mcp, heading)[0]):
                text = fill(fill_paths(command.text, clone, memories, server), session.steps, server)
                step = session.run(text)
                assert step.code == 0, (step.command, step.out, step.err)
    finally:
        session.close()
    _, _, _, initialize, call, listed, added, stdio_listed = session.steps  # export, export, H=, …
    assert json.loads(initialize.out)["result"]["protocolVersion"] == "2025-11-25"
    assert json.loads(call.out)["result"]["isError"] is False
    names = [tool["name"] for tool in json.loads(listed.out)["tools"]]
    assert "memory_add" in names and names == [tool["name"] for tool in json.loads(stdio_listed.out)["tools"]]
    result = json.loads(added.out)
    assert result["isError"] is False
    assert result["structuredContent"]["memory"]["content"] == "Deploys freeze on Fridays"
    assert (memories / "mnemo.db").exists()  # the stdio line ran mnemo mcp on that folder


def test_docs_mcp_python_sdk_snippets_run_as_written(clone: Path, server: Server, tmp_path: Path):
    """docs/mcp.md's official-SDK examples, over HTTP and over stdio (the MCP SDK is a test
    dependency: it is in the .venv the tests run from)."""
    http, stdio = blocks(mcp_doc(), "The official Python SDK", lang="python")
    outputs = []
    for n, snippet in enumerate((http, stdio)):
        script = tmp_path / f"snippet{n}.py"
        script.write_text(fill_paths(snippet, clone, tmp_path / "memories", server))
        done = subprocess.run(
            [str(clone / ".venv" / "bin" / "python"), str(script)],
            cwd=tmp_path,
            env=user_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    tools, memory_id = outputs[0].splitlines()
    assert "memory_add" in tools and "recall_context" in tools
    assert re.fullmatch(rf"mem_{ID}", memory_id)
    assert "'matched': False" in outputs[1] and "'project': {" in outputs[1]  # a fresh folder: no match


def test_docs_mcp_typescript_sdk_snippet_runs_as_written(clone: Path, server: Server, tmp_path: Path):
    """The TypeScript example as an ES module beside the pinned SDK, with MNEMO_MCP and MNEMO_KEY set
    as the doc says; the test appends one line that prints its result and closes the client."""
    (snippet,) = blocks(mcp_doc(), "The official TypeScript SDK", lang="js")
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "node_modules").symlink_to(CLIENTS / "node_modules", target_is_directory=True)
    script = folder / "agent.mjs"
    script.write_text(snippet + "\nconsole.log(JSON.stringify(result));\nawait client.close();\n")
    env = npm_env(MNEMO_MCP=f"http://127.0.0.1:{server.port}/mcp", MNEMO_KEY=server.key)
    node = shutil.which("node")
    assert node, "Node.js is needed for the pinned MCP clients (make clients)"

    done = subprocess.run([node, str(script)], cwd=folder, env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["isError"] is False and "matched" in result["structuredContent"]


def host_configs() -> list[tuple[str, dict[str, Any]]]:
    """The ``mcpServers.mnemo`` entries of docs/mcp.md that start a local (stdio) server."""
    found = []
    for heading in ("stdio: `mnemo mcp`", "Claude Desktop over HTTP (mcp-remote)"):
        for block in blocks(mcp_doc(), heading, lang="json"):
            entry = json.loads(block)["mcpServers"]["mnemo"]
            if "command" in entry:
                found.append((heading, entry))
    return found


@pytest.mark.parametrize("number", range(3))
def test_docs_mcp_host_configurations_start_a_working_server(clone: Path, server: Server, tmp_path: Path, number):
    """Each stdio configuration, started as an MCP host starts it: its command, args and env (with
    the SDK's small default environment), through the Python SDK's stdio client."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import get_default_environment

    configs = host_configs()
    assert len(configs) == 3, [heading for heading, _ in configs]  # Claude Desktop, .mcp.json, mcp-remote
    heading, entry = configs[number]
    memories = tmp_path / "memories"
    entry = json.loads(fill_paths(json.dumps(entry), clone, memories, server))
    if "--project" in entry["args"]:  # the project it names exists, as the doc says: create it first
        mnemo = [str(clone / ".venv" / "bin" / "mnemo"), "--data-dir", str(memories)]
        slug = entry["args"][entry["args"].index("--project") + 1]
        memories.mkdir()
        for command in (["workspace", "create", "mine"], ["project", "create", slug]):
            subprocess.run([*mnemo, *command], env=user_env(), capture_output=True, check=True)
    # what a host passes: the SDK's small default environment and the entry's env (and, here, npx
    # kept offline so the pinned mcp-remote of tests/clients is the one that runs)
    env = {**get_default_environment(), "npm_config_offline": "true", **entry.get("env", {})}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(CLIENTS))

    async def session() -> tuple[list[str], dict]:
        async with Client(params, read_timeout_seconds=60) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            added = await client.call_tool("memory_add", {"content": f"configured by {heading}"})
            return names, added.structured_content

    names, added = anyio.run(session)
    assert "memory_add" in names and added["memory"]["content"] == f"configured by {heading}"
