"""Where a call acts and for whom: built once per call by ``Service.invoke``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from mnemo.errors import NotFound
from mnemo.models.records import MemoryRecord, Project, RateLimits
from mnemo.models.tools import ProjectRef
from mnemo.ports import Embedder, MemoryFilter, Ports, Scope
from mnemo.service.identity import Caller

if TYPE_CHECKING:
    from mnemo.service.retrieval.context import Neighbours
    from mnemo.service.retrieval.fusion import Fusion
    from mnemo.service.vectors import EmbedAfter


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    ports: Ports
    caller: Caller
    now: datetime
    #: the project a tool acts in (resolved by the pipeline); None for admin operations, which act
    #: on the caller's workspace
    where: Project | None = None
    #: the ``Idempotency-Key`` header of a REST call
    idempotency_key: str | None = None
    #: path parameters of an admin route, e.g. ``{"key_id": …}``
    params: Mapping[str, str] = field(default_factory=dict)
    #: the deployment's rate limits, for a workspace without its own
    default_limits: RateLimits = field(default_factory=RateLimits)
    #: the embedder of meaning (None: words only)
    embedder: Embedder | None = None
    #: how hybrid recall fuses its two halves (None: the adopted rule, ``retrieval.fusion.ADOPTED``)
    fusion: Fusion | None = None
    #: writes leave the vector to this, after the answer (None: the vector before the write)
    embed_after: EmbedAfter | None = None
    #: recall may make the query's vector on a thread of its own while it searches the words
    #: (``vectors.embed_query_aside``: when the embedder asks and a core is free)
    query_vector_aside: bool = False
    #: how recall lets memories saved together lend each other weight (None: the adopted rule,
    #: ``retrieval.context.ADOPTED``)
    neighbours: Neighbours | None = None
    #: the OAuth issuers whose tokens this deployment accepts (the first: a new binding's default)
    issuers: tuple[str, ...] = ()
    #: refuse writes holding a secret: the workspace's setting (``Workspace.secret_check``)
    secret_check: bool = True
    #: a first try whose empty answer is thrown away (a time window that holds no match is
    #: searched again without it): why it found nothing is not worked out
    trial: bool = False

    @property
    def project(self) -> Project:
        if self.where is None:
            raise RuntimeError("this operation does not act inside a project")
        return self.where

    @property
    def scope(self) -> Scope:
        return Scope(self.project.workspace_id, self.project.id)

    @property
    def project_ref(self) -> ProjectRef:
        return ProjectRef(id=self.project.id, slug=self.project.slug)

    def memory_filter(self, *, team_id: str | None = None, **fields: object) -> MemoryFilter:
        """The caller's visibility as a filter; ``team_id`` narrows it to one of the key's teams."""
        if team_id is not None:
            self.caller.require_team(team_id)
            return MemoryFilter(
                now=self.now,
                visible_teams=frozenset({team_id}),
                include_unteamed=False,
                **fields,  # type: ignore[arg-type]
            )
        teams = None if self.caller.is_admin else self.caller.team_ids
        return MemoryFilter(now=self.now, visible_teams=teams, **fields)  # type: ignore[arg-type]

    def visible(self, record: MemoryRecord | None) -> MemoryRecord:
        """The record if this caller may see it now; else ``NotFound`` — never a hint it exists."""
        if record is None or record.expired(self.now) or not self.caller.sees_team(record.team_id):
            raise NotFound("no memory with that id in this project")
        return record
