"""Arguments and results of every tool (SPEC §3). These models validate requests on both
surfaces and generate the OpenAPI document and the MCP tool schemas."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemo.models.common import (
    Content,
    Kind,
    MemoryId,
    Path,
    ProjectRefArg,
    Source,
    Tags,
    TeamId,
    Timestamp,
)
from mnemo.models.records import Memory


class Args(BaseModel):
    """Base of tool arguments: unknown fields are an error, so typos never pass silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    project: ProjectRefArg | None = None


class ProjectRef(BaseModel):
    id: str
    slug: str


class Result(BaseModel):
    project: ProjectRef


# ---- memory_* -------------------------------------------------------------------------------


class MemoryAddArgs(Args):
    content: Content
    kind: Kind | None = None
    tags: Tags = Field(default_factory=list)
    path: Path | None = None
    team_id: TeamId | None = None
    source: Source | None = Field(default=None, description="Who wrote it; defaults to the key's label.")
    expires_at: Timestamp | None = Field(
        default=None, description="RFC 3339 time after which the memory is gone for every read; must be in the future."
    )
    idempotency_key: Annotated[str, Field(min_length=1, max_length=255)] | None = Field(
        default=None,
        description="Makes retries safe (MCP; over REST use the Idempotency-Key header): the same key with the "
        "same arguments returns the first result and writes nothing.",
    )


class MemoryUpdateArgs(Args):
    id: MemoryId
    content: Content | None = None
    kind: Kind | None = None
    tags: Tags | None = None
    path: Path | None = None
    expires_at: Timestamp | None = None
    if_version: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Only update when the memory is still at this version (else 409 conflict)."
    )


class MemoryIdArgs(Args):
    id: MemoryId


class MemorySearchArgs(Args):
    q: Annotated[str, Field(max_length=4096)] = Field(
        default="", description="Full-text query: every term must match. Empty lists the most recently updated."
    )
    kind: Kind | None = Field(default=None, description="Exact kind.")
    tags: Tags | None = Field(default=None, description="Only memories that have all of these tags.")
    limit: Annotated[int, Field(ge=1, le=100)] = 50


class MemoryResult(Result):
    memory: Memory


class MemoriesResult(Result):
    memories: list[Memory]


class DeletedRef(BaseModel):
    id: str


class DeleteResult(Result):
    deleted: DeletedRef


# ---- retrieval family -----------------------------------------------------------------------

LikePattern = Annotated[
    str,
    Field(
        min_length=1,
        max_length=512,
        description="Case-insensitive LIKE pattern: `%` any run, `_` one character, `\\` escapes.",
    ),
]
Query = Annotated[str, Field(min_length=1, max_length=4096, description="What to look for.")]


class RetrievalArgs(Args):
    query: Query
    path_filter: LikePattern = "%"
    memory_type: LikePattern = Field(default="%", description="LIKE pattern over the memory's kind.")
    prefer_working: bool = Field(default=False, description="Rank memories of kind `working` first.")


class SearchMemoryArgs(RetrievalArgs):
    limit: Annotated[int, Field(ge=1, le=50)] = 5
    explain: bool = False
    team_id: TeamId | None = Field(default=None, description="Narrow to one of the key's teams.")


class RecallArgs(RetrievalArgs):
    limit: Annotated[int, Field(ge=1, le=50)] = 5
    explain: bool = False


class RecallContextArgs(RetrievalArgs):
    max_items: Annotated[int, Field(ge=1, le=100)] = 10
    max_tokens: Annotated[int, Field(ge=1, le=50000)] = 2000
    output_json: bool = False


class Explanation(BaseModel):
    matched_terms: list[str]
    unmatched_terms: list[str] = Field(default_factory=list)
    fields: dict[str, list[str]] = Field(description="Which terms matched in which field.")
    rank: int
    reason: str


class RetrievalItem(BaseModel):
    reference: str
    location: str | None
    content: str
    kind: str | None
    tags: list[str]
    score: float
    updated_at: Timestamp
    explanation: Explanation | None = None


class NoMatch(BaseModel):
    reason: str


class RetrievalResult(Result):
    matched: bool
    results: list[RetrievalItem]
    no_match: NoMatch | None = None


class ContextItem(BaseModel):
    reference: str
    location: str | None
    kind: str | None
    tags: list[str]
    content: str
    tokens: int
    truncated: bool = False


class RecallContextResult(Result):
    context: str | None = None
    items: list[ContextItem] | None = None
    references: list[str]
    used_tokens: int
    truncated: bool


class ForgetArgs(Args):
    reference: MemoryId
    reason: Annotated[str, Field(max_length=1024)] | None = None


class ForgottenRef(BaseModel):
    reference: str


class ForgetResult(Result):
    forgotten: ForgottenRef


# ---- errors ---------------------------------------------------------------------------------


class ErrorBody(BaseModel):
    message: str
    code: Literal[
        "invalid_request",
        "unauthorized",
        "forbidden",
        "not_found",
        "conflict",
        "content_too_large",
        "rate_limited",
        "unavailable",
        "internal",
    ]
    details: list[dict[str, object]] | None = None
    retry_after: int | None = None
