"""Running a document's shell blocks as a user pastes them: the blocks of a Markdown section, cut
into whole commands, run one by one in one bash session, each command's output kept apart, and
the answer a ``# → …`` line states checked against the command's JSON output (:func:`unmet`).

Used by tests/e2e/test_readme.py (the README's tour and administration, docs/mcp.md's curl block),
tests/integration/test_auth_doc.py (docs/auth.md) and tests/e2e/test_agents_doc.py (its blocks).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^```(\w*)\s*$")
#: a JSON literal: a string, a number, true, false or null
LITERAL = r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null'


def blocks(markdown: str, heading: str, lang: str = "sh") -> list[str]:
    """The ``lang`` code blocks under the heading (any level) whose text is ``heading``."""
    found: list[str] = []
    inside = False
    level = 0
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        title = re.match(r"^(#+)\s+(.*?)\s*$", line)
        if title and not inside:
            if title.group(2) == heading:
                inside, level = True, len(title.group(1))
            i += 1
            continue
        if title and inside and len(title.group(1)) <= level:
            break
        fence = FENCE.match(line.strip())
        if inside and fence:
            body = []
            i += 1
            while not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            indent = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
            if fence.group(1) == lang:
                found.append("\n".join(x[indent:] for x in body))
        i += 1
    if not found:
        raise AssertionError(f"no ```{lang} block under the heading {heading!r}")
    return found


@dataclass
class Command:
    text: str  # the lines as written, comments included
    #: the answer the document states for it: the text of a ``# → …`` line right after it
    states: list[str] = field(default_factory=list)


def complete(text: str) -> bool:
    """Whether bash reads ``text`` as whole commands (no open quote, no trailing backslash, no
    here-document still open: ``bash -n`` accepts one cut at end of input with only a warning)."""
    if text.rstrip().endswith("\\"):
        return False
    checked = subprocess.run(["bash", "-n", "-c", text], capture_output=True, text=True, check=False)
    return checked.returncode == 0 and "delimited by end-of-file" not in checked.stderr


def commands(block: str) -> list[Command]:
    """The block cut into whole commands, as a user pastes them one at a time."""
    found: list[Command] = []
    pending: list[str] = []
    for line in block.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            if stripped.startswith("# → ") and found:
                found[-1].states.append(stripped[len("# → ") :])
            continue
        pending.append(line)
        if complete("\n".join(pending)):
            found.append(Command("\n".join(pending)))
            pending = []
    assert not pending, f"an unfinished command: {pending}"
    return found


@dataclass
class Step:
    command: str  # as run, placeholders filled in
    code: int
    out: str
    err: str


class Session:
    """One bash, fed one command at a time; each command's stdout and stderr go to their own
    files, read back after it finishes (``< /dev/null`` unless the command redirects stdin)."""

    def __init__(self, cwd: Path, env: dict[str, str], scratch: Path) -> None:
        self.cwd = cwd
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        self.steps: list[Step] = []
        self.bash = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, command: str) -> Step:
        n = len(self.steps)
        out, err = self.scratch / f"{n}.out", self.scratch / f"{n}.err"
        assert self.bash.stdin is not None and self.bash.stdout is not None
        self.bash.stdin.write(f'{{\n{command}\n}} < /dev/null > {out} 2> {err}\necho "@@step-done $?@@"\n')
        self.bash.stdin.flush()
        while True:
            line = self.bash.stdout.readline()
            if not line:
                raise AssertionError(f"bash ended during: {command}")
            done = re.match(r"^@@step-done (\d+)@@$", line.strip())
            if done:
                break
        step = Step(command, int(done.group(1)), out.read_text(), err.read_text())
        self.steps.append(step)
        return step

    def close(self) -> None:
        if self.bash.stdin is not None:
            self.bash.stdin.close()
        self.bash.wait(timeout=30)


def pairs(stated: str) -> list[tuple[str, str]]:
    """The quoted keys with a literal value, or a flat list of them, in a ``# → …`` line
    (``"slug": "default"``, ``"version": 1``, ``"scopes": ["memory:read"]``), the value as written."""
    value = rf"{LITERAL}|\[\s*(?:(?:{LITERAL})\s*,\s*)*(?:{LITERAL})?\s*\]"
    return re.findall(rf'"(\w+)":\s*({value})', stated)


def flatten(value: Any) -> Iterator[tuple[str, Any]]:
    """Every key and value of a JSON document, at any depth."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k, v
            yield from flatten(v)
    elif isinstance(value, list):
        for item in value:
            yield from flatten(item)


def unmet(stated: str, answer: Any) -> list[str]:
    """What a stated answer says that the real one does not: each of its :func:`pairs` must stand
    somewhere in ``answer``, at any depth (a string value with … is a prefix), and every quoted key
    it names must be a key of ``answer``."""
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
