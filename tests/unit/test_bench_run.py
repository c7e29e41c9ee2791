"""bench.run's results files: a partial run (``--only``) never replaces ``latest``, which the docs
link as the last measured figures of every section (no benchmark runs here: the sections are fakes)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import bench
from bench import report, run


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """bench/results in a temporary folder holding a full ``latest``, and every section a fake
    whose figures name the section ("measured")."""
    folder = tmp_path / "results"
    folder.mkdir()
    full = {
        **{section: {"figures": f"old {section}"} for section in run.SECTIONS},
        "strategies": {"figures": "old strategies"},
        "command": "python -m bench.run",
        "date": "2026-12-01 09:08 UTC",
    }
    (folder / "latest.json").write_text(json.dumps(full))
    (folder / "latest.md").write_text("the full report\n")
    monkeypatch.setattr(run, "RESULTS", folder)
    monkeypatch.setattr(run, "machine", lambda: {"commit": "test"})
    monkeypatch.setattr(report, "render", lambda res: json.dumps(sorted(k for k in res if k in run.SECTIONS)))

    def fake(section: str) -> types.ModuleType:
        module = types.ModuleType(f"bench.{section}")

        def measure(*args: Any, **kwargs: Any) -> dict[str, str]:
            return {"figures": f"new {section}"}

        module.run = measure  # type: ignore[attr-defined]
        module.strategies = lambda *args, **kwargs: {"figures": "new strategies"}  # type: ignore[attr-defined]
        return module

    for section in run.SECTIONS:
        module = "nl_quality" if section == "nl" else section
        stand_in = fake(section)
        # `from bench import quality` takes the package's attribute when an earlier test imported
        # the real module, else sys.modules' entry: both are the fake for this test
        monkeypatch.setitem(sys.modules, f"bench.{module}", stand_in)
        monkeypatch.setattr(bench, module, stand_in, raising=False)
    return folder


def read(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / f"{name}.json").read_text())
    return data


def test_a_partial_run_with_a_label_writes_its_label_and_leaves_latest_as_it_was(results: Path) -> None:
    before = (results / "latest.json").read_bytes(), (results / "latest.md").read_bytes()
    assert run.main(["--only", "quality", "--label", "trial"]) == 0
    # latest is untouched, byte for byte; the label holds the one section measured
    assert ((results / "latest.json").read_bytes(), (results / "latest.md").read_bytes()) == before
    trial = read(results, "trial")
    assert trial["quality"] == {"figures": "new quality"}
    assert not set(run.SECTIONS) - {"quality"} & set(trial)


def test_a_partial_run_with_merge_replaces_its_sections_of_latest_and_keeps_every_other(results: Path) -> None:
    assert run.main(["--only", "quality,nl", "--merge"]) == 0
    latest = read(results, "latest")
    assert latest["quality"] == {"figures": "new quality"}
    assert latest["nl"] == {"figures": "new nl"}
    for section in (*set(run.SECTIONS) - {"quality", "nl"}, "strategies"):
        assert latest[section] == {"figures": f"old {section}"}, section
    assert "2026-12-01 09:08 UTC" in latest["merged"]
    assert (results / "latest.md").read_text() == json.dumps(sorted(run.SECTIONS))


def test_a_partial_run_with_neither_label_nor_merge_is_refused_before_it_measures(
    results: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def measured(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("measured before refusing")

    monkeypatch.setattr(sys.modules["bench.quality"], "run", measured)
    before = (results / "latest.json").read_bytes()
    with pytest.raises(SystemExit) as refused:
        run.main(["--only", "quality"])
    assert refused.value.code == 2
    assert "--label" in capsys.readouterr().err
    assert (results / "latest.json").read_bytes() == before


def test_a_full_run_replaces_latest(results: Path) -> None:
    assert run.main(["--label", "full"]) == 0
    latest = read(results, "latest")
    for section in run.SECTIONS:
        assert latest[section] == {"figures": f"new {section}"}
    assert "merged" not in latest
    assert read(results, "full") == latest


def test_a_merge_of_a_merge_still_names_where_the_older_sections_came_from() -> None:
    first = {"search": 1, "date": "d1", "command": "c1"}
    second = run.merged(first, {"cost": 2, "date": "d2", "command": "c2"})
    third = run.merged(second, {"quality": 3, "date": "d3", "command": "c3"})
    assert (third["search"], third["cost"], third["quality"]) == (1, 2, 3)
    assert "d2 (c2)" in third["merged"]
    assert "d1 (c1)" in third["merged"]
