"""``mnemo export`` and ``mnemo import`` (JSON lines), in-process: a file holding supersession marks
and kept versions reads in and writes out the same, line for line."""

from __future__ import annotations

import json
from pathlib import Path

from mnemo.models.admin import ExportedMemory


def _line(ws: str, prj: str, memory_id: str, version: int, content: str, **more: object) -> dict[str, object]:
    return {
        "id": memory_id,
        "workspace_id": ws,
        "project_id": prj,
        "content": content,
        "source": "cli-test",
        "version": version,
        "created_at": "2026-01-05T09:00:00.000Z",
        "updated_at": f"2026-01-{4 + version:02d}T09:00:00.000Z",
        **more,
    }


def test_history_and_marks_read_in_and_write_out_the_same(run, tmp_path: Path) -> None:
    made = json.loads(run("workspace", "create", "w", "--json")[1])
    ws, prj = made["workspace"]["id"], made["default_project"]["id"]
    old, new = "mem_01KA0000000000000000000001", "mem_01KA0000000000000000000002"
    versions = [
        {
            k: v
            for k, v in _line(ws, prj, old, n, f"deploys on Fridays, draft {n}").items()
            if k not in ("id", "workspace_id", "project_id")
        }
        for n in (2, 1)
    ]
    lines = [
        _line(
            ws,
            prj,
            old,
            3,
            "deploys on Fridays",
            superseded_by=new,
            superseded_at="2026-01-09T09:00:00.000Z",
            history=versions,
            history_dropped=0,
        ),
        _line(ws, prj, new, 1, "deploys moved to Tuesdays", supersedes=[old]),
    ]
    lines[0].pop("history_dropped")  # zero is the default, and an export leaves it out
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert run("import", "-i", str(source))[0] == 0
    code, out, _ = run("export")

    assert code == 0
    written = [ExportedMemory.model_validate(line).model_dump(mode="json") for line in lines]
    assert [json.loads(line) for line in out.splitlines()] == written
    assert written[0]["history"][1]["content"] == "deploys on Fridays, draft 1" and "history_dropped" not in written[0]
    assert run("import", "-i", str(source), "--project", "nope")[0] != 0


def test_an_unknown_field_in_a_kept_version_refuses_the_file(run, tmp_path: Path) -> None:
    made = json.loads(run("workspace", "create", "w", "--json")[1])
    ws, prj = made["workspace"]["id"], made["default_project"]["id"]
    line = _line(
        ws,
        prj,
        "mem_01KA0000000000000000000001",
        2,
        "now",
        history=[
            {
                "content": "then",
                "source": "x",
                "version": 1,
                "created_at": "2026-01-05T09:00:00.000Z",
                "updated_at": "2026-01-05T09:00:00.000Z",
                "colour": "red",
            }
        ],
    )
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(line) + "\n")

    code, _, err = run("import", "-i", str(source))

    assert code != 0 and "history.0.colour" in err and "nothing was imported" in err
    assert run("export")[1] == ""
