"""A basic-memory project: a folder of Markdown notes, each with frontmatter (``title``, ``type``,
``permalink``, ``tags``) and a body of text, observations (``- [category] text #tag``) and
relations (``- relates_to [[Other]]``).

A note is one memory (cut on its own headings or paragraphs when over 4,096 bytes, each part with
the note's path): content its body verbatim, observations and relations included, so every word of
them is found by ``recall``; kind its ``type`` (``note`` by default in basic-memory; a ``kind``
written by ``mnemo export`` wins), tags its frontmatter ``tags``, path its ``permalink`` (else its path
in the folder without ``.md``), times ``created``/``modified`` of the frontmatter, else the file's
modification time. Not carried: the note's ``title`` as a field (it is the file name, and
basic-memory writes it as the body's first heading only when the note has one), and the search
index basic-memory keeps in its own SQLite database (rebuilt from these files)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemo.importers import Entry
from mnemo.importers.markdown import first, given_path, plain, read_notes


def mapping(meta: dict[str, Any], rel: str, mtime: datetime) -> dict[str, Any]:
    fields = plain(meta, rel, mtime)
    kind = first(meta, "kind", "type")
    fields["kind"] = str(kind) if kind is not None else None
    fields["path"] = given_path(meta, rel, "permalink")
    return fields


def read(path: Path) -> Iterator[Entry]:
    return read_notes(path, "basic-memory", mapping)
