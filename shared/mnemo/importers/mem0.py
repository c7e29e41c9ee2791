"""mem0's memories as ``Memory.get_all()`` returns them (mem0ai's open-source Python SDK, API
version ``v1.1``, its default: ``{"results": [...]}``; the documented example is in mem0's
docs/open-source/python-quickstart.mdx) or as a bare list (API ``v1.0`` and the platform's v1
``get_all``), saved as JSON:

    {"results": [{"id": "892db2ae-…", "memory": "User is planning to watch a movie tonight.",
                  "hash": "1a27…", "created_at": "2025-02-27T16:33:20.557Z", "updated_at": null,
                  "metadata": {"category": "movie_recommendations"}, "user_id": "alice"}]}

Each item is one memory: content its ``memory`` verbatim, kind its ``metadata.category`` when that
is a string, tags its ``categories`` (the platform's), path ``mem0/`` and its ``user_id`` (else
``agent_id``, ``run_id``), times ``created_at`` and ``updated_at``. Not carried: mem0's ids,
hashes, scores, the rest of ``metadata``, its history database and graph store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mnemo.importers import Entry, Item, Problem, WrongFormat, timestamp
from mnemo.importers.markdown import tag_list
from mnemo.importers.split import split


def read(path: Path) -> Iterator[Entry]:
    if not path.is_file():
        raise WrongFormat(f"{path} is not a file: mem0 reads the JSON get_all returned")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise WrongFormat(f"{path} is not mem0's JSON ({exc})") from None
    items = document.get("results") if isinstance(document, dict) else document
    if not isinstance(items, list) or not any(isinstance(i, dict) and "memory" in i for i in items):
        raise WrongFormat(f"{path} is not mem0's get_all output: no list of memories with a 'memory' field")
    for index, record in enumerate(items):
        where = f"memory {index + 1}"
        if not isinstance(record, dict) or not isinstance(record.get("memory"), str) or not record["memory"].strip():
            yield Problem(where, "no text in its 'memory' field")
            continue
        try:
            yield from _items(record, where)
        except (ValueError, TypeError) as exc:
            yield Problem(where, str(exc))


def _items(record: dict[str, Any], where: str) -> Iterator[Entry]:
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    category = metadata.get("category")  # type: ignore[union-attr]
    owner = next((record[k] for k in ("user_id", "agent_id", "run_id") if record.get(k)), None)
    created = timestamp(record.get("created_at"))
    updated = timestamp(record.get("updated_at")) or created
    tags = tag_list(record.get("categories"))
    parts = split(record["memory"])
    entries = [
        Item(
            where if len(parts) == 1 else f"{where}, part {n + 1}",
            part,
            kind=category if isinstance(category, str) and category else None,
            tags=tags,
            path=f"mem0/{owner}" if owner else "mem0",
            created_at=created,
            updated_at=updated,
        )
        for n, part in enumerate(parts)
    ]
    yield from entries
