"""memory_add, memory_get, memory_update, memory_delete, forget and memory_search (docs/contract.md §3).

A write touches the record store only: the store's changes reach the index by themselves —
synchronously on SQLite (the store writes the record's index entries in the same transaction), through the
table's stream and the indexer on AWS, where the search adapter reads the most recent changes
from the table beside every query so a change is searchable the moment it returns
(docs/architecture.md, "The write path")."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mnemo import text
from mnemo.errors import Conflict, InvalidRequest
from mnemo.ids import memory_id
from mnemo.models.records import MemoryRecord
from mnemo.models.tools import (
    DeletedRef,
    DeleteResult,
    ForgetArgs,
    ForgetResult,
    ForgottenRef,
    MemoriesResult,
    MemoryAddArgs,
    MemoryAddResult,
    MemoryHistoryArgs,
    MemoryHistoryResult,
    MemoryIdArgs,
    MemoryResult,
    MemorySearchArgs,
    MemoryUpdateArgs,
    MemoryVersion,
)
from mnemo.ports import Duplicate, IdempotencyMismatch, IndexQuery, VersionConflict
from mnemo.service import privacy, similar
from mnemo.service.context import CallContext
from mnemo.service.vectors import embed_content, needs_embedding


def _fingerprint(ctx: CallContext, args: MemoryAddArgs) -> str:
    material = {"project": ctx.project.id, "args": args.model_dump(mode="json", exclude={"idempotency_key", "project"})}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _private_removed(content: str) -> str:
    cleaned = privacy.strip_private(content)
    if not cleaned:
        raise InvalidRequest(
            "content is empty once its <private> spans are removed: nothing to save",
            details=[{"loc": ["content"], "type": "value_error"}],
        )
    return cleaned


def memory_add(ctx: CallContext, args: MemoryAddArgs) -> MemoryAddResult:
    content = _private_removed(args.content)
    if content != args.content:
        args = args.model_copy(update={"content": content})
    if ctx.secret_check:
        privacy.refuse_secrets([("content", args.content), ("kind", args.kind), ("path", args.path),
                                *(("tags", tag) for tag in args.tags or [])])  # fmt: skip
    if args.team_id is not None:
        ctx.caller.require_team(args.team_id)
    if args.expires_at is not None and args.expires_at <= ctx.now:
        raise InvalidRequest(
            "expires_at must be in the future", details=[{"loc": ["expires_at"], "type": "value_error"}]
        )
    key = ctx.idempotency_key or args.idempotency_key
    if key is None:
        return _add(ctx, args)
    try:
        response = ctx.ports.idempotency.run_once(
            ctx.caller.workspace_id,
            key,
            _fingerprint(ctx, args),
            lambda: _add(ctx, args).model_dump(mode="json"),
        )
    except IdempotencyMismatch:
        raise Conflict("this idempotency key was used with other arguments") from None
    except VersionConflict:
        raise Conflict("a request with this idempotency key is already in progress") from None
    return MemoryAddResult.model_validate(response)


def _superseded(
    ctx: CallContext, new_id: str, ids: list[str], *, if_version: int | None = None, new: bool = False
) -> list[MemoryRecord]:
    """The memories ``new_id`` supersedes, each marked (version + 1, ``updated_at`` kept), after
    every check: 404 for an id this caller cannot see (another project or workspace, deleted,
    expired, another team's: never a hint it exists), 400 for itself, 409 for a cycle or (without
    ``if_version``) one another memory superseded already. One already superseded by ``new_id`` is
    left as it is. Only the targets' versions are kept here (``MemoryStore.keep_version``, before
    the write); the store writes the marks with the memory, atomically."""
    if not ids:
        return []
    if new_id in ids:
        raise InvalidRequest(
            "a memory cannot supersede itself", details=[{"loc": ["supersedes"], "type": "value_error"}]
        )
    marked: list[MemoryRecord] = []
    targets: list[MemoryRecord] = []
    for target_id in ids:
        target = ctx.visible(ctx.ports.store.get(ctx.scope, target_id))
        if target.superseded_by == new_id:
            continue
        if target.superseded_by is not None and if_version is None:
            raise Conflict(
                f"{target_id} is superseded already by {target.superseded_by}"
                " (memory_update with if_version supersedes it again)"
            )
        marked.append(
            target.model_copy(update={"superseded_by": new_id, "superseded_at": ctx.now, "version": target.version + 1})
        )
        targets.append(target)
    # a cycle: new_id is (transitively) superseded by one of the targets (a new memory is by none)
    seen: set[str] = set()
    current = None if new else ctx.ports.store.get(ctx.scope, new_id)
    while current is not None and current.superseded_by is not None and current.superseded_by not in seen:
        if current.superseded_by in ids:
            raise Conflict(
                f"{new_id} is superseded by {current.superseded_by} already: superseding it would make a cycle"
            )
        seen.add(current.superseded_by)
        current = ctx.ports.store.get(ctx.scope, current.superseded_by)
    for target in targets:  # each mark is a change: the version it replaces goes to the history
        ctx.ports.store.keep_version(target, expires_at=target.expires_at)
    return marked


def _marks_changed(exc: VersionConflict, record: MemoryRecord) -> Conflict:
    if exc.args and exc.args[0] != record.id:
        return Conflict(f"{exc.args[0]} changed meanwhile; nothing was saved: read it again and retry")
    return Conflict("memory changed while updating; read it again and retry")


def _add(ctx: CallContext, args: MemoryAddArgs) -> MemoryAddResult:
    # the vector is made before the store write, so the record carries it to every backend; or, with
    # an embedder too slow for a write's budget, after the answer (ctx.embed_after, service/vectors.py)
    embedding = None if ctx.embed_after is not None else embed_content(ctx.embedder, args.content)
    record = MemoryRecord(
        id=memory_id(),
        workspace_id=ctx.project.workspace_id,
        project_id=ctx.project.id,
        content=args.content,
        kind=args.kind,
        tags=args.tags,
        path=args.path,
        team_id=args.team_id,
        session=args.session,
        source=args.source or ctx.caller.label,
        expires_at=args.expires_at,
        version=1,
        created_at=ctx.now,
        updated_at=ctx.now,
        embedding=embedding,
        supersedes=list(args.supersedes),
    )
    try:
        # the checks and the write in one SQLite transaction; each mark is conditional on the
        # version read anyway (a change in between is a conflict, on every backend)
        with ctx.ports.store.unit_of_work():
            marks = _superseded(ctx, record.id, list(args.supersedes), new=True)
            ctx.ports.store.create(record, dedupe=not args.allow_duplicate, marks=marks)
    except Duplicate as found:
        # the same content, kind, path and team as a live memory of the project: that memory
        # (and nothing superseded: the store wrote nothing)
        same = ctx.visible(ctx.ports.store.get(ctx.scope, found.memory_id))
        return MemoryAddResult(project=ctx.project_ref, memory=same.public(), deduplicated=True)
    except VersionConflict as exc:
        raise _marks_changed(exc, record) from None
    if ctx.embed_after is None and needs_embedding(ctx.embedder, record):
        ctx.ports.store.mark_for_repair(record)  # the embedder failed: cleanup embeds it
    try:
        near = similar.near(ctx, record)
    finally:
        if ctx.embed_after is not None:
            # queued once ``similar`` is worked out, the call's last work: the embedding (on a thread
            # of this process) does not run beside it, taking the memory bandwidth and the other core
            ctx.embed_after.submit(record)
    return MemoryAddResult(project=ctx.project_ref, memory=record.public(), similar=near)


def memory_get(ctx: CallContext, args: MemoryIdArgs) -> MemoryResult:
    record = ctx.visible(ctx.ports.store.get(ctx.scope, args.id))
    return MemoryResult(project=ctx.project_ref, memory=record.public())


_UPDATABLE = ("content", "kind", "tags", "path", "expires_at")


def memory_update(ctx: CallContext, args: MemoryUpdateArgs) -> MemoryResult:
    given = args.model_fields_set & set(_UPDATABLE)
    if "content" in given and args.content is None:
        raise InvalidRequest("content cannot be null", details=[{"loc": ["content"], "type": "value_error"}])
    if args.expires_at is not None and args.expires_at <= ctx.now:
        raise InvalidRequest(
            "expires_at must be in the future", details=[{"loc": ["expires_at"], "type": "value_error"}]
        )
    if "content" in given and args.content is not None:
        args = args.model_copy(update={"content": _private_removed(args.content)})
    if ctx.secret_check:
        privacy.refuse_secrets(
            [(name, getattr(args, name)) for name in ("content", "kind", "path") if name in given]
            + [("tags", tag) for tag in (args.tags or []) if "tags" in given]
        )
    with ctx.ports.store.unit_of_work():
        current = ctx.visible(ctx.ports.store.get(ctx.scope, args.id))
        if args.if_version is not None and args.if_version != current.version:
            raise Conflict(f"memory is at version {current.version}, not {args.if_version}")
        marks = _superseded(ctx, current.id, list(args.supersedes or ()), if_version=args.if_version)
        changes: dict[str, Any] = {name: getattr(args, name) for name in given}
        if marks:
            changes["supersedes"] = list(dict.fromkeys([*current.supersedes, *(m.id for m in marks)]))
        if "tags" in changes and changes["tags"] is None:
            changes["tags"] = []
        update = {**changes, "version": current.version + 1, "updated_at": ctx.now}
        if ("content" in changes and changes["content"] != current.content) or needs_embedding(ctx.embedder, current):
            content = changes.get("content", current.content)
            update["embedding"] = None if ctx.embed_after is not None else embed_content(ctx.embedder, content)
        updated = current.model_copy(update=update)
        ctx.ports.store.keep_version(current, expires_at=updated.expires_at)
        try:
            ctx.ports.store.replace(updated, expected_version=current.version, previous=current, marks=marks)
        except VersionConflict as exc:
            raise _marks_changed(exc, updated) from None
        if needs_embedding(ctx.embedder, updated) and ctx.embed_after is None:
            ctx.ports.store.mark_for_repair(updated)  # the embedder failed: cleanup embeds it
    if ctx.embed_after is not None and needs_embedding(ctx.embedder, updated):
        ctx.embed_after.submit(updated)  # after the unit of work committed: the thread reads this version
    return MemoryResult(project=ctx.project_ref, memory=updated.public())


def delete_memory(ctx: CallContext, memory_id: str) -> None:
    """Delete exactly one visible record (its index entry follows); shared by memory_delete and forget."""
    with ctx.ports.store.unit_of_work():
        current = ctx.visible(ctx.ports.store.get(ctx.scope, memory_id))
        try:
            ctx.ports.store.delete(ctx.scope, memory_id, expected_version=current.version, record=current)
        except VersionConflict:
            raise Conflict("memory changed while deleting; retry") from None


def memory_delete(ctx: CallContext, args: MemoryIdArgs) -> DeleteResult:
    delete_memory(ctx, args.id)
    return DeleteResult(project=ctx.project_ref, deleted=DeletedRef(id=args.id))


def memory_search(ctx: CallContext, args: MemorySearchArgs) -> MemoriesResult:
    flt = ctx.memory_filter(
        kind=args.kind,
        tags_all=tuple(args.tags or ()),
        session=args.session,
        updated_after=args.updated_after,
        updated_before=args.updated_before,
        include_superseded=args.include_superseded,
    )
    if not args.q.strip():
        records = ctx.ports.store.recent(ctx.scope, flt, args.limit)
    elif not (terms := text.query_terms(args.q)):
        records = []  # only punctuation: nothing can contain "every term" of it
    else:
        hits = ctx.ports.index.search(IndexQuery(ctx.scope, terms, "all", flt, args.limit))
        records = [hit.record for hit in hits]
    return MemoriesResult(project=ctx.project_ref, memories=[r.public() for r in records])


def forget(ctx: CallContext, args: ForgetArgs) -> ForgetResult:
    """Delete exactly the referenced memory (404 when unknown or not visible to the key)."""
    delete_memory(ctx, args.reference)
    return ForgetResult(project=ctx.project_ref, forgotten=ForgottenRef(reference=args.reference))


#: the most links of a supersession chain memory_history follows up from a memory
MAX_CHAIN = 20


def memory_history(ctx: CallContext, args: MemoryHistoryArgs) -> MemoryHistoryResult:
    """The memory, its earlier versions newest first, and its supersession chain: what it replaced
    and, up from it, what replaced it (as far as this caller can read)."""
    record = ctx.visible(ctx.ports.store.get(ctx.scope, args.id))
    versions, dropped = ctx.ports.store.history(ctx.scope, record.id, below=record.version, limit=args.limit)
    chain: list[str] = []
    current = record
    while current.superseded_by is not None and current.superseded_by not in chain and len(chain) < MAX_CHAIN:
        chain.append(current.superseded_by)
        after = ctx.ports.store.get(ctx.scope, current.superseded_by)
        if after is None or after.expired(ctx.now) or not ctx.caller.sees_team(after.team_id):
            break
        current = after
    return MemoryHistoryResult(
        project=ctx.project_ref,
        memory=record.public(),
        versions=[
            MemoryVersion.model_validate(v.model_dump(include=set(MemoryVersion.model_fields))) for v in versions
        ],
        dropped=dropped,
        supersedes=record.supersedes,
        superseded_by=chain,
    )
