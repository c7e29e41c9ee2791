"""Any folder of Markdown notes (``*.md``, read recursively in name order), or one note.

A note is one memory (cut on its own headings or paragraphs when over 4,096 bytes, each part with
the note's path): content the note's text without its YAML frontmatter and the blank lines around
it; from the frontmatter, when it has them, ``kind``, ``tags`` (a list or a comma-separated string),
``path`` (``path: null``: none), ``created``/``created_at`` and ``modified``/``updated_at``. Without
them: no kind, no tags, the note's path in the folder without ``.md`` as path, the file's
modification time as both times.
This is the shape ``mnemo export --format markdown`` writes, so an export reads back as it was."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemo.importers import Entry, Item, Problem, WrongFormat, relative, timestamp
from mnemo.importers.split import split

FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)

#: frontmatter, the note's path in the folder (no ``.md``), the file's mtime -> fields of the memory
Mapping = Callable[[dict[str, Any], str, datetime], dict[str, Any]]


def notes(path: Path, source: str) -> list[Path]:
    if path.is_file():
        if path.suffix.lower() != ".md":
            raise WrongFormat(f"{path} is not a Markdown note (.md): {source} reads a folder of them")
        return [path]
    if not path.is_dir():
        raise WrongFormat(f"{path} is neither a folder nor a Markdown note")
    found = sorted(p for p in path.rglob("*.md") if p.is_file() and not _hidden(p.relative_to(path)))
    if not found:
        raise WrongFormat(f"{path} holds no Markdown notes (*.md): nothing for {source} to read")
    return found


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts)


def frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The note's YAML frontmatter (empty without one) and its body. ValueError when the
    frontmatter is not a YAML mapping."""
    import yaml

    match = FRONTMATTER.match(text)
    if match is None:
        return {}, text
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ValueError(f"its frontmatter is not YAML ({str(exc).splitlines()[0]})") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ValueError("its frontmatter is not a YAML mapping")
    return meta, text[match.end() :]


def tag_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if isinstance(value, list):
        return tuple(str(t).strip() for t in value if str(t).strip())
    raise ValueError(f"tags are {type(value).__name__}, not a list")


def first(meta: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if meta.get(key) not in (None, ""):
            return meta[key]
    return None


def given_path(meta: dict[str, Any], rel: str, *others: str) -> str | None:
    """The frontmatter's ``path`` — none when it says ``path: null``, as ``mnemo export`` writes for
    a memory without one —, else the first of ``others`` it has, else the note's place."""
    if "path" in meta:
        return str(meta["path"]) if meta["path"] not in (None, "") else None
    return str(first(meta, *others) or rel) if others else rel


def plain(meta: dict[str, Any], rel: str, mtime: datetime) -> dict[str, Any]:
    kind = first(meta, "kind")
    created = timestamp(first(meta, "created_at", "created")) or mtime
    return {
        "kind": str(kind) if kind is not None else None,
        "tags": tag_list(meta.get("tags")),
        "path": given_path(meta, rel),
        "created_at": created,
        "updated_at": timestamp(first(meta, "updated_at", "modified")) or created,
    }


def read_notes(path: Path, source: str, mapping: Mapping) -> Iterator[Entry]:
    root = path if path.is_dir() else path.parent
    for note in notes(path, source):
        where = relative(note, root)
        try:
            text = note.read_bytes().decode("utf-8")
            meta, body = frontmatter(text)
            mtime = datetime.fromtimestamp(note.stat().st_mtime, UTC)
            fields = mapping(meta, where.removesuffix(".md").removesuffix(".MD"), mtime)
        except UnicodeDecodeError as exc:
            yield Problem(where, f"not UTF-8 (byte {exc.start})")
            continue
        except (ValueError, TypeError, OSError) as exc:
            yield Problem(where, str(exc))
            continue
        parts = split(body)
        if not parts:
            yield Problem(where, "the note is empty")
            continue
        for index, part in enumerate(parts):
            yield Item(where if len(parts) == 1 else f"{where}, part {index + 1}", part, **fields)


def read(path: Path) -> Iterator[Entry]:
    return read_notes(path, "markdown", plain)
