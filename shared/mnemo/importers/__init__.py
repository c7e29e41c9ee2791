"""Readers of other memory tools' stores, for ``mnemo import --from SOURCE PATH`` (docs/operations.md,
"Moving to Mnemo").

Each source has its own module with one function, ``read(path, **options)``, from a path to a stream
of :class:`Item` (one memory to add, its position in the source) and :class:`Problem` (a line, note or
row that could not be read: reported by position and skipped, the rest is read on). A file of another
format is refused at once: the reader raises :class:`WrongFormat` before it yields anything. The
readers are pure: they never touch a store. What is stored, deduplicated and refused is the
service's business (``mnemo.service.transfer.import_items``), so an import obeys the same limits,
secret check and ``<private>`` stripping as ``memory_add``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Item:
    """One memory as the source holds it: content verbatim, its mapped fields, where it was read."""

    position: str
    content: str
    kind: str | None = None
    tags: tuple[str, ...] = ()
    path: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """A unit of the source that could not be read; the import goes on without it."""

    position: str
    message: str


Entry = Item | Problem


class WrongFormat(Exception):
    """The path is not a store of the source named: refused before anything is read."""


def timestamp(value: Any) -> datetime | None:
    """An RFC 3339 / ISO 8601 string or POSIX seconds as an aware UTC time; None when absent.
    Raises ValueError for a value that is neither."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def json_lines(path: Path, what: str, entries: Callable[[Any, str, bool], Iterator[Entry]]) -> Iterator[Entry]:
    """The entries of a JSON Lines file, one JSON value a line (blank lines skipped), each turned
    into entries by ``entries(value, "line N", first)``. A line that is not JSON, or that
    ``entries`` refuses (ValueError, TypeError, KeyError), is a :class:`Problem` — except the first
    line that holds anything: then the file is of another format (:class:`WrongFormat`, naming
    ``what`` the file is not)."""
    first = True
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"line {number}"
            try:
                found = list(entries(json.loads(line), where, first))
            except (ValueError, TypeError, KeyError) as exc:
                if first:
                    raise WrongFormat(f"{path} is not {what} ({where}: {reason(exc)})") from None
                yield Problem(where, reason(exc))
                continue
            first = False
            yield from found


def reason(exc: Exception) -> str:
    """Why a line could not be read, in a few words."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg})"
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r} field"
    return str(exc)


def reader(source: str) -> Callable[..., Iterator[Entry]]:
    """The ``read`` function of a source (names as ``--from`` takes them)."""
    from mnemo.importers import basic_memory, markdown, mcp_memory_service, mem0, server_memory, table

    readers: dict[str, Callable[..., Iterator[Entry]]] = {
        "server-memory": server_memory.read,
        "mcp-memory-service": mcp_memory_service.read,
        "basic-memory": basic_memory.read,
        "mem0": mem0.read,
        "markdown": markdown.read,
        "jsonl": table.read_jsonl,
        "csv": table.read_csv,
    }
    return readers[source]


SOURCES = ("server-memory", "mcp-memory-service", "basic-memory", "mem0", "markdown", "jsonl", "csv")


def relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else path.name
