"""docs/architecture.md against the code: the counts it states and its parts table, so a module
added, renamed or an operation added fails here until the document says so."""

from __future__ import annotations

import re
from pathlib import Path

from mnemo.service.catalog import ADMIN_OPERATIONS, TOOLS

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "shared" / "mnemo"
WORDS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight"),
    *("nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"),
]


def _number(text: str, pattern: str) -> int:
    found = re.search(pattern, text)
    assert found is not None, f"docs/architecture.md no longer says {pattern!r}"
    word = found.group(1).lower()
    return int(word) if word.isdigit() else WORDS.index(word)


def test_the_operation_counts_are_the_catalogs():
    assert _number(ARCHITECTURE, r"the (\w+) tools and the \w+ workspace operations") == len(TOOLS)
    assert _number(ARCHITECTURE, r"the \w+ tools and the (\w+) workspace operations") == len(ADMIN_OPERATIONS)


def test_the_templates_counts_are_the_templates():
    template = (ROOT / "template.yaml").read_text(encoding="utf-8")

    assert _number(ARCHITECTURE, r"(\w+) functions and a role for each") == template.count(
        "Type: AWS::Serverless::Function"
    )
    assert _number(ARCHITECTURE, r"(\w+) tables, log groups") == template.count("Type: AWS::DynamoDB::Table")


def parts_table() -> dict[str, set[str]]:
    """Each row of "The parts": its first cell's paths, and every backticked name in the row."""
    section = ARCHITECTURE.split("## The parts", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first, rest = line.split(" | ", 1)
        names = set(re.findall(r"`([^`]+)`", rest))
        for path in re.findall(r"`([^`]+)`", first):
            rows[path] = names
    return rows


def unnamed_parts() -> list[str]:
    """Modules and packages of ``shared/mnemo`` (and the functions) the table does not name: a
    top-level one by its own row, one inside a row's package by each name on its way down."""
    rows = parts_table()
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)  # mnemo/...
        parts = list(relative.parts)
        if parts[-1] in ("__init__.py", "__main__.py"):
            parts.pop()
            if len(parts) == 1:
                continue
        else:
            parts[-1] = parts[-1].removesuffix(".py")
        # the deepest row that holds it: `mnemo/service/` for mnemo/service/retrieval/tools.py
        row = None
        for depth in range(len(parts), 0, -1):
            head = "/".join(parts[:depth])
            for key in (head + ".py", head + "/", head):
                if key in rows:
                    row = (depth, key)
                    break
            if row:
                break
        if row is None:
            missing.append("/".join(parts))
            continue
        depth, key = row
        names = rows[key]
        below = parts[depth:]
        for i, name in enumerate(below):
            package = i < len(below) - 1 or (PACKAGE.parent / "/".join(parts[: depth + i + 1])).is_dir()
            if not ({name, name + "/"} & names if package else {name, name + ".py"} & names):
                missing.append("/".join(parts))
                break
    for function in sorted((ROOT / "functions").iterdir()):
        if (function / "handler.py").exists() and not any(f"functions/{function.name}" in key for key in rows):
            missing.append(f"functions/{function.name}")
    return missing


def test_every_module_and_package_is_in_the_parts_table():
    assert unnamed_parts() == []
