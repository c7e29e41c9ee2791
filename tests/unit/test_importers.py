"""The readers of other tools' stores (mnemo.importers): what each unit becomes, a damaged unit
reported by position without losing the rest, a file of another format refused before anything."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mnemo.importers import Item, Problem, WrongFormat, basic_memory, markdown, mcp_memory_service, mem0, server_memory
from mnemo.importers import table as tables
from mnemo.importers.split import split

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "imports"


def items(entries: list[Item | Problem]) -> list[Item]:
    return [e for e in entries if isinstance(e, Item)]


def problems(entries: list[Item | Problem]) -> list[tuple[str, str]]:
    return [(e.position, e.message) for e in entries if isinstance(e, Problem)]


# -- splitting a note longer than a memory ----------------------------------------------------


def test_a_short_note_is_one_part_without_its_surrounding_blank_lines() -> None:
    assert split("\n\n# Title\n\nBody.\n\n") == ["# Title\n\nBody."]


def test_a_long_note_is_cut_on_its_headings_each_part_verbatim() -> None:
    sections = [f"## Section {n}\n\n" + ("word " * 300).strip() + "\n\n" for n in range(6)]
    note = "".join(sections)

    parts = split(note)

    assert len(parts) > 1
    assert all(len(p.encode()) <= 4096 for p in parts)
    assert all(p.startswith("## Section") for p in parts)
    assert "\n\n".join(parts) == note.strip("\n")


def test_a_long_section_is_cut_on_paragraphs_then_lines_then_characters() -> None:
    paragraphs = "\n\n".join(("é" * 900) for _ in range(6))  # 1,800 bytes each
    line = "x" * 9000

    by_paragraph = split(paragraphs)
    by_character = split(line)

    assert all(len(p.encode()) <= 4096 for p in by_paragraph + by_character)
    assert "\n\n".join(by_paragraph) == paragraphs
    assert "".join(by_character) == line


# -- server-memory ----------------------------------------------------------------------------


def test_server_memory_observations_and_relations(tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    graph.write_text(
        json.dumps({"type": "entity", "name": "Ada", "entityType": "person", "observations": ["Writes Rust", "Tabs"]})
        + "\n"
        + json.dumps({"type": "relation", "from": "Ada", "to": "Acme", "relationType": "works_at"})
        + "\n"
    )

    got = items(list(server_memory.read(graph)))

    assert [(i.content, i.kind, i.path, i.position) for i in got] == [
        ("Writes Rust", "person", "Ada", "line 1, observation 1"),
        ("Tabs", "person", "Ada", "line 1, observation 2"),
        ("Ada works_at Acme", "relation", "Ada", "line 2"),
    ]


def test_server_memory_damaged_lines_are_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    graph.write_text(
        '{"type":"entity","name":"Ada","entityType":"person","observations":["one"]}\n'
        '{"type":"entity","name":"Ac\n'
        '{"type":"thing"}\n'
        '{"type":"entity","name":"Bob","entityType":"person","observations":["two", 3]}\n'
    )

    entries = list(server_memory.read(graph))

    assert [i.content for i in items(entries)] == ["one", "two"]
    assert [p for p, _ in problems(entries)] == ["line 2", "line 3", "line 4, observation 2"]


@pytest.mark.parametrize("text", ["# A note\n", '{"results": []}\n', "name,content\n"])
def test_server_memory_refuses_another_format_at_once(tmp_path: Path, text: str) -> None:
    path = tmp_path / "other.txt"
    path.write_text(text)

    with pytest.raises(WrongFormat, match="not the MCP memory server's"):
        list(server_memory.read(path))


# -- markdown and basic-memory ----------------------------------------------------------------


def test_markdown_notes_with_and_without_frontmatter(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "db.md").write_text(
        "---\nkind: decision\ntags: [db, ops]\ncreated_at: '2025-01-02T03:04:05Z'\n---\n\nWe chose Postgres.\n"
    )
    (tmp_path / "plain.md").write_text("Just a line.\n")
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "hidden.md").write_text("not a note")

    got = items(list(markdown.read(tmp_path)))

    assert [(i.position, i.content, i.kind, i.tags, i.path) for i in got] == [
        ("a/db.md", "We chose Postgres.", "decision", ("db", "ops"), "a/db"),
        ("plain.md", "Just a line.", None, (), "plain"),
    ]
    assert got[0].created_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_markdown_a_damaged_note_is_reported_and_the_others_read(tmp_path: Path) -> None:
    (tmp_path / "bad-yaml.md").write_text("---\ntags: [unclosed\n---\nbody\n")
    (tmp_path / "binary.md").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "empty.md").write_text("\n\n")
    (tmp_path / "good.md").write_text("Fine.\n")

    entries = list(markdown.read(tmp_path))

    assert [i.content for i in items(entries)] == ["Fine."]
    assert [p for p, _ in problems(entries)] == ["bad-yaml.md", "binary.md", "empty.md"]


def test_markdown_a_long_note_becomes_parts_sharing_its_path(tmp_path: Path) -> None:
    body = "".join(f"# Part {n}\n\n" + "text " * 400 + "\n\n" for n in range(4))
    (tmp_path / "long.md").write_text(body)

    got = items(list(markdown.read(tmp_path)))

    assert len(got) > 1 and {i.path for i in got} == {"long"}
    assert [i.position for i in got] == [f"long.md, part {n + 1}" for n in range(len(got))]
    assert "\n\n".join(i.content for i in got) == body.strip("\n")


def test_markdown_refuses_a_folder_without_notes_and_a_file_of_another_kind(tmp_path: Path) -> None:
    (tmp_path / "data.json").write_text("{}")

    with pytest.raises(WrongFormat, match="no Markdown notes"):
        list(markdown.read(tmp_path))
    with pytest.raises(WrongFormat, match="not a Markdown note"):
        list(markdown.read(tmp_path / "data.json"))


def test_basic_memory_note_keeps_its_observations_and_relations_verbatim(tmp_path: Path) -> None:
    note = (
        "---\ntitle: Coffee Brewing\ntype: note\npermalink: coffee-brewing\ntags:\n- coffee\n- brewing\n---\n\n"
        "# Coffee Brewing\n\n## Observations\n- [method] Pour over gives more flavour #technique\n\n"
        "## Relations\n- relates_to [[Coffee Beans]]\n"
    )
    (tmp_path / "Coffee Brewing.md").write_text(note)

    (got,) = items(list(basic_memory.read(tmp_path)))

    assert got.content == note.split("---\n\n", 1)[1].strip("\n")
    assert (got.kind, got.tags, got.path) == ("note", ("coffee", "brewing"), "coffee-brewing")


# -- mem0 ------------------------------------------------------------------------------------


def test_mem0_get_all_as_documented() -> None:
    got = items(list(mem0.read(FIXTURES / "mem0_get_all_v1.1.json")))

    assert [i.content for i in got] == [
        "User is planning to watch a movie tonight.",
        "User loves sci-fi movies.",
        "User is not a big fan of thriller movies.",
    ]
    assert {(i.kind, i.path) for i in got} == {("movie_recommendations", "mem0/alice")}
    assert got[0].created_at == datetime(2025, 2, 27, 16, 33, 20, 557000, tzinfo=UTC)
    assert got[0].updated_at == datetime(2025, 2, 27, 16, 33, 27, 51000, tzinfo=UTC)
    assert got[1].updated_at == got[1].created_at


def test_mem0_a_bare_list_and_a_damaged_memory(tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(
        json.dumps([{"memory": "kept", "agent_id": "bot"}, {"memory": ""}, {"memory": "bad", "created_at": "x"}])
    )

    entries = list(mem0.read(path))

    assert [(i.content, i.path) for i in items(entries)] == [("kept", "mem0/bot")]
    assert [p for p, _ in problems(entries)] == ["memory 2", "memory 3"]


def test_mem0_refuses_json_of_another_shape(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"memories": [{"content": "a"}]}')

    with pytest.raises(WrongFormat, match="not mem0's get_all output"):
        list(mem0.read(path))


# -- mcp-memory-service ----------------------------------------------------------------------


def test_mcp_memory_service_database_skips_deleted_memories(tmp_path: Path) -> None:
    db = tmp_path / "sqlite_vec.db"
    with sqlite3.connect(db) as connection:
        # the table as mcp-memory-service 12.4.0 creates it (storage/mixins/migrations.py); its store
        # writes tags joined by commas (storage/mixins/store.py)
        connection.execute(
            "CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT UNIQUE,"
            " content TEXT NOT NULL, tags TEXT, memory_type TEXT, metadata TEXT, created_at REAL, updated_at REAL,"
            " created_at_iso TEXT, updated_at_iso TEXT, deleted_at REAL DEFAULT NULL)"
        )
        connection.executemany(
            "INSERT INTO memories (content, tags, memory_type, created_at, updated_at, deleted_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                ("Deploys go out on Tuesdays", "ops,release", "decision", 1700000000.0, 1700000100.0, None),
                ("gone", "", "note", 1700000000.0, 1700000000.0, 1700000500.0),
                ("", "x", "note", 1700000000.0, None, None),
            ],
        )
    connection.close()

    entries = list(mcp_memory_service.read(db))

    (got,) = items(entries)
    assert (got.content, got.kind, got.tags, got.path) == (
        "Deploys go out on Tuesdays",
        "decision",
        ("ops", "release"),
        "mcp-memory-service",
    )
    assert got.created_at == datetime.fromtimestamp(1700000000, UTC)
    assert problems(entries) == [("row 3", "no text in its 'content' field")]


def test_mcp_memory_service_json_export_and_foreign_sqlite(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"export_metadata": {}, "memories": [{"content": "a", "tags": ["t"]}]}))
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE notes (body TEXT)").connection.close()

    assert [(i.content, i.tags) for i in items(list(mcp_memory_service.read(export)))] == [("a", ("t",))]
    with pytest.raises(WrongFormat, match="without mcp-memory-service's memories table"):
        list(mcp_memory_service.read(other))


# -- jsonl and csv with a field map ----------------------------------------------------------


def test_jsonl_with_a_field_map(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(
        '{"text": "one", "labels": ["a", "b"], "folder": "f", "ts": 1700000000}\n'
        "not json\n"
        '{"text": "two", "labels": "c, d"}\n'
    )

    entries = list(tables.read_jsonl(path, {"content": "text", "tags": "labels", "path": "folder", "created_at": "ts"}))

    assert [(i.content, i.tags, i.path) for i in items(entries)] == [
        ("one", ("a", "b"), "f"),
        ("two", ("c", "d"), None),
    ]
    assert [p for p, _ in problems(entries)] == ["line 2"]


def test_jsonl_refuses_records_without_the_content_field(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"body": "one"}\n')

    with pytest.raises(WrongFormat, match="--map content=FIELD"):
        list(tables.read_jsonl(path))


def test_csv_rows_by_the_header_a_short_or_long_row_reported(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text('note,kind,tags\n"first, with a comma",fact,"a,b"\nsecond,,\nthird,fact,x,extra\n')

    entries = list(tables.read_csv(path, {"content": "note"}))

    assert [(i.content, i.kind, i.tags) for i in items(entries)] == [
        ("first, with a comma", "fact", ("a", "b")),
        ("second", None, ()),
    ]
    assert [p for p, _ in problems(entries)] == ["row 3"]


def test_csv_refuses_a_header_without_the_content_column(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")

    with pytest.raises(WrongFormat, match="no 'content' column"):
        list(tables.read_csv(path))


def test_a_field_map_names_memory_fields_only() -> None:
    with pytest.raises(ValueError, match="no memory field colour"):
        tables.field_map({"colour": "x"})
