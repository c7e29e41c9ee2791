"""docs/operations.md "Moving to Mnemo" runs as written: its blocks, pasted command by command into
one bash session in a folder like a fresh clone's (``.venv`` there), every command succeeds and
every ``# → …`` answer stands in the command's JSON output; then what arrived is checked against
the samples the blocks wrote (verbatim, once, findable by recall)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.doc_runner import Session, blocks, commands, unmet

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")


def test_every_block_runs_and_states_its_answers(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / ".venv").symlink_to(ROOT / ".venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "POWERTOOLS_", "VIRTUAL_ENV"))}
    session = Session(clone, env, tmp_path / "steps")
    try:
        for block in blocks(DOC, "Moving to Mnemo"):
            for command in commands(block):
                step = session.run(command.text)
                assert step.code == 0, f"{step.command}\n{step.out}\n{step.err}"
                for stated in command.states:
                    missing = unmet(stated, json.loads(step.out))
                    assert not missing, f"{step.command}: {missing}\n{step.out}"
        listed = session.run(".venv/bin/mnemo export")
        search = session.run(".venv/bin/mnemo export --project copy")
    finally:
        session.close()
    memories = [json.loads(line) for line in listed.out.splitlines()]
    contents = [m["content"] for m in memories]
    assert len(contents) == len(set(contents)) == 8
    assert "Ada works_at Acme" in contents
    assert "User is planning to watch a movie tonight." in contents
    coffee = next(m for m in memories if m["source"] == "basic-memory")
    assert coffee["content"].startswith("# Coffee Brewing\n\n## Observations\n- [method] Pour over")
    assert coffee["path"] == "coffee-brewing" and coffee["tags"] == ["coffee"]
    mem0 = next(m for m in memories if m["source"] == "mem0")
    assert mem0["created_at"] == "2025-02-27T16:33:20.557Z"
    copied = [json.loads(line) for line in search.out.splitlines()]
    assert sorted((m["content"], m["kind"], m["path"], m["tags"], m["created_at"]) for m in copied) == sorted(
        (m["content"], m["kind"], m["path"], m["tags"], m["created_at"]) for m in memories
    )
