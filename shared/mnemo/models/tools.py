"""Arguments and results of every tool (docs/contract.md §3). These models validate requests on both
surfaces and generate the OpenAPI document and the MCP tool schemas."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError

from mnemo.models.common import (
    MAX_SESSION,
    MEMORY_ID_RE,
    Content,
    Kind,
    MemoryId,
    Model,
    Path,
    ProjectRefArg,
    SessionId,
    Source,
    Tags,
    TeamId,
    Timestamp,
)
from mnemo.models.records import Memory
from mnemo.text import MAX_QUERY_TERMS


class Args(Model):
    """Base of tool arguments: unknown fields are an error, so typos never pass silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # optional, never null in the schema (tools/list is read at every session start: bytes count)
    project: ProjectRefArg | SkipJsonSchema[None] = Field(
        default=None,
        description="Slug or id (default: yours).",
    )

    @model_validator(mode="before")
    @classmethod
    def _json_scalar_types(cls, data: Any) -> Any:
        """JSON's scalar types as the schemas state them (docs/contract.md §4: wrong types are 400): pydantic's
        lax mode would read ``true`` or ``"10"`` as the integer 1 or 10 and ``"yes"`` or ``1`` as a
        boolean. Integral numbers such as ``10.0`` stay valid integers, as in JSON Schema."""
        if not isinstance(data, Mapping):
            return data
        errors: list[InitErrorDetails] = []
        strict = _strict_fields(cls)
        for name, value in data.items():
            kinds = strict.get(name) if isinstance(name, str) else None
            if kinds is None or value is None:
                continue
            if int in kinds and bool not in kinds and isinstance(value, bool | str):
                errors.append({"type": "int_type", "loc": (name,), "input": value})
            elif bool in kinds and not isinstance(value, bool):
                errors.append({"type": "bool_type", "loc": (name,), "input": value})
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return data


#: each arguments model's fields that admit an int or a bool, and the scalar types each admits
_STRICT_FIELDS: dict[type, dict[str, frozenset[type]]] = {}


def _strict_fields(model: type[BaseModel]) -> dict[str, frozenset[type]]:
    """The fields of ``model`` whose JSON type :meth:`Args._json_scalar_types` checks, worked out
    once per model (walking the annotations on every call cost a tenth of a millisecond per call)."""
    fields = _STRICT_FIELDS.get(model)
    if fields is None:
        fields = {
            name: frozenset(kinds)
            for name, field in model.model_fields.items()
            if (kinds := _scalar_kinds(field.annotation)) & {int, bool}
        }
        _STRICT_FIELDS[model] = fields
    return fields


def _scalar_kinds(annotation: Any) -> set[type]:
    """The scalar types (int, bool, str, …) an annotation admits, through Annotated / Optional."""
    if annotation in (int, bool, str, float):
        return {annotation}
    return {kind for arg in get_args(annotation) for kind in _scalar_kinds(arg)}


class ProjectRef(Model):
    id: str = Field(description="`prj_…`")
    slug: str = Field(description="Unique inside the workspace.")


class Result(Model):
    project: ProjectRef = Field(description="The project the call acted on.")


# ---- memory_* -------------------------------------------------------------------------------


#: at most this many memories one call supersedes
MAX_SUPERSEDES = 20

#: the ids of ``supersedes`` (a memory id without its description: one per item costs tools/list bytes)
_SupersededId = Annotated[str, Field(pattern=MEMORY_ID_RE.pattern)]
Supersedes = Annotated[
    list[_SupersededId], Field(max_length=MAX_SUPERSEDES), AfterValidator(lambda ids: list(dict.fromkeys(ids)))
]


class MemoryAddArgs(Args):
    content: Content
    kind: Kind | SkipJsonSchema[None] = Field(
        default=None, description="Category, e.g. decision, fact, insight; `working`: current work state."
    )
    tags: Tags = Field(default_factory=list)
    path: Path | SkipJsonSchema[None] = Field(
        default=None, description="Logical location, e.g. `acme/pricing/decisions`."
    )
    team_id: TeamId | SkipJsonSchema[None] = Field(default=None, description="Only this team (of yours) will see it.")
    source: Source | SkipJsonSchema[None] = Field(default=None, description="Who wrote it (default: your key's label).")
    session: SessionId | SkipJsonSchema[None] = Field(
        default=None, description="Your session or conversation id: recall links its memories."
    )
    expires_at: Timestamp | None = Field(default=None, description="A future time after which the memory is gone.")
    idempotency_key: Annotated[str, Field(min_length=1, max_length=255)] | SkipJsonSchema[None] = Field(
        default=None,
        description="A retry with the same key and arguments saves nothing twice.",
    )
    allow_duplicate: bool = Field(default=False, description="Save even if one has this content, kind, path and team.")
    supersedes: Supersedes = Field(default_factory=list, description="Ids of the memories it replaces.")


class MemoryUpdateArgs(Args):
    id: MemoryId
    #: optional but never null (a memory always has content); the service answers null with 400
    content: Content | SkipJsonSchema[None] = Field(default=None, description="New text, 1-4096 bytes.")
    kind: Kind | None = Field(default=None, description="New category.")
    tags: Tags | None = Field(default=None, description="New tags, replacing the old ones.")
    path: Path | None = Field(default=None, description="New logical location.")
    expires_at: Timestamp | None = Field(default=None, description="New expiry time, in the future.")
    if_version: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="The version you read: if the memory changed since, nothing changes (conflict)."
    )
    supersedes: Supersedes | SkipJsonSchema[None] = Field(
        default=None, description="Ids of memories this one replaces."
    )


class MemoryIdArgs(Args):
    id: MemoryId


class MemoryHistoryArgs(Args):
    id: MemoryId
    limit: Annotated[int, Field(ge=1, le=100)] = Field(default=20, description="At most this many versions.")


class MemoryVersion(Model):
    version: int
    content: str
    kind: str | None
    tags: list[str]
    path: str | None
    source: str
    updated_at: Timestamp = Field(description="When this version was written.")


#: a ``session`` filter: an exact match, so only its length is bounded here (the schema stays short)
SessionFilter = Annotated[str, Field(min_length=1, max_length=MAX_SESSION)]


def updated_after_field() -> Any:
    return Field(default=None, description="At or after.")


def updated_before_field() -> Any:
    return Field(default=None, description="Before.")


def window_order(value: datetime | None, info: ValidationInfo) -> datetime | None:
    """``updated_before`` must come after ``updated_after`` (an empty window is a mistake)."""
    after = info.data.get("updated_after")
    if value is not None and after is not None and after >= value:
        raise PydanticCustomError("value_error", "updated_before must be later than updated_after")
    return value


class MemorySearchArgs(Args):
    q: Annotated[str, Field(max_length=4096)] = Field(
        default="",
        description=f"Words that must all occur (the first {MAX_QUERY_TERMS} distinct terms count); "
        "empty lists the newest.",
    )
    kind: Kind | SkipJsonSchema[None] = Field(default=None, description="Exact kind.")
    tags: Tags | SkipJsonSchema[None] = Field(default=None, description="Only memories with all of these tags.")
    limit: Annotated[int, Field(ge=1, le=100)] = Field(default=50, description="At most this many memories.")
    session: SessionFilter | SkipJsonSchema[None] = Field(default=None, description="Only this session's.")
    # optional, never null in the schema (tools/list is read at every session start: bytes count)
    updated_after: Timestamp | SkipJsonSchema[None] = updated_after_field()
    updated_before: Timestamp | SkipJsonSchema[None] = updated_before_field()
    include_superseded: bool = Field(default=False, description="Also superseded ones.")

    _window = field_validator("updated_before")(window_order)


class MemoryResult(Result):
    memory: Memory


class SimilarMemory(Model):
    reference: str
    similarity: float
    content: str


class MemoryAddResult(MemoryResult):
    deduplicated: bool = Field(
        default=False,
        description="True when a memory with the same content (any case or spacing), kind, path and team was "
        "there already: it is that memory, and nothing was saved.",
    )
    similar: list[SimilarMemory] = Field(
        default_factory=list,
        description="Up to 3 other memories of the project that share most of its words (similarity 0-1): "
        "if the new memory replaces one, memory_update the new one with supersedes: [that reference].",
    )


class MemoriesResult(Result):
    memories: list[Memory]


class DeletedRef(Model):
    id: str


class MemoryHistoryResult(Result):
    memory: Memory = Field(description="The memory as it is now.")
    versions: list[MemoryVersion] = Field(
        description="Its earlier versions, newest first (at most 50 or 64 KiB of contents are kept)."
    )
    dropped: int = Field(description="How many of its oldest versions were dropped to keep within those bounds.")
    supersedes: list[str] = Field(description="The memories it replaced.")
    superseded_by: list[str] = Field(
        description="The chain of memories that replaced it, each replaced by the next (the last is current)."
    )


class DeleteResult(Result):
    deleted: DeletedRef


class ForgetArgs(Args):
    reference: MemoryId
    reason: Annotated[str, Field(max_length=1024)] | SkipJsonSchema[None] = Field(
        default=None, description="Why (not stored)."
    )


class ForgottenRef(Model):
    reference: str


class ForgetResult(Result):
    forgotten: ForgottenRef


# ---- errors ---------------------------------------------------------------------------------


class ErrorBody(Model):
    message: str
    code: Literal[
        "invalid_request",
        "unauthorized",
        "forbidden",
        "not_found",
        "conflict",
        "content_too_large",
        "secret_detected",
        "rate_limited",
        "unavailable",
        "internal",
    ]
    details: list[dict[str, object]] | None = Field(
        default=None, description="Field errors: `loc` (where), `type` and `msg` of each."
    )
    retry_after: int | None = Field(default=None, description="Seconds to wait (rate limits and outages).")
