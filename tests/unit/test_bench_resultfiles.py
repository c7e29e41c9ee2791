"""bench/resultfiles.py: a benchmark's run kept with its date, commit and command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bench import resultfiles


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "tree"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=repo, check=True)
    return repo


def test_a_tree_s_commit_is_marked_when_its_tracked_files_differ(tmp_path):
    repo = _repo(tmp_path)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True).stdout
    assert resultfiles.commit(repo) == head.strip()
    (repo / "untracked.txt").write_text("not counted\n")
    assert resultfiles.commit(repo) == head.strip()
    (repo / "a.txt").write_text("two\n")
    assert resultfiles.commit(repo) == head.strip() + "+"


def test_a_run_is_written_as_json_and_markdown_stamped_with_its_command(tmp_path, capsys):
    repo = _repo(tmp_path)
    res = resultfiles.stamp({"p50": 1.5}, "python -m bench.x --label y", repo)
    stem = resultfiles.write(res, "x", "y", "# x\n", results=tmp_path)

    kept = json.loads(stem.with_suffix(".json").read_text())
    assert kept["p50"] == 1.5 and kept["command"] == "python -m bench.x --label y"
    assert kept["commit"] == resultfiles.commit(repo) and kept["date"].endswith(" UTC")
    assert stem.name.endswith("-x-y") and stem.with_suffix(".md").read_text() == "# x\n"
    assert capsys.readouterr().out.strip() == "# x"


def test_a_run_without_markdown_is_json_only(tmp_path, capsys):
    stem = resultfiles.write({"n": 1}, "gc", "z", results=tmp_path)
    assert json.loads(stem.with_suffix(".json").read_text()) == {"n": 1}
    assert not stem.with_suffix(".md").exists()
    assert json.loads(capsys.readouterr().out) == {"n": 1}
