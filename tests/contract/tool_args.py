"""Arguments for whichever tools are registered at run time (``service.catalog.TOOLS``), built
from each tool's argument model, so tests written against "every read tool" or "every write
tool" cover tools added later without edits."""

from __future__ import annotations

import json
from typing import Any

from mnemo.service.catalog import TOOLS
from mnemo.service.operations import Operation

#: argument names that carry a memory reference, a query text, a team filter
ID_FIELDS = ("id", "reference")
TEXT_FIELDS = ("q", "query")


def read_tools() -> list[Operation]:
    return [t for t in TOOLS.values() if t.read_only]


def write_tools() -> list[Operation]:
    return [t for t in TOOLS.values() if not t.read_only]


def arguments_for(
    tool: Operation,
    *,
    memory_id: str | None = None,
    text: str | None = None,
    content: str = "a note",
    project: str | None = None,
    team_id: str | None = None,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Arguments naming what is given, for the fields this tool has; other fields keep their
    defaults (so a tool needing something not given answers 400, which tests allow for)."""
    fields = tool.args_model.model_fields
    out: dict[str, Any] = {}
    for name in fields:
        if name in ID_FIELDS and memory_id is not None:
            out[name] = memory_id
        elif name in TEXT_FIELDS and text is not None:
            out[name] = text if (text or name == "q") else "note"
        elif name == "content":
            out[name] = content
        elif name == "project" and project is not None:
            out[name] = project
        elif name == "team_id" and team_id is not None:
            out[name] = team_id
        elif name == "idempotency_key" and idempotency_key is not None:
            out[name] = idempotency_key
    return out


def dumped(result: Any) -> str:
    """A result as the JSON a caller would receive."""
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
