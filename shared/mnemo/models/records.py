"""Stored records (docs/contract.md §1–2). The public ``Memory`` is what callers see; ``MemoryRecord`` adds
the tenancy keys a backend needs and never leaves the service."""

from __future__ import annotations

from datetime import datetime

from pydantic import ConfigDict, Field

from mnemo.models.common import Model, Timestamp


class Memory(Model):
    model_config = ConfigDict(frozen=True)

    id: str = Field(description="`mem_` + a 26-character ULID (sorts by creation time): the memory's reference.")
    content: str = Field(description="The text, verbatim as written.")
    kind: str | None = Field(default=None, description="The caller's category; `working` marks active working state.")
    tags: list[str] = Field(default_factory=list, description="Tags in the order given, without duplicates.")
    path: str | None = Field(default=None, description="Logical location, e.g. `acme/pricing/decisions`.")
    team_id: str | None = Field(default=None, description="Only keys of this team (and admin keys) see the memory.")
    source: str = Field(description="Who wrote it: the `source` argument, else the writing key's label.")
    expires_at: Timestamp | None = Field(default=None, description="RFC 3339 UTC time after which it is gone.")
    version: int = Field(description="1 on creation, +1 on every change.")
    created_at: Timestamp = Field(description="RFC 3339 UTC, milliseconds.")
    updated_at: Timestamp = Field(description="RFC 3339 UTC, milliseconds; the last change.")


class MemoryRecord(Memory):
    workspace_id: str
    project_id: str

    def public(self) -> Memory:
        return Memory.model_validate(self.model_dump(exclude={"workspace_id", "project_id"}))

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
