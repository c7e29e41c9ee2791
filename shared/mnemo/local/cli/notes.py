"""``mnemo export --format markdown DIR``: a project as a folder of Markdown notes, one a memory,
that ``mnemo import --from markdown`` (and basic-memory) read back: ``DIR/PATH/ID.md`` (PATH the
memory's path, each segment made safe for a file name; ``_`` without one), YAML frontmatter with
``title``, ``type`` (basic-memory's) and ``kind`` (the kind, when there is one), ``tags``, ``path``,
``source``, ``created_at``, ``updated_at`` and ``id``, then the content verbatim."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from mnemo.models.records import MemoryRecord

UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


def folder(path: str | None) -> Path:
    if not path:
        return Path("_")
    segments = [UNSAFE.sub("_", s).strip(" .")[:80] or "_" for s in path.split("/") if s.strip()]
    return Path(*segments) if segments else Path("_")


def title(content: str) -> str:
    first = next((line for line in content.splitlines() if line.strip()), content)
    return first.strip().lstrip("#").strip()[:80] or "memory"


def note(record: MemoryRecord) -> str:
    import yaml

    meta: dict[str, object] = {"title": title(record.content)}
    if record.kind:
        meta |= {"type": record.kind, "kind": record.kind}
    if record.tags:
        meta["tags"] = list(record.tags)
    meta["path"] = record.path  # null when none: the importer then gives none, not the note's place
    meta |= {
        "source": record.source,
        "created_at": record.model_dump(mode="json")["created_at"],
        "updated_at": record.model_dump(mode="json")["updated_at"],
        "id": record.id,
    }
    head = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{head}---\n\n{record.content}" + ("" if record.content.endswith("\n") else "\n")


def write(records: Iterable[MemoryRecord], root: Path) -> int:
    root.mkdir(parents=True, exist_ok=True)
    count = 0
    for record in records:
        target = root / folder(record.path) / f"{record.id}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(note(record), encoding="utf-8")
        count += 1
    return count
