"""Where a benchmark's run is kept: ``bench/results/<date>-<name>-<label>.json`` (and ``.md``),
stamped with the date, the commit of the tree that ran and the command that made it — what the
docs link instead of copying figures."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def commit(tree: Path = ROOT) -> str:
    """The tree's short commit, with ``+`` when its tracked files differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=False).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def stamp(res: dict[str, Any], command: str, tree: Path = ROOT) -> dict[str, Any]:
    """``res`` with the date, ``tree``'s commit and ``command``."""
    res["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    res["commit"] = commit(tree)
    res["command"] = command
    return res


def write(res: dict[str, Any], name: str, label: str, markdown: str | None = None, results: Path = RESULTS) -> Path:
    """``res`` as ``<date>-<name>-<label>.json`` and ``markdown`` (if any) beside it as ``.md``;
    prints the Markdown (else the JSON) and returns the path without its suffix."""
    stem = results / f"{datetime.now(UTC):%Y-%m-%d}-{name}-{label}"
    text = json.dumps(res, indent=1) + "\n"
    stem.with_suffix(".json").write_text(text)
    if markdown is not None:
        stem.with_suffix(".md").write_text(markdown)
    print(markdown if markdown is not None else text)
    return stem
