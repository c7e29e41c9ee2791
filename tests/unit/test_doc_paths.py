"""The docs name the package's files as they are: a code span naming a path of the package
(`mnemo/…` or `shared/mnemo/…`) in README.md or docs/ names a file or folder that exists, so a
module turned into a package, moved or removed fails here until the docs follow. (The dated
records of bench/results/ say what was true when they were measured and are left out.)"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: a code span that is only a path of the package (a scope like `mnemo/memory:read` is not one)
PACKAGE_PATH = re.compile(r"`((?:shared/)?mnemo/[\w./-]*)`")


def named_paths() -> list[tuple[str, int, str]]:
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in PACKAGE_PATH.finditer(line):
                found.append((doc.relative_to(ROOT).as_posix(), number, match.group(1)))
    return found


def test_the_docs_name_paths_of_the_package_that_exist():
    paths = named_paths()
    missing = [
        f"{doc}:{number}: {path}"
        for doc, number, path in paths
        if not (ROOT / (path if path.startswith("shared/") else f"shared/{path}")).exists()
    ]

    assert len(paths) > 20  # the docs do name the package's files this way
    assert missing == []
