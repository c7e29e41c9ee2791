"""mcp-memory-service's stores: the ``sqlite_vec`` backend's database (``sqlite_vec.db``: table
``memories`` with ``content``, ``tags`` — comma-separated —, ``memory_type``, ``created_at`` and
``updated_at`` in POSIX seconds, ``deleted_at`` for a deleted memory) or a JSON export of it (an
object whose ``memories`` is a list of ``{content, tags, memory_type, created_at, updated_at, …}``,
or that list alone).

Each memory is one memory: content verbatim, kind its ``memory_type``, tags its tags, path
``mcp-memory-service``, its times. A memory marked deleted is not carried, nor are the content
hashes, embeddings, the ``untagged`` tag the service puts on a memory given none, the ``metadata``
column, the knowledge-graph table (``memory_graph``) and access counts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mnemo.importers import Entry, Item, Problem, WrongFormat, timestamp
from mnemo.importers.markdown import tag_list
from mnemo.importers.split import split

SQLITE_MAGIC = b"SQLite format 3\x00"
PATH = "mcp-memory-service"
#: the tag mcp-memory-service stores on a memory given none: not the user's, so not carried
UNTAGGED = "untagged"


def read(path: Path) -> Iterator[Entry]:
    if not path.is_file():
        raise WrongFormat(f"{path} is not a file: mcp-memory-service reads its sqlite_vec.db or a JSON export")
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        return _database(path)
    return _export(path)


def _database(path: Path) -> Iterator[Entry]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        columns = {row[1] for row in connection.execute("PRAGMA table_info(memories)")}
    except sqlite3.DatabaseError as exc:
        connection.close()
        raise WrongFormat(f"{path} is not a readable SQLite database ({exc})") from None
    if "content" not in columns:
        connection.close()
        raise WrongFormat(f"{path} is a SQLite database without mcp-memory-service's memories table")
    return _rows(connection, columns)


def _rows(connection: sqlite3.Connection, columns: set[str]) -> Iterator[Entry]:
    wanted = [c for c in ("content", "tags", "memory_type", "created_at", "updated_at", "deleted_at") if c in columns]
    try:
        cursor = connection.execute(f"SELECT rowid, {', '.join(wanted)} FROM memories ORDER BY rowid")
        for row in cursor:
            record = dict(zip(["rowid", *wanted], row, strict=True))
            if record.get("deleted_at") is not None:
                continue
            yield from _item(record, f"row {record['rowid']}")
    finally:
        connection.close()


def _export(path: Path) -> Iterator[Entry]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise WrongFormat(f"{path} is neither mcp-memory-service's SQLite database nor JSON ({exc})") from None
    memories = document.get("memories") if isinstance(document, dict) else document
    if not isinstance(memories, list) or not any(isinstance(m, dict) and "content" in m for m in memories):
        raise WrongFormat(f"{path} is not an mcp-memory-service export: no list of memories with 'content'")
    return (entry for index, m in enumerate(memories) for entry in _item(m, f"memory {index + 1}"))


def _item(record: Any, where: str) -> Iterator[Entry]:
    if not isinstance(record, dict) or not isinstance(record.get("content"), str) or not record["content"].strip():
        yield Problem(where, "no text in its 'content' field")
        return
    try:
        created = timestamp(record.get("created_at"))
        updated = timestamp(record.get("updated_at")) or created
        tags = tuple(t for t in tag_list(record.get("tags") or None) if t != UNTAGGED)
    except (ValueError, TypeError, OverflowError, OSError) as exc:
        yield Problem(where, str(exc))
        return
    kind = record.get("memory_type")
    parts = split(record["content"])
    for n, part in enumerate(parts):
        yield Item(
            where if len(parts) == 1 else f"{where}, part {n + 1}",
            part,
            kind=str(kind) if kind else None,
            tags=tags,
            path=PATH,
            created_at=created,
            updated_at=updated,
        )
