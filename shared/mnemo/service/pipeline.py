"""The one call pipeline, for tools and admin operations alike:

    authenticate → authorise (scopes) → rate-limit → validate → resolve the project (tools) → run

REST, MCP and the admin routes all call :meth:`Service.invoke`; nothing about an operation's
behaviour lives anywhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from mnemo.errors import ContentTooLarge, InsufficientScope, InvalidRequest, NotFound, RateLimited, Unauthorized
from mnemo.models.common import MAX_IDEMPOTENCY_KEY, MAX_PROJECT_REF, utc_now
from mnemo.models.records import Project, RateLimits, Workspace
from mnemo.ports import Embedder, Ports, RateClass, RateDecision
from mnemo.service import keys, principals
from mnemo.service.between import Between
from mnemo.service.catalog import REGISTRY
from mnemo.service.context import CallContext
from mnemo.service.identity import Caller, bearer_secret, looks_like_jwt
from mnemo.service.operations import Operation
from mnemo.service.principals import TokenAuth
from mnemo.service.retrieval.context import Neighbours
from mnemo.service.retrieval.fusion import Fusion
from mnemo.service.vectors import EmbedAfter


@dataclass(frozen=True, slots=True)
class Invocation:
    result: BaseModel
    rate: RateDecision
    #: the HTTP status of success (201 for the admin operations that create)
    status: int = 200


def validation_error(exc: ValidationError) -> InvalidRequest | ContentTooLarge:
    """A pydantic error as docs/contract.md §4: 413 when the content is too large, else 400, with details."""
    details = _without_null_branches(
        [
            {"loc": list(err["loc"]), "type": err["type"], "msg": err["msg"]}
            for err in exc.errors(include_url=False, include_input=False, include_context=False)
        ]
    )
    if any(d["type"] == "content_too_large" for d in details):
        return ContentTooLarge("content is over 4096 bytes of UTF-8", details=details)
    return InvalidRequest("invalid arguments", details=details)


def _without_null_branches(details: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An optional field's error as the field's own: ``kind: …``, not ``kind.constrained-str: …`` and ``kind.none: …``.

    A field typed ``X | SkipJsonSchema[None]`` is a union to pydantic, which reports every branch under the
    branch's tag; the caller passed a value, so the null branch's refusal says nothing and the other
    branch's tag is noise.
    """
    nullable = {
        tuple(d["loc"][:-1]) for d in details if d["type"] == "none_required" and d["loc"] and d["loc"][-1] == "none"
    }
    out = []
    for d in details:
        parent = next((p for p in nullable if tuple(d["loc"][: len(p)]) == p and len(d["loc"]) > len(p)), None)
        if parent is None:
            out.append(d)
        elif d["loc"][len(parent)] != "none":
            out.append({**d, "loc": [*parent, *d["loc"][len(parent) + 1 :]]})
    return out


def validate(model: type[BaseModel], arguments: Mapping[str, Any] | Any) -> Any:
    """``arguments`` (a decoded JSON body) as ``model``, or the docs/contract.md §4 error."""
    if not isinstance(arguments, Mapping):
        raise InvalidRequest("arguments must be a JSON object")
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise validation_error(exc) from None


class Service:
    def __init__(
        self,
        ports: Ports,
        *,
        embedder: Embedder | None,
        default_limits: RateLimits | None = None,
        tokens: TokenAuth | None = None,
        fusion: Fusion | None = None,
        embed_after_answer: bool = False,
        neighbours: Neighbours | None = None,
        query_vector_aside: bool = False,
    ) -> None:
        """``embedder`` is the embedder of meaning the composition root chose (``mnemo.runtime``
        from ``MNEMO_EMBEDDER``); None: words only. ``tokens``: how OAuth access tokens are
        accepted (None: API keys only). ``fusion``: how hybrid recall fuses its two halves (None:
        the adopted rule, ``mnemo.service.retrieval.fusion.ADOPTED``; bench/fusion.py passes others).
        ``embed_after_answer``: writes store the record without its vector and a thread of this
        process embeds it after the answer (``vectors.EmbedAfter``; only for a process that
        outlives its calls). ``neighbours``: recall's context rule (None:
        ``mnemo.service.retrieval.context.ADOPTED``). ``query_vector_aside``: recall may make the
        query's vector on a thread of this process while it searches the words
        (``vectors.embed_query_aside``: when the embedder asks for it and a core is free)."""
        self.ports = ports
        #: how OAuth access tokens are accepted (None: API keys only)
        self.tokens = tokens
        self.default_limits = default_limits or RateLimits()
        #: the embedder of meaning (None: words only); the same on every backend by default
        self.embedder = embedder
        #: hybrid recall's fusion rule (None: the adopted one)
        self.fusion = fusion
        #: the vectors writes leave for after their answer (None: made before the write)
        self.embed_after = EmbedAfter(ports, embedder) if embed_after_answer and embedder is not None else None
        #: what a host serving one call at a time does on its thread between calls
        self.between = Between(ports, self.embed_after)
        #: recall's context rule (None: the adopted one)
        self.neighbours = neighbours
        #: recall may make the query's vector on a thread of its own (see above)
        self.query_vector_aside = query_vector_aside

    # -- identity ---------------------------------------------------------------------------

    def authenticate(self, authorization: str | None) -> Caller:
        """The caller of an ``Authorization: Bearer`` header: an OAuth access token (when tokens are
        accepted and the value is a JWT) or an API key. Both go on through the same pipeline."""
        plain = bearer_secret(authorization)
        if plain is None:
            raise Unauthorized("missing credentials: send Authorization: Bearer <key or access token>")
        if self.tokens is not None and looks_like_jwt(plain):
            claims = self.tokens.verifier.verify(plain)
            return principals.caller_for(self.ports, claims, self.tokens)
        key = self.ports.tenants.get_key(keys.key_id_for(plain))
        if key is None:
            keys.burn_time(plain)
            raise Unauthorized("unknown or revoked API key")
        if not keys.verify(plain, key.salt, key.secret_hash) or key.revoked:
            raise Unauthorized("unknown or revoked API key")
        return Caller(
            key_id=key.id,
            workspace_id=key.workspace_id,
            label=key.label,
            scopes=frozenset(key.scopes),
            team_ids=frozenset(key.team_ids),
            default_project_id=key.default_project_id,
        )

    def authenticate_iam(self, caller_arn: str | None) -> Caller:
        """The caller of a request API Gateway authorised with AWS IAM: the signing role's (or
        user's) ARN, bound to a workspace like a token's principal (issuer ``aws-iam``)."""
        if not caller_arn:
            raise Unauthorized("this route takes AWS SigV4-signed requests only")
        return principals.caller_for_iam(self.ports, caller_arn)

    def resolve_project(
        self, caller: Caller, argument: str | None, header: str | None, workspace: Workspace | None = None
    ) -> Project:
        """docs/contract.md §1: the argument, then X-Project, then the key's default, then the workspace's.
        ``workspace`` is the caller's workspace when the call has read it already."""
        tenants = self.ports.tenants
        if header is not None and not 1 <= len(header) <= MAX_PROJECT_REF:
            # the OpenAPI document promises 1-64 characters; an empty header is a mistake (an unset
            # variable), not "no header": it must never fall through to the default project
            raise InvalidRequest(
                f"X-Project must be a project slug or id of 1-{MAX_PROJECT_REF} characters",
                details=[{"loc": ["header", "X-Project"], "type": "value_error"}],
            )
        for ref in (argument, header, caller.default_project_id):
            if ref:
                project = tenants.get_project(caller.workspace_id, ref)
                if project is None:
                    raise NotFound(f"no project {ref!r} in this workspace")
                return project
        workspace = workspace or tenants.get_workspace(caller.workspace_id)
        project = tenants.get_project(caller.workspace_id, workspace.default_project_id) if workspace else None
        if project is None:
            raise NotFound("this workspace has no default project")
        return project

    # -- calls ------------------------------------------------------------------------------

    def operation(self, name: str) -> Operation:
        operation = REGISTRY.get(name)
        if operation is None:
            raise NotFound(f"no tool named {name!r}")
        return operation

    def invoke(
        self,
        name: str,
        caller: Caller,
        arguments: Mapping[str, Any] | Any = None,
        *,
        project_header: str | None = None,
        idempotency_key: str | None = None,
        params: Mapping[str, str] | None = None,
        now: datetime | None = None,
    ) -> Invocation:
        """Run one operation for ``caller``: authorise, take a token of its rate class from the
        workspace's bucket, validate the arguments (and the headers that travel with them),
        resolve the project (tools), run. ``params`` are an admin route's path parameters."""
        op = self.operation(name)
        if not caller.may(op.scopes):
            raise InsufficientScope(
                f"this {'token' if caller.kind == 'token' else 'key'} lacks the scope for {name} "
                f"(needs one of {sorted(op.scopes)})",
                needed=sorted(op.scopes),
            )
        workspace = self.ports.tenants.get_workspace(caller.workspace_id)
        decision = self.admit(caller.workspace_id, op.rate_class, workspace)
        args = validate(op.args, arguments) if op.args is not None else None
        if idempotency_key is not None and not 1 <= len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
            raise InvalidRequest(
                f"Idempotency-Key must be 1-{MAX_IDEMPOTENCY_KEY} characters",
                details=[{"loc": ["header", "Idempotency-Key"], "type": "value_error"}],
            )
        project = None
        if op.in_project:
            project = self.resolve_project(caller, getattr(args, "project", None), project_header, workspace)
        ctx = CallContext(
            ports=self.ports,
            caller=caller,
            now=now or utc_now(),
            where=project,
            idempotency_key=idempotency_key,
            params=dict(params or {}),
            default_limits=self.default_limits,
            embedder=self.embedder,
            fusion=self.fusion,
            embed_after=self.embed_after,
            query_vector_aside=self.query_vector_aside,
            neighbours=self.neighbours,
            issuers=self.tokens.issuers if self.tokens else (),
            # the workspace admission read: no extra read (AWS caches it for ``tenant_cache_s``)
            secret_check=workspace.secret_check if workspace is not None else True,
        )
        return Invocation(op.run(ctx, args), decision, op.status)

    def admit(self, workspace_id: str, rate_class: RateClass, workspace: Workspace | None = None) -> RateDecision:
        """Take one call from the workspace's bucket of this class, or raise RateLimited. The
        workspace's figures are read on every call (a backend may cache a workspace briefly:
        the AWS one for ``tenant_cache_s``), so a change applies to the next one; pass
        ``workspace`` when the call has read it already."""
        workspace = workspace or self.ports.tenants.get_workspace(workspace_id)
        limits = (workspace.limits if workspace else None) or self.default_limits
        limit = limits.search if rate_class == "search" else limits.write
        decision = self.ports.limiter.acquire(workspace_id, rate_class, limit)
        if not decision.allowed:
            raise RateLimited(
                f"rate limit for {rate_class} calls exceeded; retry in {decision.retry_after_s}s",
                retry_after=decision.retry_after_s,
                headers=decision.headers(),
            )
        return decision
