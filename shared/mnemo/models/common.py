"""Field types shared by records and tool arguments (docs/contract.md §2)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema
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


def is_none(value: object) -> bool:
    """A field left out of the answer when it is null (``Field(exclude_if=is_none)``)."""
    return value is None


def is_empty(value: object) -> bool:
    """A field left out of the answer when it is empty or zero (``Field(exclude_if=is_empty)``)."""
    return not value


def utc_now() -> datetime:
    """Now, in UTC, truncated to the millisecond precision every timestamp carries."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def format_ts(value: datetime) -> str:
    """RFC 3339 in UTC with milliseconds; the year always has four digits (``strftime("%Y")``
    writes year 5 as ``5`` on Linux), so the strings sort as the instants do."""
    v = value.astimezone(UTC)
    return (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
        f".{v.microsecond // 1000:03d}Z"
    )


#: the instants a timestamp may name: every one RFC 3339 can write in UTC (a four-digit year)
TIMESTAMP_MIN = datetime(1, 1, 1, tzinfo=UTC)
TIMESTAMP_MAX = datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
TIMESTAMP_RULE = (
    "an RFC 3339 date-time with an offset, e.g. `2030-01-31T12:00:00Z`, between 0001-01-01T00:00:00Z and "
    "9999-12-31T23:59:59.999Z once converted to UTC (kept to the millisecond)"
)

# RFC 3339 §5.6: full-date "T" partial-time time-offset ("T" and "Z" in either case, ASCII digits)
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)

_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-5][0-9]\.[0-9]{3}Z")


def _timestamp_error(reason: str) -> PydanticCustomError:
    return PydanticCustomError(
        "timestamp", "{reason}; a timestamp is {rule}", {"reason": reason, "rule": TIMESTAMP_RULE}
    )


def to_timestamp(value: object) -> datetime:
    """``value`` (an RFC 3339 string, or an aware datetime) as a UTC datetime of millisecond
    precision inside [TIMESTAMP_MIN, TIMESTAMP_MAX], or a validation error (400) — never an
    overflow: the conversion to UTC is range-checked before any other arithmetic."""
    if isinstance(value, str) and _CANONICAL.fullmatch(value):  # what format_ts writes: every stored one
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise _timestamp_error("no such date or time") from None
    if isinstance(value, str):
        found = _RFC3339.fullmatch(value)
        if found is None:
            raise _timestamp_error("not an RFC 3339 date-time")
        if found.group(6) == "60":
            raise _timestamp_error("leap seconds (:60) are not supported")
        if found.group(8) is not None and (found.group(9) > "23" or found.group(10) > "59"):
            raise _timestamp_error("the offset is not ±00:00 to ±23:59")
        try:
            # the grammar is checked above; fromisoformat (C) reads it, fractions of any length
            value = datetime.fromisoformat(value.upper())
        except ValueError:
            raise _timestamp_error("no such date or time") from None
    elif not isinstance(value, datetime):
        raise _timestamp_error("not a string")
    offset = value.utcoffset()
    if offset is None:
        raise _timestamp_error("the time has no offset")
    if offset:
        try:
            value = value.astimezone(UTC)
        except OverflowError:
            raise _timestamp_error("out of range") from None
    elif value.tzinfo is not UTC:
        value = value.replace(tzinfo=UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


#: RFC 3339, UTC, millisecond precision on the wire; an offset is required on input, and the
#: instant must lie in [TIMESTAMP_MIN, TIMESTAMP_MAX] (see ``to_timestamp``). Every timestamp
#: argument uses this type (``expires_at`` today, any later time filter too), so no argument
#: reaches arithmetic unchecked.
Timestamp = Annotated[
    datetime,
    BeforeValidator(to_timestamp),
    PlainSerializer(format_ts, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
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


def no_controls(value: str) -> str:
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
    AfterValidator(no_controls),
]
Tag = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(no_controls)]
Tags = Annotated[
    list[Tag],
    Field(max_length=MAX_TAGS, description="Up to 20 tags of 1-64 characters; duplicates dropped, order kept."),
    AfterValidator(_dedupe),
]
Path = Annotated[
    str,
    Field(min_length=1, max_length=512, description="Logical location, e.g. `acme/pricing/decisions`."),
    AfterValidator(no_controls),
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
#: the characters of a session id (shared with the hook, mnemo.hook.events.SESSION_CHARS)
SESSION_CHARS = "A-Za-z0-9_.:@/+=#-"
#: the longest session id (a UUID is 36 characters; a host's conversation id fits with room to spare)
MAX_SESSION = 128
SessionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_SESSION,
        pattern=f"^[{SESSION_CHARS}]+$",
        description="The host's session or conversation id: 1-128 of `A-Z a-z 0-9 _ . : @ / + = # -`.",
    ),
]
Source = Annotated[str, Field(min_length=1, max_length=128, description="Who wrote it."), AfterValidator(no_controls)]
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
