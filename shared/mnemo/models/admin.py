"""Administration models: what the admin routes and the CLI accept and show (docs/contract.md §1, §5).

A key is only ever shown as :class:`KeyInfo` (no salt, no hash); its plain secret appears once,
in :class:`CreatedKey`, and is never stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, StrictBool, model_validator

from mnemo.models.common import (
    Content,
    Kind,
    MemoryId,
    Model,
    Path,
    ProjectRefArg,
    ScopeName,
    SessionId,
    Slug,
    Source,
    Tags,
    TeamId,
    Timestamp,
    is_empty,
    is_none,
    no_controls,
)
from mnemo.models.records import (
    MAX_VERSIONS,
    ApiKey,
    MemoryRecord,
    Principal,
    PrincipalKind,
    Project,
    RateLimits,
    Workspace,
)
from mnemo.models.tools import MAX_SUPERSEDES, ProjectRef

Label = Annotated[str, Field(min_length=1, max_length=128), AfterValidator(no_controls)]


class _Args(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---- keys -----------------------------------------------------------------------------------


class KeyInfo(Model):
    """A key as administrators see it: never its secret, salt or hash."""

    id: str
    label: str
    scopes: list[str]
    default_project_id: str | None = None
    team_ids: list[str] = Field(default_factory=list)
    revoked: bool = False
    created_at: Timestamp

    @classmethod
    def of(cls, key: ApiKey) -> KeyInfo:
        return cls(
            id=key.id,
            label=key.label,
            scopes=list(key.scopes),
            default_project_id=key.default_project_id,
            team_ids=list(key.team_ids),
            revoked=key.revoked,
            created_at=key.created_at,
        )


class CreateKeyArgs(_Args):
    label: Label = Field(description="Who uses the key; also the default `source` of its memories.")
    scopes: Annotated[list[ScopeName], Field(min_length=1, max_length=4)] = Field(
        description="memory:read (read tools), memory:write (add, update, delete, forget), "
        "memory:delete (delete and forget only), admin (everything, including /v1/admin)."
    )
    default_project: ProjectRefArg | None = Field(
        default=None, description="Slug or id of the project used when a call names none."
    )
    team_ids: Annotated[list[TeamId], Field(max_length=50)] = Field(
        default_factory=list, description="Teams whose memories the key may see and change."
    )


class CreatedKey(Model):
    key: KeyInfo
    secret: str = Field(description="The plain key, shown this once: Mnemo keeps only a salted hash of it.")


class KeyResult(Model):
    key: KeyInfo


class KeyList(Model):
    keys: list[KeyInfo]


# ---- OAuth principals -----------------------------------------------------------------------


class PrincipalInfo(Model):
    """An OAuth principal bound to the workspace (docs/auth.md)."""

    id: str = Field(description="`prn_` + 24 hex digits, derived from issuer, kind and value.")
    issuer: str = Field(description="The authorization server whose tokens it matches (their `iss`).")
    kind: PrincipalKind = Field(
        description="What it matches in a token: `sub` (a user or service account), `client` (the token's "
        "`client_id`, else `azp`: every token issued to that client) or `group` (a group claim's value)."
    )
    value: str
    label: str
    scopes: list[str] = Field(description="The most its tokens may do; a token's own scopes narrow it further.")
    default_project_id: str | None = None
    team_ids: list[str] = Field(default_factory=list)
    created_at: Timestamp

    @classmethod
    def of(cls, principal: Principal) -> PrincipalInfo:
        return cls.model_validate(principal.model_dump(exclude={"workspace_id"}))


class BindPrincipalArgs(_Args):
    issuer: str | None = Field(
        default=None,
        max_length=512,
        description="An issuer of MNEMO_OAUTH_ISSUERS; by default the first one.",
    )
    kind: PrincipalKind = Field(description="`sub`, `client` or `group`.")
    value: Annotated[str, Field(min_length=1, max_length=256), AfterValidator(no_controls)] = Field(
        description="The `sub`, the client id or the group name its tokens carry."
    )
    label: Label | None = Field(default=None, description="Also the default `source` of its memories.")
    scopes: Annotated[list[ScopeName], Field(min_length=1, max_length=4)] = Field(
        description="The most its tokens may do (as a key's scopes)."
    )
    default_project: ProjectRefArg | None = Field(
        default=None, description="Slug or id of the project used when a call names none."
    )
    team_ids: Annotated[list[TeamId], Field(max_length=50)] = Field(
        default_factory=list, description="Teams whose memories its tokens may see and change."
    )


class PrincipalResult(Model):
    principal: PrincipalInfo


class PrincipalList(Model):
    principals: list[PrincipalInfo]


# ---- projects -------------------------------------------------------------------------------


class ProjectInfo(Model):
    id: str
    slug: str
    name: str
    default: bool = Field(description="True for the workspace's default project.")
    created_at: Timestamp

    @classmethod
    def of(cls, project: Project, workspace: Workspace | None) -> ProjectInfo:
        return cls(
            id=project.id,
            slug=project.slug,
            name=project.name,
            default=workspace is not None and workspace.default_project_id == project.id,
            created_at=project.created_at,
        )


class CreateProjectArgs(_Args):
    slug: Slug
    name: Label | None = Field(default=None, description="A display name; defaults to the slug.")


class ProjectResult(Model):
    project: ProjectInfo


class ProjectList(Model):
    projects: list[ProjectInfo]


# ---- workspaces and limits ------------------------------------------------------------------


class BucketLevel(Model):
    """One rate-limit bucket as it stands."""

    limit: int = Field(description="Calls a minute (the bucket's size).")
    remaining: int = Field(description="Calls the bucket holds now.")
    full_in_s: int = Field(description="Seconds until the bucket is full again (0: full).")
    retry_after_s: int = Field(description="Seconds until the next call would be admitted (0: now).")


class BucketLevels(Model):
    search: BucketLevel
    write: BucketLevel


class LimitsInfo(Model):
    workspace_id: str
    search: int = Field(description="Read calls a minute (bucket size).")
    write: int = Field(description="Write calls a minute (bucket size).")
    custom: bool = Field(description="False when the deployment's defaults apply.")
    levels: BucketLevels = Field(
        description="The workspace's buckets as they stand after this call (which took one search call)."
    )


class PrivacyInfo(Model):
    workspace_id: str
    secret_check: bool = Field(
        description="True (the default): a write holding a secret is refused with 400 secret_detected. False: "
        "stored as given. <private> spans are removed either way."
    )


class PrivacyArgs(Model):
    model_config = ConfigDict(extra="forbid")

    secret_check: StrictBool = Field(
        description="Refuse writes that hold a secret (true) or store them as given (false)."
    )


# ---- the calling key ------------------------------------------------------------------------


class WorkspaceRef(Model):
    id: str
    name: str
    default_project_id: str


class WhoAmI(Model):
    """What the calling key is and may do; the console shows it and hides what the key may not do."""

    key: KeyInfo
    workspace: WorkspaceRef
    projects: list[ProjectInfo] = Field(
        description="The workspace's projects, the default one first, then by slug: a key may act in any of them "
        "(its teams still limit which memories it sees)."
    )
    operations: list[str] = Field(
        description="The tools and workspace operations this key's scopes allow, by name, in registry order."
    )


class WorkspaceInfo(Model):
    id: str
    name: str
    default_project_id: str
    limits: RateLimits | None = None
    secret_check: bool = True
    created_at: Timestamp

    @classmethod
    def of(cls, workspace: Workspace) -> WorkspaceInfo:
        return cls.model_validate(workspace.model_dump())


# ---- export / import ------------------------------------------------------------------------


class _ExportedFields(Model):
    """What a memory and each of its kept versions hold besides the memory's id and home."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: Content
    kind: Kind | None = None
    tags: Tags = Field(default_factory=list)
    path: Path | None = None
    team_id: TeamId | None = None
    session: SessionId | None = None
    source: Source
    expires_at: Timestamp | None = None
    version: Annotated[int, Field(ge=1)]
    created_at: Timestamp
    updated_at: Timestamp
    #: a memory gathers ``supersedes`` over its updates, so the bound is the store's, not one call's
    supersedes: Annotated[list[MemoryId], Field(max_length=MAX_VERSIONS * MAX_SUPERSEDES)] = Field(
        default_factory=list, exclude_if=is_empty
    )
    superseded_by: MemoryId | None = Field(default=None, exclude_if=is_none)
    superseded_at: Timestamp | None = Field(default=None, exclude_if=is_none)


class ExportedVersion(_ExportedFields):
    """One kept earlier version of an exported memory."""


class _Home(Model):
    """A memory's id and home, first on an export line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: MemoryId
    workspace_id: Annotated[str, Field(min_length=1, max_length=64)]
    project_id: Annotated[str, Field(min_length=1, max_length=64)]


class ExportedMemory(_ExportedFields, _Home):
    """One line of an export file: a stored record with every field, its supersession marks and its
    kept versions (``history``, newest first, and ``history_dropped``, how many older ones were
    dropped), checked on import as strictly as a new memory (unknown fields are an error, so
    nothing is dropped silently)."""

    history: Annotated[list[ExportedVersion], Field(max_length=MAX_VERSIONS)] = Field(
        default_factory=list, exclude_if=is_empty
    )
    history_dropped: Annotated[int, Field(ge=0)] = Field(default=0, exclude_if=is_empty)

    @model_validator(mode="after")
    def _versions_precede(self) -> ExportedMemory:
        numbers = [v.version for v in self.history]
        if any(n >= self.version for n in numbers) or numbers != sorted(set(numbers), reverse=True):
            raise ValueError("history: versions must be older than the memory's, newest first, each once")
        if self.history_dropped and not self.history:
            raise ValueError("history_dropped: counts versions dropped from a history, and history is empty")
        return self

    @classmethod
    def of(cls, record: MemoryRecord, versions: Sequence[MemoryRecord] = (), dropped: int = 0) -> ExportedMemory:
        return cls.model_validate(
            {
                **record.model_dump(),
                "history": [v.model_dump(exclude=_HOME) for v in versions],
                "history_dropped": dropped,
            }
        )

    def record(self) -> MemoryRecord:
        return MemoryRecord.model_validate(self.model_dump(exclude={"history", "history_dropped"}))

    def versions(self) -> list[MemoryRecord]:
        """The kept versions as records of the memory's id and home, newest first."""
        home = {"id": self.id, "workspace_id": self.workspace_id, "project_id": self.project_id}
        return [MemoryRecord.model_validate({**v.model_dump(), **home}) for v in self.history]


#: what a version shares with its memory, so an export line does not repeat it
_HOME = {"id", "workspace_id", "project_id"}


class ExportArgs(_Args):
    project: ProjectRefArg = Field(description="Slug or id of the project to export.")
    cursor: MemoryId | None = Field(
        default=None, description="The `cursor` of the previous page; omit for the first page."
    )
    limit: Annotated[int, Field(ge=1, le=500)] = Field(
        default=200, description="At most this many memories in the page (1–500)."
    )


class ExportPage(Model):
    project: ProjectRef
    memories: list[ExportedMemory] = Field(
        description="The project's live memories in id order, each exactly as one line of `mnemo export` (expired "
        "ones are left out, so a page may hold fewer than `limit`)."
    )
    cursor: str | None = Field(description="Pass it as `cursor` for the next page; null on the last page.")
