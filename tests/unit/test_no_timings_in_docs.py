"""Timings live in bench/results/ (with the command that made them) and the docs link them: the
module docstrings, README.md, docs/architecture.md and the Makefile quote none, so a new run
cannot leave them stale. (docs/performance.md, docs/scale.md and docs/pitfalls.md analyse
measurements and cite their result files; they are not checked here.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: a duration as measured: milliseconds, "≈ 3", "1 min 26 s", "0.45 s of imports", "3 s of CPU"
TIMING = re.compile(r"\d(\.\d+)? ?ms\b|≈ ?\d|\d+ min \d+ s\b|\d s of (CPU|imports)\b|\d+–\d+ s\b|\d+-\d+ s\b")


def _docstrings() -> dict[str, str]:
    found = {}
    for path in sorted([*(ROOT / "shared" / "mnemo").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        if doc:
            found[str(path.relative_to(ROOT))] = doc
    return found


def test_module_docstrings_quote_no_timings():
    quoted = {where: m.group(0) for where, doc in _docstrings().items() if (m := TIMING.search(doc))}

    assert quoted == {}, "move the figure to bench/results/ and link it"


def test_readme_architecture_and_makefile_quote_no_timings():
    quoted = {}
    for name in ("README.md", "docs/architecture.md", "Makefile"):
        for number, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            if TIMING.search(line):
                quoted[f"{name}:{number}"] = line.strip()

    assert quoted == {}, "move the figure to bench/results/ and link it"


def test_the_pattern_finds_the_figures_that_were_moved():
    for figure in ("p50 1.3 ms", "≈ 0.45 s of imports", "1 min 26 s", "134-154 s", "≈ 3 s of CPU", "19–29 s"):
        assert TIMING.search(figure), figure
    for rule in ("taken over after 30 s", "limit / 60 s sustained", "a 3 s fetch timeout"):
        assert not TIMING.search(rule), rule
