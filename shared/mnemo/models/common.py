"""Field types shared by records and tool arguments (docs/contract.md §2)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, PlainSerializer
from pydantic_core import PydanticCustomError

MAX_CONTENT_BYTES = 4096
MAX_TAGS = 20
MAX_PROJECT_REF = 64
MAX_IDEMPOTENCY_KEY = 255

#: what an API key may do (docs/contract.md §1); ``admin`` includes every other scope
ScopeName = Literal["memory:read", "memory:write", "memory:delete", "admin"]
SCOPE_NAMES: tuple[str, ...] = get_args(ScopeName)

#: a project's slug, unique inside its workspace
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
SLUG_RULE = "1-63 characters of a-z, 0-9 and '-', starting with a letter or digit"

_ULID = "[0-9A-HJKMNP-TV-Z]{26}"
MEMORY_ID_RE = re.compile(f"^mem_{_ULID}$")


class Model(BaseModel):
    """The base of every model. Validators and serialisers are built on a model's first use, not
    when its module is imported: each Lambda function uses only some of the models, and building
    all of them at import added ≈ 34 ms of CPU to every cold start (bench/results/coldstart-built.md)."""

    model_config = ConfigDict(defer_build=True)


def utc_now() -> datetime:
    """Now, in UTC, truncated to the millisecond precision every timestamp carries."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def format_ts(value: datetime) -> str:
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def _to_utc_ms(value: datetime) -> datetime:
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


#: RFC 3339, UTC, millisecond precision on the wire; an offset is required on input.
Timestamp = Annotated[
    AwareDatetime,
    AfterValidator(_to_utc_ms),
    PlainSerializer(format_ts, return_type=str, when_used="json"),
]


def _check_content(value: str) -> str:
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise PydanticCustomError(
            "content_too_large",
            "content is {size} bytes of UTF-8; the limit is {limit}",
            {"size": size, "limit": MAX_CONTENT_BYTES},
        )
    if "\x00" in value:
        raise PydanticCustomError("value_error", "content must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError("value_error", "content must be valid Unicode text") from None
    return value


def _dedupe(tags: list[str]) -> list[str]:
    return list(dict.fromkeys(tags))


def _no_controls(value: str) -> str:
    if any(ord(c) < 32 for c in value):
        raise PydanticCustomError("value_error", "control characters are not allowed here")
    return value


Content = Annotated[
    str,
    Field(min_length=1, description="The memory text, 1 to 4096 bytes of UTF-8, stored verbatim."),
    AfterValidator(_check_content),
]
Kind = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="Caller-defined category, e.g. insight, decision, fact; `working` marks active working state.",
    ),
    AfterValidator(_no_controls),
]
Tag = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_no_controls)]
Tags = Annotated[
    list[Tag],
    Field(max_length=MAX_TAGS, description="Up to 20 tags of 1-64 characters; duplicates dropped, order kept."),
    AfterValidator(_dedupe),
]
Path = Annotated[
    str,
    Field(min_length=1, max_length=512, description="Logical location, e.g. `acme/pricing/decisions`."),
    AfterValidator(_no_controls),
]
TeamId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="A team id: only keys of that team (and admin keys) see its memories.",
    ),
]
Source = Annotated[str, Field(min_length=1, max_length=128, description="Who wrote it."), AfterValidator(_no_controls)]
MemoryId = Annotated[
    str,
    Field(pattern=MEMORY_ID_RE.pattern, description="A memory's id (mem_…)."),
]
ProjectRefArg = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PROJECT_REF,
        description="Project slug or id; defaults to X-Project, the key's project, then the workspace default.",
    ),
]
Slug = Annotated[str, Field(pattern=SLUG_PATTERN, description=SLUG_RULE[0].upper() + SLUG_RULE[1:] + ".")]
