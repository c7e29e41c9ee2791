"""How memories are kept in DynamoDB: keys, item encoding, and filters (Python and
``FilterExpression``). Shared by the store, the maintenance walks and the stream reader.

Key design (every memory key lives inside its workspace and project):

* ``pk = WS#<ws>#PRJ#<prj>``, ``sk = MEM#<id>``; get by id is one ``GetItem``.
* the local secondary index ``recent`` (``pk``, ``lsi1sk = <updated_at>#<id>``) serves "newest
  first" listings as one ``Query`` — an LSI rather than a GSI because an LSI can be read with
  ``ConsistentRead``, so a listing right after a write sees it (read-your-writes, like SQLite).
* the sparse GSI ``repair`` (``repair_pk = REPAIR#<0-7>``, ``repair_sk = <marked_at>#<id>``) holds
  only records whose index write failed, for the cleanup job to find without a Scan.

Items hold the record's fields as plain attributes (the table stream's images are readable by the
indexer through :func:`record_from_item`), plus ``kind_fold`` for filters, ``ttl`` (epoch seconds)
for DynamoDB's TTL and ``version`` for conditional writes.
"""

from __future__ import annotations

import math
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from mnemo.like import is_match_all, like_matches
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.ports import MemoryFilter, Scope

if TYPE_CHECKING:
    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

RECENT_INDEX = "recent"
REPAIR_INDEX = "repair"
REPAIR_SHARDS = 8
#: a listing reads at most this many items (pages of ``Query``) before it answers with what it has
MAX_LISTING_ITEMS = 5000


@cache
def _codec() -> tuple[TypeSerializer, TypeDeserializer]:
    """boto3's item codec, imported on first use: the indexer's handler imports this module (through
    ``stream``) at cold start, like every handler it builds its boto3 client on its first call."""
    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

    return TypeSerializer(), TypeDeserializer()


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    serializer = _codec()[0]
    return {k: serializer.serialize(v) for k, v in values.items() if v is not None}


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    deserializer = _codec()[1]
    return {k: deserializer.deserialize(v) for k, v in item.items()}


def memory_pk(workspace_id: str, project_id: str) -> str:
    return f"WS#{workspace_id}#PRJ#{project_id}"


def memory_key(scope: Scope, memory_id: str) -> dict[str, Any]:
    return {"pk": {"S": memory_pk(scope.workspace_id, scope.project_id)}, "sk": {"S": f"MEM#{memory_id}"}}


def ttl_seconds(expires_at: datetime | None) -> int | None:
    return math.ceil(expires_at.timestamp()) if expires_at is not None else None


def memory_item(record: MemoryRecord) -> dict[str, Any]:
    updated = format_ts(record.updated_at)
    return to_item(
        {
            "pk": memory_pk(record.workspace_id, record.project_id),
            "sk": f"MEM#{record.id}",
            "lsi1sk": f"{updated}#{record.id}",
            "id": record.id,
            "workspace_id": record.workspace_id,
            "project_id": record.project_id,
            "content": record.content,
            "kind": record.kind,
            "kind_fold": record.kind.casefold() if record.kind is not None else None,
            "tags": list(record.tags),
            "path": record.path,
            "team_id": record.team_id,
            "source": record.source,
            "expires_at": format_ts(record.expires_at) if record.expires_at else None,
            "ttl": ttl_seconds(record.expires_at),
            "version": record.version,
            "created_at": format_ts(record.created_at),
            "updated_at": updated,
        }
    )


_RECORD_FIELDS = tuple(MemoryRecord.model_fields)


def record_from_item(item: dict[str, Any]) -> MemoryRecord:
    """A record from a table item or a stream image (DynamoDB JSON)."""
    values = from_item(item)
    fields = {name: values.get(name) for name in _RECORD_FIELDS if name in values}
    fields["tags"] = list(values.get("tags") or [])
    fields["version"] = int(values["version"])
    return MemoryRecord.model_validate(fields)


def matches(record: MemoryRecord, flt: MemoryFilter) -> bool:
    """The filter in Python: the DynamoDB FilterExpression's twin, plus the LIKE patterns it
    cannot express. Applied to every listed record, so a listing never widens the filter."""
    if record.expired(flt.now) or not flt.in_window(record.updated_at):
        return False
    kind = (record.kind or "").casefold()
    if flt.kind is not None and kind != flt.kind.casefold():
        return False
    if any(tag not in record.tags for tag in flt.tags_all):
        return False
    for pattern, value in ((flt.kind_like, record.kind), (flt.path_like, record.path)):
        if not is_match_all(pattern) and not like_matches(pattern or "%", value):
            return False
    if record.team_id is None:
        return flt.include_unteamed
    return flt.visible_teams is None or record.team_id in flt.visible_teams


def filter_expression(flt: MemoryFilter) -> tuple[str, dict[str, str], dict[str, Any]]:
    names: dict[str, str] = {"#exp": "expires_at"}
    values: dict[str, Any] = {":now": {"S": format_ts(flt.now)}}
    clauses = ["(attribute_not_exists(#exp) OR #exp > :now)"]
    if flt.kind is not None:
        names["#kf"] = "kind_fold"
        values[":kind"] = {"S": flt.kind.casefold()}
        clauses.append("#kf = :kind")
    for i, tag in enumerate(flt.tags_all):
        names["#tags"] = "tags"
        values[f":tag{i}"] = {"S": tag}
        clauses.append(f"contains(#tags, :tag{i})")
    if flt.visible_teams is not None or not flt.include_unteamed:
        names["#team"] = "team_id"
        team_clauses = ["attribute_not_exists(#team)"] if flt.include_unteamed else []
        teams = sorted(flt.visible_teams or ())
        for i, team in enumerate(teams):
            values[f":team{i}"] = {"S": team}
        if teams:
            team_clauses.append(f"#team IN ({', '.join(f':team{i}' for i in range(len(teams)))})")
        clauses.append("(" + (" OR ".join(team_clauses) or "attribute_exists(#never)") + ")")
        if not team_clauses:
            names["#never"] = "__never__"
    return " AND ".join(clauses), names, values
