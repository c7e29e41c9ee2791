"""``mnemo hook <event>`` as Claude Code runs it: a cold process per event, the event's JSON on
stdin (the documented fields), its answer read from stdout, its exit code and its time checked
against the timeout plugins/mnemo/hooks/hooks.json gives it -- against a real ``mnemo serve``
that is up, down (nothing listening), slow (its process stopped with SIGSTOP, so connections
are accepted by the kernel and never answered) and refusing (a wrong key)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.test_local_server import call
from tests.support.server import RunningServer, free_port, start_server, stop_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
HOOKS = json.loads((ROOT / "plugins" / "mnemo" / "hooks" / "hooks.json").read_text())["hooks"]
#: the timeout Claude Code gives each hook, from the plugin's hooks.json
TIMEOUT_S = {event: entries[0]["hooks"][0]["timeout"] for event, entries in HOOKS.items()}
MNEMO = Path(sys.executable).parent / "mnemo"


@dataclass
class Hook:
    code: int
    out: dict | None
    stdout: str
    stderr: str
    seconds: float


def run_hook(event: str, payload: dict, env: dict[str, str]) -> Hook:
    """As Claude Code does: the plugin's command, the JSON on stdin, killed at its timeout."""
    command = next(h["command"] for h in HOOKS[event][0]["hooks"])
    assert command == f"mnemo hook {event}"
    started = time.monotonic()
    done = subprocess.run(
        [str(MNEMO), "hook", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT_S[event],
        check=False,
    )
    seconds = time.monotonic() - started
    out = json.loads(done.stdout) if done.stdout.strip() else None
    return Hook(done.returncode, out, done.stdout, done.stderr, seconds)


def event(name: str, repo: Path, session: str, **fields: object) -> dict:
    """The fields every hook receives, then the event's own."""
    return {
        "session_id": session,
        "transcript_path": str(repo / f"{session}.jsonl"),
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": name,
        **fields,
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    # one instance: a small load on the shared CI box
    running = start_server(tmp_path_factory.mktemp("hooks-server"), args=("--workers", "1"))
    yield running
    if running.process.poll() is None:
        os.kill(running.process.pid, signal.SIGCONT)
    stop_server(running)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose origin is git@github.com:acme/<unique>.git, and a folder in it."""
    name = f"hooks-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(
        f'[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/{name}.git\n'
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    )
    (root / "src").mkdir()
    return root / "src"


def slug_of(repo: Path) -> str:
    return (repo.parent / ".git" / "config").read_text().split("acme/")[1].split(".git")[0]


@pytest.fixture
def env(server: RunningServer, tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    return {**base, "MNEMO_URL": server.url, "MNEMO_KEY": server.key, "MNEMO_HOOK_STATE_DIR": str(tmp_path / "state")}


def session() -> str:
    return str(uuid.uuid4())


# ---- up ----------------------------------------------------------------------------------------


def test_session_start_creates_the_repositorys_project_and_says_so(server, repo, env):
    hook = run_hook("SessionStart", event("SessionStart", repo, session(), source="startup"), env)

    assert (hook.code, hook.stderr) == (0, "")
    output = hook.out["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert f'project "{slug_of(repo)}"' in output["additionalContext"]
    assert "created" in output["additionalContext"]
    status, _, found = call(server, "memory_search", {"project": slug_of(repo)})
    assert (status, found["memories"]) == (200, [])


def test_session_start_injects_the_projects_memories_and_how_to_search_more(server, repo, env):
    run_hook("SessionStart", event("SessionStart", repo, session(), source="startup"), env)
    call(server, "memory_add", {"project": slug_of(repo), "content": "Invoices are rendered by Typst", "kind": "fact"})

    hook = run_hook("SessionStart", event("SessionStart", repo, session(), source="resume"), env)

    context = hook.out["hookSpecificOutput"]["additionalContext"]
    assert "Invoices are rendered by Typst" in context
    assert "search_memory" in context and "memory_add" in context
    assert hook.code == 0


def test_user_prompt_submit_injects_a_strong_match_and_nothing_for_an_unrelated_prompt(server, repo, env):
    run_hook("SessionStart", event("SessionStart", repo, session(), source="startup"), env)
    content = "The billing service is deployed to Frankfurt every Tuesday after the freeze"
    call(server, "memory_add", {"project": slug_of(repo), "content": content, "kind": "decision"})
    sid = session()
    # the CI box runs ~8 sessions on 2 cores (load 15-20): give the hook its timeout less its own
    # start-up here; what it costs unloaded is bench/hook_cost.py's
    patient = {**env, "MNEMO_HOOK_DEADLINE_S": str(TIMEOUT_S["UserPromptSubmit"] - 1.5)}

    related = run_hook(
        "UserPromptSubmit",
        event("UserPromptSubmit", repo, sid, prompt="when do we deploy the billing service to Frankfurt?"),
        patient,
    )
    unrelated = run_hook(
        "UserPromptSubmit",
        event("UserPromptSubmit", repo, sid, prompt="rename this variable to something clearer"),
        patient,
    )

    assert related.out is not None, related.stderr
    assert related.out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert content in related.out["hookSpecificOutput"]["additionalContext"]
    assert (unrelated.code, unrelated.stdout, unrelated.stderr) == (0, "", "")


def test_stop_asks_once_per_session_and_never_when_a_stop_hook_already_continued(repo, env):
    sid = session()

    first = run_hook("Stop", event("Stop", repo, sid, stop_hook_active=False), env)
    again = run_hook("Stop", event("Stop", repo, sid, stop_hook_active=False), env)
    looping = run_hook("Stop", event("Stop", repo, session(), stop_hook_active=True), env)

    assert first.out["decision"] == "block" and "memory_add" in first.out["reason"]
    assert (again.code, again.stdout) == (0, "")
    assert (looping.code, looping.stdout) == (0, "")


def test_pre_compact_reminds_once_and_the_compacted_session_start_carries_it_to_the_model(repo, env):
    sid = session()

    first = run_hook("PreCompact", event("PreCompact", repo, sid, trigger="auto", custom_instructions=""), env)
    again = run_hook("PreCompact", event("PreCompact", repo, sid, trigger="manual", custom_instructions=""), env)
    after = run_hook("SessionStart", event("SessionStart", repo, sid, source="compact"), env)

    assert "memory_add" in first.out["systemMessage"]
    assert again.stdout == ""
    assert "memory_add (kind decision" in after.out["hookSpecificOutput"]["additionalContext"]


def test_an_event_turned_off_answers_nothing(repo, env):
    hook = run_hook("Stop", event("Stop", repo, session(), stop_hook_active=False), {**env, "MNEMO_HOOK_OFF": "Stop"})

    assert (hook.code, hook.stdout, hook.stderr) == (0, "", "")


# ---- down, slow, refusing ----------------------------------------------------------------------


def assert_failed_open(hook: Hook, event_name: str, words: str) -> None:
    assert hook.code == 0
    assert hook.stdout == ""
    assert hook.stderr.count("\n") == 1 and words in hook.stderr, hook.stderr
    assert hook.seconds < TIMEOUT_S[event_name]


@pytest.mark.parametrize("name", ["SessionStart", "UserPromptSubmit"])
def test_a_server_that_is_down_costs_nothing(repo, env, name):
    down = {**env, "MNEMO_URL": f"http://127.0.0.1:{free_port()}"}
    payload = event(name, repo, session(), source="startup", prompt="when do we deploy the billing service?")

    assert_failed_open(run_hook(name, payload, down), name, "cannot reach")


def test_a_key_the_server_refuses_costs_nothing(repo, env):
    hook = run_hook(
        "SessionStart", event("SessionStart", repo, session(), source="startup"), {**env, "MNEMO_KEY": "no"}
    )

    assert_failed_open(hook, "SessionStart", "401")


def test_input_that_is_not_json_costs_nothing(env):
    done = subprocess.run(
        [str(MNEMO), "hook", "UserPromptSubmit"], input="{oops", capture_output=True, text=True, env=env, timeout=5
    )

    assert (done.returncode, done.stdout) == (0, "")
    assert "not JSON" in done.stderr


@pytest.mark.parametrize("name", ["SessionStart", "UserPromptSubmit"])
def test_a_server_that_does_not_answer_is_given_up_within_the_hooks_deadline(server, repo, env, name):
    payload = event(name, repo, session(), source="startup", prompt="when do we deploy the billing service?")
    os.kill(server.process.pid, signal.SIGSTOP)  # the kernel still accepts; nobody answers
    try:
        hook = run_hook(name, payload, env)
    finally:
        os.kill(server.process.pid, signal.SIGCONT)

    assert_failed_open(hook, name, "did not answer")
