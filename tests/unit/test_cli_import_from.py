"""``mnemo import --from SOURCE PATH`` and ``mnemo export --format markdown``, in-process: what it
prints, its exit codes, a dry run, a second run, a file of another format."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from mnemo.local.cli.moving import Progress


@pytest.fixture
def run(run):
    """tests/unit/conftest.py's CLI, with workspace w created."""
    assert run("workspace", "create", "w")[0] == 0
    return run


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_text(
        '{"type":"entity","name":"Ada","entityType":"person","observations":["Ada writes Rust"]}\n'
        '{"type":"entity","name":"Ac\n'
        '{"type":"relation","from":"Ada","to":"Acme","relationType":"works_at"}\n'
    )
    return path


def test_a_dry_run_lists_what_would_happen_and_writes_nothing(run, graph: Path) -> None:
    code, out, _ = run("import", "--from", "server-memory", str(graph), "--dry-run")

    assert code == 0
    assert out.splitlines() == [
        out.splitlines()[0],
        "  add      line 1, observation 1",
        "  add      line 3",
        "  refused  line 2: not JSON (Invalid control character at)",
    ]
    assert out.startswith("Would add 2 memories")
    assert run("export")[1] == ""


def test_an_import_then_a_second_one_that_adds_nothing(run, graph: Path) -> None:
    first = json.loads(run("import", "--from", "server-memory", str(graph), "--json")[1])
    code, out, _ = run("import", "--from", "server-memory", str(graph), "--json")
    second = json.loads(out)

    assert first["added"] == 2 and first["refused"] == [{"position": "line 2", "reason": first["refused"][0]["reason"]}]
    assert (
        code == 0
        and second["added"] == 0
        and [s["position"] for s in second["skipped"]] == ["line 1, observation 1", "line 3"]
    )
    assert len(run("export")[1].splitlines()) == 2


def test_a_file_of_another_format_is_refused_at_once(run, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# A note\n")

    code, _, err = run("import", "--from", "mem0", str(note))

    assert code == 1 and "is not mem0's JSON" in err and "nothing was imported" in err
    assert run("export")[1] == ""


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["import", "--from", "markdown"], "needs the PATH"),
        (["import", "--from", "markdown", "/nonexistent/notes"], "does not exist"),
        (["import", "--from", "mem0", "x.json", "--map", "content=a"], "--map is for jsonl and csv"),
        (["import", "--from", "csv", "x.csv", "--map", "colour=a"], "no memory field colour"),
        (["import", "--from", "csv", "x.csv", "--map", "content"], "FIELD=NAME"),
        (["import", "--dry-run"], "go with --from"),
        (["export", "somewhere"], "--format markdown"),
    ],
)
def test_usage_errors(run, argv: list[str], needle: str) -> None:
    code, _, err = run(*argv)

    assert code == 2 and needle in err


def test_the_markdown_export_reads_back_as_it_was(run, graph: Path, tmp_path: Path) -> None:
    run("import", "--from", "server-memory", str(graph))
    run("project", "create", "copy")

    assert run("export", "--format", "markdown", str(tmp_path / "notes"))[0] == 0
    same = json.loads(run("import", "--from", "markdown", str(tmp_path / "notes"), "--json")[1])
    copy = json.loads(run("import", "--from", "markdown", str(tmp_path / "notes"), "--project", "copy", "--json")[1])

    assert same["added"] == 0 and copy["added"] == 2
    fields = ("content", "kind", "tags", "path", "created_at", "updated_at")
    original = sorted(tuple(json.dumps(json.loads(r)[f]) for f in fields) for r in run("export")[1].splitlines())
    copied = [json.loads(r) for r in run("export", "--project", "copy")[1].splitlines()]
    assert sorted(tuple(json.dumps(r[f]) for f in fields) for r in copied) == original


def test_the_progress_bar_moves_and_ends_its_line() -> None:
    out = io.StringIO()
    bar = Progress(4, out)

    for _ in range(4):
        bar.step()
    bar.done()

    assert out.getvalue().split("\r")[1:] == [
        f"[{'#' * (30 * n // 4)}{'.' * (30 - 30 * n // 4)}] {n}/4" for n in range(1, 4)
    ] + [f"[{'#' * 30}] 4/4\n"]
