"""JSON Lines and CSV of any tool, read through a field map: which of the record's fields (a JSON
object's keys, a CSV file's header) is the memory's ``content``, ``kind``, ``tags``, ``path``,
``created_at`` and ``updated_at``. Each defaults to the field of its own name; ``content`` must be
there. ``tags`` is a list, or a string of comma-separated tags. Other fields are not carried."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mnemo.importers import Entry, Item, Problem, WrongFormat, json_lines, timestamp
from mnemo.importers.markdown import tag_list
from mnemo.importers.split import split

FIELDS = ("content", "kind", "tags", "path", "created_at", "updated_at")


def field_map(pairs: Mapping[str, str] | None) -> dict[str, str]:
    """The map with every field in it (a field not named maps to itself); ValueError for a name
    that is no memory field."""
    given = dict(pairs or {})
    unknown = sorted(set(given) - set(FIELDS))
    if unknown:
        raise ValueError(f"no memory field {', '.join(unknown)}: the map names {', '.join(FIELDS)}")
    return {name: given.get(name, name) for name in FIELDS}


def item(record: Mapping[str, Any], fields: Mapping[str, str], where: str) -> Iterator[Entry]:
    content = record.get(fields["content"])
    if not isinstance(content, str) or not content.strip():
        yield Problem(where, f"no text in its {fields['content']!r} field")
        return
    try:
        kind = record.get(fields["kind"])
        tags = tag_list(record.get(fields["tags"]) or None)
        path = record.get(fields["path"])
        created = timestamp(record.get(fields["created_at"]))
        updated = timestamp(record.get(fields["updated_at"])) or created
    except (ValueError, TypeError) as exc:
        yield Problem(where, str(exc))
        return
    parts = split(content)
    for index, part in enumerate(parts):
        yield Item(
            where if len(parts) == 1 else f"{where}, part {index + 1}",
            part,
            kind=str(kind) if kind not in (None, "") else None,
            tags=tags,
            path=str(path) if path not in (None, "") else None,
            created_at=created,
            updated_at=updated,
        )


def read_jsonl(path: Path, fields: Mapping[str, str] | None = None) -> Iterator[Entry]:
    mapping = field_map(fields)
    if not path.is_file():
        raise WrongFormat(f"{path} is not a file of JSON lines")

    def entries(record: Any, where: str, first: bool) -> Iterator[Entry]:
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        if first and mapping["content"] not in record:
            raise WrongFormat(
                f"{path}: {where} has no {mapping['content']!r} field; name the content's field with "
                "--map content=FIELD"
            )
        return item(record, mapping, where)

    yield from json_lines(path, "JSON Lines", entries)


def read_csv(path: Path, fields: Mapping[str, str] | None = None) -> Iterator[Entry]:
    mapping = field_map(fields)
    if not path.is_file():
        raise WrongFormat(f"{path} is not a CSV file")
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        rows = csv.DictReader(fh, strict=True)
        try:
            header = rows.fieldnames
        except csv.Error as exc:
            raise WrongFormat(f"{path} is not CSV ({exc})") from None
        if not header or mapping["content"] not in header:
            raise WrongFormat(
                f"{path}: its header ({', '.join(header or [])}) has no {mapping['content']!r} column; "
                "name the content's column with --map content=COLUMN"
            )
        while True:
            try:
                row = next(rows)
            except StopIteration:
                return
            except csv.Error as exc:
                yield Problem(f"line {rows.line_num}", f"not a CSV row ({exc})")
                continue
            where = f"row {rows.line_num - 1}" if rows.line_num else "row"
            if None in row:
                yield Problem(where, f"{len(header) + len(row[None])} cells, the header has {len(header)}")  # type: ignore[index]
                continue
            yield from item(row, mapping, where)
