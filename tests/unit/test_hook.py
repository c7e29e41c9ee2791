"""``mnemo hook``'s parts that need no server: the project a working directory names, the
once-per-session marks, and the cold start it keeps small (standard library only)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mnemo.hook import events as hook


def git_repo(root: Path, remotes: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    sections = "".join(f'[remote "{name}"]\n\turl = {url}\n' for name, url in remotes.items())
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n" + sections)
    return root


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("git@github.com:acme/Widget_Service.git", "widget-service"),
        ("https://github.com/acme/widgets", "widgets"),
        ("ssh://git@host:2222/team/api.git/", "api"),
    ],
)
def test_the_project_is_named_after_the_origin_remotes_repository(tmp_path, url, slug):
    repo = git_repo(tmp_path / "checkout", {"upstream": "git@x:y/other.git", "origin": url})
    (repo / "deep" / "er").mkdir(parents=True)

    assert hook.resolve_project(repo / "deep" / "er", {}) == (slug, "the git remote's repository name")


def test_a_worktree_reads_its_main_repositorys_remotes(tmp_path):
    main = git_repo(tmp_path / "main", {"origin": "git@github.com:acme/engine.git"})
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")

    assert hook.resolve_project(worktree, {})[0] == "engine"


def test_without_a_remote_or_when_asked_the_folder_names_it(tmp_path):
    bare = git_repo(tmp_path / "My Notes", {})
    remote = git_repo(tmp_path / "checkout", {"origin": "git@github.com:acme/engine.git"})

    assert hook.resolve_project(bare, {}) == ("my-notes", "the folder's name")
    assert hook.resolve_project(remote, {"MNEMO_HOOK_PROJECT_FROM": "folder"})[0] == "checkout"
    assert hook.resolve_project(remote, {"MNEMO_PROJECT": "fixed"}) == ("fixed", "MNEMO_PROJECT")


def test_a_mark_is_taken_once_per_session_and_event(tmp_path):
    env = {"MNEMO_HOOK_STATE_DIR": str(tmp_path)}

    first = [hook.first_time(env, "s1", "Stop"), hook.first_time(env, "s1", "Stop")]
    other = [hook.first_time(env, "s2", "Stop"), hook.first_time(env, "s1", "PreCompact")]

    assert (first, other) == ([True, False], [True, True])
    assert "s1" not in "".join(p.name for p in tmp_path.iterdir())  # only a digest of the session id


def test_a_prompt_hook_without_a_key_says_so_and_injects_nothing():
    err = io.StringIO()
    out = io.StringIO()
    payload = json.dumps({"session_id": "s", "cwd": "/", "prompt": "what did we decide about billing?"})

    code = hook.run("UserPromptSubmit", io.StringIO(payload), out, err, {})

    assert (code, out.getvalue()) == (0, "")
    assert err.getvalue().count("\n") == 1 and "MNEMO_KEY" in err.getvalue()


def test_the_hook_imports_nothing_but_the_standard_library():
    probe = (
        "import sys; from mnemo.local.cli import main; import mnemo.local.cli.hook, mnemo.hook.events, http.client; "
        "print(sorted(m.split('.')[0] for m in sys.modules if m.split('.')[0] in "
        "{'pydantic', 'aws_lambda_powertools', 'boto3', 'mnemo_heavy', 'argparse'} or m.startswith('mnemo.') "
        "and m not in {'mnemo.local', 'mnemo.local.cli', 'mnemo.local.cli.hook', 'mnemo.clientconfig'} "
        "and not m.startswith('mnemo.hook')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "[]"


def test_the_hooks_session_rule_is_the_models():
    from mnemo.models.common import MAX_SESSION, SESSION_CHARS

    assert (hook.SESSION_CHARS, hook.SESSION_RE.pattern) == (SESSION_CHARS, f"[{SESSION_CHARS}]{{1,{MAX_SESSION}}}")


@pytest.mark.parametrize(
    ("session_id", "hint"),
    [
        ("7f3e2a10-4b1c-4d5e-9f00-aa11bb22cc33", ' (project "p", session "7f3e2a10-4b1c-4d5e-9f00-aa11bb22cc33")'),
        ("", ' (project "p")'),
        ("not a session", ' (project "p")'),
        ("x" * 129, ' (project "p")'),
    ],
)
def test_the_save_nudge_names_the_session_to_pass_when_it_is_a_valid_one(tmp_path, session_id, hint):
    env = {"MNEMO_PROJECT": "p", "MNEMO_HOOK_STATE_DIR": str(tmp_path)}
    event = {"session_id": session_id, "cwd": str(tmp_path)}

    assert hook._project_hint(event, env) == hint
