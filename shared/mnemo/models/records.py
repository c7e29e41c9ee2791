"""Stored records (docs/contract.md §1–2). The public ``Memory`` is what callers see; ``MemoryRecord`` adds
the tenancy keys a backend needs and never leaves the service."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, SkipValidation

from mnemo.models.common import Model, Timestamp, is_empty, is_none

#: a memory's history keeps at most this many earlier versions, and at most this many bytes of
#: their contents (UTF-8); the oldest go first, and are counted (``MemoryStore.history``)
MAX_VERSIONS = 50
MAX_HISTORY_BYTES = 64 * 1024


class Memory(Model):
    model_config = ConfigDict(frozen=True)

    id: str = Field(description="`mem_` + a 26-character ULID (sorts by creation time): the memory's reference.")
    content: str = Field(description="The text, verbatim as written.")
    kind: str | None = Field(default=None, description="The caller's category; `working` marks active working state.")
    tags: list[str] = Field(default_factory=list, description="Tags in the order given, without duplicates.")
    path: str | None = Field(default=None, description="Logical location, e.g. `acme/pricing/decisions`.")
    team_id: str | None = Field(default=None, description="Only keys of this team (and admin keys) see the memory.")
    session: str | None = Field(
        default=None, description="The session or conversation it was saved in (set at creation, never changed)."
    )
    source: str = Field(description="Who wrote it: the `source` argument, else the writing key's label.")
    expires_at: Timestamp | None = Field(default=None, description="RFC 3339 UTC time after which it is gone.")
    version: int = Field(description="1 on creation, +1 on every change.")
    created_at: Timestamp = Field(description="RFC 3339 UTC, milliseconds.")
    updated_at: Timestamp = Field(description="RFC 3339 UTC, milliseconds; the last change.")
    supersedes: list[str] = Field(
        default_factory=list, exclude_if=is_empty, description="The memories this one replaced (present when any)."
    )
    superseded_by: str | None = Field(
        default=None, exclude_if=is_none, description="Present when superseded: the memory that replaced this one."
    )
    superseded_at: Timestamp | None = Field(
        default=None, exclude_if=is_none, description="Present when superseded: when it was replaced."
    )


@dataclass(frozen=True, slots=True)
class Embedding:
    """A memory's vector of meaning and the model that made it (``Embedder.model``); vectors of
    different models never compare. The numbers are float32, as every backend stores them, so a
    record read back equals the one written."""

    model: str
    vector: tuple[float, ...]

    @property
    def dim(self) -> int:
        return len(self.vector)

    @classmethod
    def of(cls, model: str, vector: list[float] | tuple[float, ...]) -> Embedding:
        return cls(model, tuple(array("f", vector)))

    def to_bytes(self) -> bytes:
        """Little-endian float32, ``dim`` x 4 bytes."""
        packed = array("f", self.vector)
        if packed.itemsize != 4:  # pragma: no cover - every platform Python supports
            raise RuntimeError("float32 arrays are not 4 bytes here")
        return packed.tobytes()

    @classmethod
    def from_bytes(cls, model: str, raw: bytes) -> Embedding:
        values = array("f")
        values.frombytes(raw)
        return cls(model, tuple(values))


class MemoryRecord(Memory):
    workspace_id: str
    project_id: str
    #: the vector of ``content`` (None: not embedded yet, e.g. the embedder failed and the record
    #: is marked for repair); stored beside the record, never in its body, an export or a response
    embedding: Annotated[Embedding | None, SkipValidation] = Field(default=None, exclude=True, repr=False)

    def public(self) -> Memory:
        return Memory.model_validate(self.model_dump(exclude={"workspace_id", "project_id", "embedding"}))

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


class RateLimits(Model):
    model_config = ConfigDict(frozen=True)

    search: int = Field(default=120, ge=1, le=1_000_000)
    write: int = Field(default=60, ge=1, le=1_000_000)


class Workspace(Model):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    default_project_id: str
    limits: RateLimits | None = None
    #: refuse writes that hold a secret (``service.privacy``); the workspace's operator may turn it off
    secret_check: bool = True
    created_at: Timestamp


class Project(Model):
    model_config = ConfigDict(frozen=True)

    id: str
    workspace_id: str
    slug: str
    name: str
    created_at: Timestamp


class ApiKey(Model):
    """A key as stored: only a salted hash of its secret, never the secret."""

    model_config = ConfigDict(frozen=True)

    id: str
    workspace_id: str
    label: str
    scopes: list[str]
    default_project_id: str | None = None
    team_ids: list[str] = Field(default_factory=list)
    salt: str
    secret_hash: str
    revoked: bool = False
    created_at: Timestamp


#: what a principal binding matches in an access token: its ``sub``, its client (``client_id``,
#: else ``azp``) or one of its groups (the claims ``MNEMO_OAUTH_GROUP_CLAIMS`` names)
PrincipalKind = Literal["sub", "client", "group"]


class Principal(Model):
    """An OAuth principal bound to a workspace: tokens of ``issuer`` whose ``kind`` claim is ``value``
    act in the workspace with at most ``scopes``, ``team_ids`` and ``default_project_id`` — as a key
    would. The id derives from (issuer, kind, value), so one principal binds to one workspace."""

    model_config = ConfigDict(frozen=True)

    id: str
    workspace_id: str
    issuer: str
    kind: PrincipalKind
    value: str
    label: str
    scopes: list[str]
    default_project_id: str | None = None
    team_ids: list[str] = Field(default_factory=list)
    created_at: Timestamp
