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

from mnemo.like import MAX_LIKE_ANY_ONE_AFTER_RUN, MAX_LIKE_ANY_RUNS, MAX_LIKE_LENGTH, like_problem
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
    expires_at: Timestamp | None = Field(
        default=None, description="RFC 3339 time, in the future, after which the memory is gone."
    )
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
    expires_at: Timestamp | None = Field(default=None, description="New RFC 3339 expiry time, in the future.")
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


def _updated_after() -> Any:
    return Field(default=None, description="At or after (RFC 3339).")


def _updated_before() -> Any:
    return Field(default=None, description="Before (RFC 3339).")


def _window_order(value: datetime | None, info: ValidationInfo) -> datetime | None:
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
    updated_after: Timestamp | SkipJsonSchema[None] = _updated_after()
    updated_before: Timestamp | SkipJsonSchema[None] = _updated_before()
    include_superseded: bool = Field(default=False, description="Also superseded ones.")

    _window = field_validator("updated_before")(_window_order)


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


# ---- retrieval family -----------------------------------------------------------------------


def _is_none(value: object) -> bool:
    return value is None


def _is_empty(value: object) -> bool:
    return not value


def _check_like(value: str) -> str:
    problem = like_problem(value)
    if problem is not None:
        raise PydanticCustomError("value_error", problem)
    return value


#: the bounds of a pattern, short, for the fields' own descriptions (an agent reads them every session)
LIKE_BOUNDS = (
    f"1-{MAX_LIKE_LENGTH} characters, at most {MAX_LIKE_ANY_RUNS} `%`, "
    f"at most {MAX_LIKE_ANY_ONE_AFTER_RUN} `_` after the first `%`"
)

LikePattern = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_LIKE_LENGTH,
        description="Case-insensitive LIKE pattern: `%` any run, `_` one character, `\\` makes the next character "
        f"literal (`\\%`, `\\_`, `\\\\`). A memory with no value matches as the empty string. {LIKE_BOUNDS}.",
    ),
    AfterValidator(_check_like),
]
Query = Annotated[
    str,
    Field(max_length=4096, description="Words to look for, any language; empty: what changed, newest first."),
]


#: an IANA time zone name; the service refuses one it cannot find (docs/retrieval.md)
Zone = Annotated[str, Field(min_length=1, max_length=64)]


class RetrievalArgs(Args):
    query: Query = ""
    path_filter: LikePattern = Field(
        default="%",
        description=f"LIKE over the path, any case: `%` any run (max {MAX_LIKE_ANY_RUNS}), `_` one char "
        f"(max {MAX_LIKE_ANY_ONE_AFTER_RUN} after `%`), `\\` escapes.",
    )
    memory_type: LikePattern = Field(default="%", description="As path_filter, over the kind.")
    prefer_working: bool = Field(default=False, description="Rank kind `working` first.")
    session: SessionFilter | SkipJsonSchema[None] = Field(default=None, description="Only this session's.")
    # optional, never null in the schema (tools/list is read at every session start: bytes count)
    updated_after: Timestamp | SkipJsonSchema[None] = _updated_after()
    updated_before: Timestamp | SkipJsonSchema[None] = _updated_before()
    # terse: tools/list is read at every session start; docs/retrieval.md says the rest
    parse_time: bool = Field(default=True, description="Time words in query as a window.")
    tz: Zone = Field(default="UTC", description="IANA zone for them.")
    include_superseded: bool = Field(default=False, description="Also superseded ones.")

    _window = field_validator("updated_before")(_window_order)


class SearchMemoryArgs(RetrievalArgs):
    query: Annotated[
        str,
        Field(
            max_length=4096,
            description="Words that must all occur; empty only with updated_after/before.",
        ),
    ] = ""
    limit: Annotated[int, Field(ge=1, le=50)] = Field(default=5, description="At most this many results.")
    explain: bool = Field(default=False, description="Per result: which words matched where, why it ranks there.")
    team_id: TeamId | SkipJsonSchema[None] = Field(
        default=None, description="Only memories of this team (one of yours)."
    )


RecallMode = Literal["lexical", "semantic", "hybrid"]


def _mode() -> Any:
    return Field(
        default="hybrid",
        description="Find by words, meaning or both (hybrid).",
    )


class RecallArgs(RetrievalArgs):
    limit: Annotated[int, Field(ge=1, le=50)] = Field(default=5, description="At most this many results.")
    explain: bool = Field(default=False, description="Per result: which words matched where, why it ranks there.")
    mode: RecallMode = _mode()


class RecallContextArgs(RetrievalArgs):
    max_items: Annotated[int, Field(ge=1, le=100)] = Field(default=10, description="At most this many memories.")
    max_tokens: Annotated[int, Field(ge=1, le=50000)] = Field(
        default=2000,
        description="Tokens for the block: a CJK char 1, other non-ASCII 1/2, ASCII 1/4.",
    )
    output_json: bool = Field(default=False, description="Return the packed records as `items` instead of `context`.")
    mode: RecallMode = _mode()


class MatchedFields(Model):
    """Which query terms matched in which field of the memory."""

    content: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    path: list[str] = Field(default_factory=list)


class Explanation(Model):
    matched_terms: list[str] = Field(
        description="Query terms found in the memory, as analysed (CJK text is matched as overlapping character "
        "pairs, so `数据库` is the terms `数据` and `据库`)."
    )
    unmatched_terms: list[str] = Field(default_factory=list)
    fields: MatchedFields
    via_stem: dict[str, list[str]] = Field(
        default_factory=dict,
        exclude_if=_is_empty,
        description="Present when query terms matched only through their stem (another inflection of the word): "
        'each with the memory\'s words it matched, e.g. `{"deployments": ["deploys"]}`.',
    )
    matched_by: Literal["words", "meaning", "both", "context"] = Field(
        default="words",
        description="How the memory was found: by its words, by its meaning (the query's vector is near its own), "
        "both, or only through the memories saved just before and after it (recall's context).",
    )
    similarity: float | None = Field(
        default=None,
        exclude_if=_is_none,
        description="Cosine of the query's and the memory's vectors, when it was found by meaning.",
    )
    rank: int = Field(description="1-based position in the results.")
    reason: str = Field(description="Why the memory ranks where it does.")


class RetrievalItem(Model):
    reference: str = Field(description="The memory's id: pass it to memory_get, memory_update or forget.")
    location: str | None = Field(description="The memory's path.")
    content: str
    kind: str | None
    tags: list[str]
    score: float = Field(
        description="Higher is better, comparable within one answer only: the index's relevance (words), the "
        "cosine (`mode` semantic), or (`mode` hybrid) the fused weight: the words' calibrated score or the "
        "weighted similarity, the larger."
    )
    updated_at: Timestamp
    supersedes: list[str] = Field(
        default_factory=list, exclude_if=_is_empty, description="The memories this one replaced (present when any)."
    )
    superseded_by: str | None = Field(
        default=None, exclude_if=_is_none, description="Present when superseded (include_superseded): by which memory."
    )
    explanation: Explanation | None = Field(default=None, exclude_if=_is_none, description="Only with explain.")


NoMatchCause = Literal[
    "no_terms",
    "no_term_matched",
    "term_missing",
    "split_across_memories",
    "filtered_out",
    "nothing_listed",
    "nothing_similar",
]


class NoMatch(Model):
    reason: str = Field(description="Why nothing matched, in words.")
    cause: NoMatchCause = Field(
        description="`no_terms`: the query has no searchable words; `no_term_matched`: no memory contains any term; "
        "`term_missing`: some terms occur in no memory; `split_across_memories`: every term occurs, but no single "
        "memory holds them all; `filtered_out`: memories match the terms but the filters, team or time window exclude "
        "them; `nothing_listed`: the query was empty and no memory passes the filters and the time window; "
        "`nothing_similar`: (`mode` semantic) no memory's meaning is near enough the query's."
    )
    missing_terms: list[str] = Field(default_factory=list, description="Query terms no memory contains.")


class TimeWindow(Model):
    """The time window read in the query (docs/retrieval.md, "Time in the question")."""

    expressions: list[str] = Field(description="The words read as time, as the query wrote them; not search terms.")
    updated_after: Timestamp | None = Field(description="The window's start (RFC 3339 UTC), null when open.")
    updated_before: Timestamp | None = Field(description="The window's end, exclusive; null when open.")
    tz: str = Field(description="The time zone the words were read in.")
    applied: bool = Field(description="True when the answer is limited to the window.")
    note: str = Field(
        description="`window`: the answer is limited to it; `explicit_window`: updated_after/updated_before were "
        "given and win; `window_empty`: no memory of the window matched, so the answer is the one without reading "
        "time (the query as written, no window)."
    )


class RetrievalResult(Result):
    matched: bool
    results: list[RetrievalItem]
    no_match: NoMatch | None = Field(
        default=None, exclude_if=_is_none, description="Present when matched is false: why nothing matched."
    )
    time_window: TimeWindow | None = Field(
        default=None, exclude_if=_is_none, description="Present when the query held time words (parse_time)."
    )


class ContextItem(Model):
    reference: str
    location: str | None
    kind: str | None
    tags: list[str]
    content: str = Field(description="The memory's text; when cut to fit, it ends with `…[truncated]`.")
    tokens: int = Field(description="Estimated tokens of this item as it appears in the text block, header included.")
    truncated: bool = False
    supersedes: list[str] = Field(
        default_factory=list, exclude_if=_is_empty, description="The memories this one replaced (present when any)."
    )
    superseded_by: str | None = Field(
        default=None, exclude_if=_is_none, description="Present when superseded (include_superseded): by which memory."
    )


class RecallContextResult(Result):
    context: str | None = Field(
        default=None, exclude_if=_is_none, description="The prompt-ready block (absent with output_json)."
    )
    items: list[ContextItem] | None = Field(
        default=None, exclude_if=_is_none, description="The packed records (only with output_json)."
    )
    references: list[str] = Field(description="The packed memories' ids, in rank order.")
    used_tokens: int = Field(description="Estimated tokens of the text block; never over max_tokens.")
    truncated: bool = Field(description="True when the token budget cut a memory or left ranked memories out.")
    no_match: NoMatch | None = Field(default=None, exclude_if=_is_none, description="Why nothing was recalled.")
    time_window: TimeWindow | None = Field(
        default=None, exclude_if=_is_none, description="Present when the query held time words (parse_time)."
    )


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
