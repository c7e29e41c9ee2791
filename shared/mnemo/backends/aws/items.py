"""How memories are kept in DynamoDB: keys, item encoding, and filters (Python and
``FilterExpression``). Shared by the store, the maintenance walks and the stream reader.

Key design (every memory key lives inside its workspace and project):

* ``pk = WS#<ws>#PRJ#<prj>``, ``sk = MEM#<id>``; get by id is one ``GetItem``.
* the global secondary index ``recent`` (``pk``, ``recent_sk = <updated_at>#<id>``; sparse: only
  live memories carry ``recent_sk``) serves "newest first" listings. A GSI has no size limit per
  project (an LSI caps a project's items at 10 GB: docs/scale.md), but it is read eventually
  consistently, so a listing merges the project's change log (below) over it.
* the **change log**: every write of a memory first puts a small item
  ``pk = CHG#<ws>#<prj>#<bucket>``, ``sk = <changed_at>#<id>`` (:func:`change_item`;
  ``changed_at`` is the record's ``updated_at`` or the delete's time): the project's changes, in
  partitions of :data:`LOG_BUCKET_S` seconds, gone after :data:`LOG_TTL_S`. Read consistently,
  it names the memories changed in the last minutes; their items (read consistently by key) are
  the truth. No partition key of the table or of an index
  grows with a project: a log partition holds one bucket's writes, and there is no LSI.
* the sparse GSI ``repair`` (``repair_pk = REPAIR#<0-7>``, ``repair_sk = <marked_at>#<id>``) holds
  only records whose index write failed, for the cleanup job to find without a Scan.
* a delete keeps the item as a **delete marker** (:func:`delete_marker_update`): ``deleted``, the
  keys, id and version, and a TTL of :data:`DELETE_MARKER_TTL_S`; the contents are removed and
  the delete's change log entry names it among the project's recent changes (the search adapter
  reads those beside every query: docs/aws.md, "Read your writes"). Reads,
  listings, scans and exports skip markers (:func:`is_marker`); a create may reuse a marker's id.

Items hold the record's fields as plain attributes (the table stream's images are readable by the
indexer through :func:`record_from_item`), plus ``kind_fold`` for filters, ``ttl`` (epoch seconds)
for DynamoDB's TTL and ``version`` for conditional writes.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from mnemo.like import is_match_all, like_matches
from mnemo.models.common import format_ts
from mnemo.models.records import Embedding, MemoryRecord
from mnemo.ports import MemoryFilter, Scope

if TYPE_CHECKING:
    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

RECENT_INDEX = "recent"
REPAIR_INDEX = "repair"
REPAIR_SHARDS = 8
#: a listing reads at most this many items (pages of ``Query``) before it answers with what it has
MAX_LISTING_ITEMS = 5000
#: the change log's partitions: one per project and this many seconds of change time
LOG_BUCKET_S = 300
#: how long a change log entry stays: beyond the longest search window
#: (``search_recent_window_s`` ≤ 3600) and a bucket; reads also bound the window themselves
LOG_TTL_S = 7200
#: a listing merges the changes of this window over the ``recent`` GSI (whose propagation
#: takes well under a second: older changes are in it)
LISTING_WINDOW_S = 60.0
#: the most changes a listing merges (a burst beyond it within the window is merged in part)
MAX_LISTING_CHANGES = 1000
#: how long a delete marker stays (DynamoDB's TTL removes it, up to days late): far beyond the
#: search overlay's window and the stream indexer's reach, so nothing still needs it then
DELETE_MARKER_TTL_S = 3600
#: attributes a delete removes from the item: everything the memory said
_CONTENT_ATTRIBUTES = (
    "content",
    "kind",
    "kind_fold",
    "tags",
    "path",
    "team_id",
    "session",
    "source",
    "expires_at",
    "created_at",
    "updated_at",
    "repair_pk",
    "repair_sk",
    "recent_sk",
    "embedding",
    "embedding_model",
)


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
    item = to_item(
        {
            "pk": memory_pk(record.workspace_id, record.project_id),
            "sk": f"MEM#{record.id}",
            "recent_sk": f"{updated}#{record.id}",
            "id": record.id,
            "workspace_id": record.workspace_id,
            "project_id": record.project_id,
            "content": record.content,
            "kind": record.kind,
            "kind_fold": record.kind.casefold() if record.kind is not None else None,
            "tags": list(record.tags),
            "path": record.path,
            "team_id": record.team_id,
            "session": record.session,
            "source": record.source,
            "expires_at": format_ts(record.expires_at) if record.expires_at else None,
            "ttl": ttl_seconds(record.expires_at),
            "version": record.version,
            "created_at": format_ts(record.created_at),
            "updated_at": updated,
            "supersedes": list(record.supersedes) or None,
            "superseded_by": record.superseded_by,
            "superseded_at": format_ts(record.superseded_at) if record.superseded_at else None,
        }
    )
    item.update(embedding_attributes(record))
    return item


def is_marker(item: dict[str, Any]) -> bool:
    """Whether a table item (or stream image) is a delete marker rather than a memory."""
    return bool(item.get("deleted", {}).get("BOOL"))


def delete_marker_update(scope: Scope, memory_id: str, expected_version: int, now: datetime) -> dict[str, Any]:
    """The ``UpdateItem`` arguments (less the table) that turn the memory at ``expected_version``
    into a delete marker: one write, conditional on the version and on not being deleted."""
    names = {f"#a{i}": name for i, name in enumerate(_CONTENT_ATTRIBUTES)}
    return {
        "Key": memory_key(scope, memory_id),
        "UpdateExpression": "SET #del = :true, deleted_at = :now, #ttl = :ttl REMOVE " + ", ".join(names),
        "ConditionExpression": "#v = :expected AND attribute_not_exists(#del)",
        "ExpressionAttributeNames": {**names, "#del": "deleted", "#ttl": "ttl", "#v": "version"},
        "ExpressionAttributeValues": {
            ":true": {"BOOL": True},
            ":now": {"S": format_ts(now)},
            ":ttl": {"N": str(ttl_seconds(now + timedelta(seconds=DELETE_MARKER_TTL_S)))},
            ":expected": {"N": str(expected_version)},
        },
    }


@dataclass(frozen=True, slots=True)
class RecentChange:
    """One memory among a project's most recent changes: its current record, or None when the
    change was its delete (a marker)."""

    memory_id: str
    version: int
    record: MemoryRecord | None


def recent_change(memory_id: str, item: dict[str, Any] | None) -> RecentChange:
    """The change of ``memory_id`` as its current item shows it (None: removed outright, by TTL)."""
    if item is None or is_marker(item):
        return RecentChange(memory_id, int(item["version"]["N"]) if item else 0, None)
    record = record_from_item(item)
    return RecentChange(record.id, record.version, record)


def log_bucket(at: datetime, bucket_s: int = LOG_BUCKET_S) -> str:
    """The change log partition of a write at ``at``: the start of its ``bucket_s`` seconds."""
    return format_ts(datetime.fromtimestamp(int(at.timestamp()) // bucket_s * bucket_s, UTC))


def log_pk(scope: Scope, bucket: str) -> str:
    return f"CHG#{scope.workspace_id}#{scope.project_id}#{bucket}"


def log_buckets(since: datetime, until: datetime, bucket_s: int = LOG_BUCKET_S) -> list[str]:
    """The change log partitions a window spans, newest first."""
    first = int(since.timestamp()) // bucket_s * bucket_s
    last = int(until.timestamp()) // bucket_s * bucket_s
    return [format_ts(datetime.fromtimestamp(s, UTC)) for s in range(last, first - 1, -bucket_s)]


def change_item(scope: Scope, memory_id: str, at: datetime, bucket_s: int = LOG_BUCKET_S) -> dict[str, Any]:
    """The change log entry of a write of ``memory_id`` at ``at`` (put before the write itself: an
    entry whose write then failed names an unchanged memory, which a reader finds as it is)."""
    return {
        "pk": {"S": log_pk(scope, log_bucket(at, bucket_s))},
        "sk": {"S": f"{format_ts(at)}#{memory_id}"},
        "id": {"S": memory_id},
        "ttl": {"N": str(ttl_seconds(at + timedelta(seconds=LOG_TTL_S)))},
    }


def embedding_attributes(record: MemoryRecord) -> dict[str, Any]:
    """The vector in the item (float32 bytes, 1 KB at 256 dimensions) and its model, so the stream
    indexer indexes it without an embedder."""
    if record.embedding is None:
        return {}
    return {"embedding": {"B": record.embedding.to_bytes()}, "embedding_model": {"S": record.embedding.model}}


_RECORD_FIELDS = tuple(name for name in MemoryRecord.model_fields if name != "embedding")


def record_from_item(item: dict[str, Any]) -> MemoryRecord:
    """A record from a table item or a stream image (DynamoDB JSON; a stream image as Lambda
    delivers it carries binary values in base64)."""
    vector = (item.get("embedding") or {}).get("B")
    values = from_item({k: v for k, v in item.items() if k != "embedding"})
    fields = {name: values.get(name) for name in _RECORD_FIELDS if name in values}
    fields["tags"] = list(values.get("tags") or [])
    fields["version"] = int(values["version"])
    record = MemoryRecord.model_validate(fields)
    model = values.get("embedding_model")
    if vector is not None and model:
        raw = base64.b64decode(vector) if isinstance(vector, str) else bytes(vector)
        record = record.model_copy(update={"embedding": Embedding.from_bytes(str(model), raw)})
    return record


def matches(record: MemoryRecord, flt: MemoryFilter) -> bool:
    """The filter in Python: the DynamoDB FilterExpression's twin, plus the LIKE patterns it
    cannot express. Applied to every listed record, so a listing never widens the filter."""
    if record.expired(flt.now) or not flt.in_window(record.updated_at):
        return False
    if record.superseded_by is not None and not flt.include_superseded:
        return False
    kind = (record.kind or "").casefold()
    if flt.kind is not None and kind != flt.kind.casefold():
        return False
    if any(tag not in record.tags for tag in flt.tags_all):
        return False
    if flt.session is not None and record.session != flt.session:
        return False
    for pattern, value in ((flt.kind_like, record.kind), (flt.path_like, record.path)):
        if not is_match_all(pattern) and not like_matches(pattern or "%", value):
            return False
    if record.team_id is None:
        return flt.include_unteamed
    return flt.visible_teams is None or record.team_id in flt.visible_teams


def filter_expression(flt: MemoryFilter) -> tuple[str, dict[str, str], dict[str, Any]]:
    names: dict[str, str] = {"#exp": "expires_at", "#del": "deleted"}
    values: dict[str, Any] = {":now": {"S": format_ts(flt.now)}}
    clauses = ["attribute_not_exists(#del)", "(attribute_not_exists(#exp) OR #exp > :now)"]
    if not flt.include_superseded:
        names["#sup"] = "superseded_by"
        clauses.append("attribute_not_exists(#sup)")
    if flt.kind is not None:
        names["#kf"] = "kind_fold"
        values[":kind"] = {"S": flt.kind.casefold()}
        clauses.append("#kf = :kind")
    if flt.session is not None:
        names["#ses"] = "session"
        values[":ses"] = {"S": flt.session}
        clauses.append("#ses = :ses")
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
