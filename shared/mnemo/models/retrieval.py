"""Arguments and results of the retrieval family: ``search_memory``, ``recall`` and ``recall_context``
(docs/contract.md §3, docs/retrieval.md), beside the memory tools' models in ``models.tools``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from mnemo.like import MAX_LIKE_ANY_ONE_AFTER_RUN, MAX_LIKE_ANY_RUNS, MAX_LIKE_LENGTH, like_problem
from mnemo.models.common import Model, TeamId, Timestamp, is_empty, is_none
from mnemo.models.tools import (
    Args,
    Result,
    SessionFilter,
    updated_after_field,
    updated_before_field,
    window_order,
)


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
    updated_after: Timestamp | SkipJsonSchema[None] = updated_after_field()
    updated_before: Timestamp | SkipJsonSchema[None] = updated_before_field()
    # terse: tools/list is read at every session start; docs/retrieval.md says the rest
    parse_time: bool = Field(default=True, description="Time words in query as a window.")
    tz: Zone = Field(default="UTC", description="IANA zone for them.")
    include_superseded: bool = Field(default=False, description="Also superseded ones.")

    _window = field_validator("updated_before")(window_order)


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
        exclude_if=is_empty,
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
        exclude_if=is_none,
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
        default_factory=list, exclude_if=is_empty, description="The memories this one replaced (present when any)."
    )
    superseded_by: str | None = Field(
        default=None, exclude_if=is_none, description="Present when superseded (include_superseded): by which memory."
    )
    explanation: Explanation | None = Field(default=None, exclude_if=is_none, description="Only with explain.")


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
        default=None, exclude_if=is_none, description="Present when matched is false: why nothing matched."
    )
    time_window: TimeWindow | None = Field(
        default=None, exclude_if=is_none, description="Present when the query held time words (parse_time)."
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
        default_factory=list, exclude_if=is_empty, description="The memories this one replaced (present when any)."
    )
    superseded_by: str | None = Field(
        default=None, exclude_if=is_none, description="Present when superseded (include_superseded): by which memory."
    )


class RecallContextResult(Result):
    context: str | None = Field(
        default=None, exclude_if=is_none, description="The prompt-ready block (absent with output_json)."
    )
    items: list[ContextItem] | None = Field(
        default=None, exclude_if=is_none, description="The packed records (only with output_json)."
    )
    references: list[str] = Field(description="The packed memories' ids, in rank order.")
    used_tokens: int = Field(description="Estimated tokens of the text block; never over max_tokens.")
    truncated: bool = Field(description="True when the token budget cut a memory or left ranked memories out.")
    no_match: NoMatch | None = Field(default=None, exclude_if=is_none, description="Why nothing was recalled.")
    time_window: TimeWindow | None = Field(
        default=None, exclude_if=is_none, description="Present when the query held time words (parse_time)."
    )
