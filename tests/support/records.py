"""The one builder of stored records for tests (and benches) that write a ``MemoryRecord`` past the
service, straight into a port or a pure function. No pytest: ``bench/`` may import it too.

    memory_record("Bob is allergic to peanuts")                   # ws_1 / prj_1, source "test", version 1, at NOW
    memory_record("note", scope=scope, at=past, expires_at=past)  # a Scope, or anything with the two ids
    memory_record("x", id="mem_01ARZ3NDEKTSV4RRFFQ69G5F01", updated_at=NOW - timedelta(minutes=3))

Timestamps are fixed (``NOW``) unless given; ids are fresh (``memory_id()``: unique and sorted by
creation time, as the service makes them) unless given, since most tests store several records.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mnemo.ids import memory_id
from mnemo.models.records import MemoryRecord

#: the default time of a built record (created and last changed)
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def memory_record(content: str = "memory", *, scope: Any = None, at: datetime = NOW, **fields: Any) -> MemoryRecord:
    """A version-1 record of ``content`` created and last changed ``at``; ``scope`` (anything with
    ``workspace_id`` and ``project_id``) places it, else ws_1 / prj_1; ``fields`` override any
    field (``id``, ``kind``, ``version``, ``updated_at``, ``embedding``, …)."""
    values: dict[str, Any] = {
        "id": memory_id(),
        "workspace_id": "ws_1" if scope is None else scope.workspace_id,
        "project_id": "prj_1" if scope is None else scope.project_id,
        "content": content,
        "source": "test",
        "version": 1,
        "created_at": at,
        "updated_at": at,
    }
    values.update(fields)
    return MemoryRecord(**values)
