"""Export and import of a project's memories: a lossless copy keeping ids, versions, timestamps,
supersession marks and each memory's kept history (docs/contract.md §6 CLI). The CLI turns
records into JSON lines and back; this module decides what may be imported where.

Import checks everything before it writes anything: every line must be a valid record, no id
may appear twice, the records must come from the target's workspace (unless the operator says
otherwise), and -- unless told to skip them -- no id may already exist in the target project.
Ids are unique inside a project, so a project can be copied within one store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from mnemo.errors import Conflict, InvalidRequest
from mnemo.importers import Item as ImportItem
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord, Project
from mnemo.ports import MAX_VERSIONS, Embedder, Page, Ports, Scope, VersionConflict
from mnemo.service import privacy
from mnemo.service.vectors import needs_embedding, with_embedding

OnExisting = Literal["fail", "skip"]
PAGE = 200


def export_project(
    ports: Ports, project: Project, *, now: datetime | None = None, include_expired: bool = False
) -> Iterator[MemoryRecord]:
    """Every record of the project in id order, page by page. Expired records are gone for
    every read (docs/contract.md §2), so they are left out unless ``include_expired``."""
    now = now or utc_now()
    cursor: str | None = None
    while True:
        page = export_page(ports, project, cursor=cursor, limit=PAGE, now=now, include_expired=include_expired)
        yield from page.items
        if page.cursor is None:
            return
        cursor = page.cursor


def export_page(
    ports: Ports,
    project: Project,
    *,
    cursor: str | None,
    limit: int,
    now: datetime,
    include_expired: bool = False,
) -> Page[MemoryRecord]:
    """One page of :func:`export_project` (the admin export over HTTP is paged): the records after
    ``cursor`` in id order; expired ones are dropped after paging, so a page may come up short."""
    page = ports.store.scan_project(Scope(project.workspace_id, project.id), cursor=cursor, limit=limit)
    kept = [record for record in page.items if include_expired or not record.expired(now)]
    return Page(kept, page.cursor)


@dataclass(frozen=True)
class Entry:
    """One memory of an export: the record, its kept earlier versions newest first (records of
    the memory's id and home), and how many older versions its history had dropped."""

    record: MemoryRecord
    versions: tuple[MemoryRecord, ...] = ()
    dropped: int = 0


def with_history(ports: Ports, records: Iterable[MemoryRecord]) -> Iterator[Entry]:
    """Each record with its history: a read per record changed since its creation (``version``
    above 1; a first version has none), none for the others."""
    for record in records:
        if record.version == 1:
            yield Entry(record)
            continue
        scope = Scope(record.workspace_id, record.project_id)
        versions, dropped = ports.store.history(scope, record.id, below=record.version, limit=MAX_VERSIONS)
        yield Entry(record, tuple(versions), dropped)


def _entry(item: MemoryRecord | Entry) -> Entry:
    return item if isinstance(item, Entry) else Entry(item)


@dataclass
class ImportReport:
    project: Project
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def check_import(
    ports: Ports,
    target: Project,
    records: Iterable[MemoryRecord | Entry],
    *,
    force_workspace: bool = False,
    on_existing: OnExisting = "fail",
) -> list[str]:
    """Raise when the records cannot be imported as asked; return the ids to skip. Secrets are
    refused unless the target's workspace turned its secret check off."""
    workspace = ports.tenants.get_workspace(target.workspace_id)
    secret_check = workspace.secret_check if workspace is not None else True
    seen: set[str] = set()
    foreign: set[str] = set()
    existing: list[str] = []
    scope = Scope(target.workspace_id, target.id)
    for item in records:
        entry = _entry(item)
        record = entry.record
        if record.id in seen:
            raise InvalidRequest(f"memory {record.id} appears twice in the input")
        seen.add(record.id)
        if record.workspace_id != target.workspace_id:
            foreign.add(record.workspace_id)
        for held in (record, *entry.versions):  # a secret is refused in a kept version too
            where = f"memory {record.id}" + ("" if held is record else f" (version {held.version})")
            content = privacy.strip_private(held.content)
            if not content:
                raise InvalidRequest(f"{where} is empty once its <private> spans are removed")
            if secret_check:
                fields = [("content", content), ("kind", held.kind), ("path", held.path)]
                privacy.refuse_secrets([*fields, *(("tags", t) for t in held.tags)], where=f"{where}: ")
        if ports.store.get(scope, record.id) is not None:
            existing.append(record.id)
    if foreign and not force_workspace:
        raise InvalidRequest(
            f"the records come from workspace {', '.join(sorted(foreign))}, not {target.workspace_id} "
            "(the target project's); pass --force-workspace to import them there anyway"
        )
    if existing and on_existing == "fail":
        shown = ", ".join(existing[:5]) + (" …" if len(existing) > 5 else "")
        raise Conflict(
            f"{len(existing)} of these memories already exist in project {target.slug!r} ({shown}); "
            "nothing was imported. Pass --on-existing skip to import the others."
        )
    return existing


def import_records(
    ports: Ports,
    target: Project,
    source: Callable[[], Iterable[MemoryRecord | Entry]],
    *,
    force_workspace: bool = False,
    on_existing: OnExisting = "fail",
    embedder: Embedder | None = None,
) -> ImportReport:
    """Check the whole input (``source()``), then write each record as it is into ``target``
    (with a vector of ``embedder``: an export carries none; the index follows the store), and its
    kept versions into its history. ``source`` is called twice, so the input is read once to
    check, once to write."""
    skip = set(check_import(ports, target, source(), force_workspace=force_workspace, on_existing=on_existing))
    report = ImportReport(target)
    for item in source():
        entry = _entry(item)
        record = entry.record
        if record.id in skip:
            report.skipped.append(record.id)
            continue
        home = {"workspace_id": target.workspace_id, "project_id": target.id}
        moved = record.model_copy(update={**home, "content": privacy.strip_private(record.content)})
        versions = [v.model_copy(update={**home, "content": privacy.strip_private(v.content)}) for v in entry.versions]
        try:
            restore(ports, moved, embedder, versions=versions, dropped=entry.dropped)
        except VersionConflict:
            if on_existing == "skip":  # written meanwhile by someone else
                report.skipped.append(record.id)
                continue
            raise Conflict(
                f"memory {record.id} appeared in project {target.slug!r} during the import; "
                f"{len(report.imported)} were imported before it"
            ) from None
        report.imported.append(record.id)
    return report


def restore(
    ports: Ports,
    record: MemoryRecord,
    embedder: Embedder | None = None,
    *,
    versions: Iterable[MemoryRecord] = (),
    dropped: int = 0,
) -> None:
    """Store a record exactly as it is (VersionConflict when its id exists in its project), with
    a vector of ``embedder``; the index follows the store, as for any write. When the embedder
    fails the record is marked for repair (cleanup embeds it). Then its history: ``versions``
    (newest first) kept oldest first, ``dropped`` counted with the first — after the record, so
    a conflict adds nothing to another memory's history (SQLite: all in one transaction)."""
    record = with_embedding(embedder, record)
    with ports.store.unit_of_work():
        ports.store.create(record)
        if needs_embedding(embedder, record):
            ports.store.mark_for_repair(record)
        for n, version in enumerate(reversed(list(versions))):
            ports.store.keep_version(version, expires_at=record.expires_at, dropped=dropped if n == 0 else 0)


@dataclass
class Outcome:
    """What an import from another tool did (or, dry, would do) with one unit of its source."""

    position: str
    result: Literal["added", "skipped", "refused"]
    reason: str | None = None
    memory_id: str | None = None


def import_items(
    ports: Ports,
    target: Project,
    items: Iterable[ImportItem],
    *,
    source: str,
    embedder: Embedder | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> Iterator[Outcome]:
    """Add memories read from another tool (``mnemo.importers``) to ``target``, one by one, under
    ``memory_add``'s rules: its limits (the arguments are validated as ``MemoryAddArgs``), the
    ``<private>`` stripping, the workspace's secret check, and its deduplication — a memory with
    the content, kind and path of a live one of the project is skipped, so a second import of the
    same source adds nothing. The source's times are kept (the import's time when it has none).
    With ``dry_run`` nothing is written; the outcomes are those a run would have."""
    from pydantic import ValidationError

    from mnemo import text
    from mnemo.errors import SecretDetected
    from mnemo.ids import memory_id
    from mnemo.models.tools import MemoryAddArgs
    from mnemo.ports import Duplicate
    from mnemo.service.vectors import embed_content

    now = now or utc_now()
    workspace = ports.tenants.get_workspace(target.workspace_id)
    secret_check = workspace.secret_check if workspace is not None else True
    held = {text.fingerprint(r.content, r.kind, r.path, r.team_id) for r in export_project(ports, target, now=now)}
    for item in items:
        content = privacy.strip_private(item.content)
        if not content.strip():
            yield Outcome(item.position, "refused", "empty once its <private> spans are removed")
            continue
        try:
            args = MemoryAddArgs(content=content, kind=item.kind, tags=list(item.tags), path=item.path, source=source)
            if secret_check:
                privacy.refuse_secrets(
                    [
                        ("content", args.content),
                        ("kind", args.kind),
                        ("path", args.path),
                        *(("tags", tag) for tag in args.tags),
                    ]
                )
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            yield Outcome(item.position, "refused", f"{where}: {first['msg']}")
            continue
        except SecretDetected as exc:
            yield Outcome(item.position, "refused", str(exc))
            continue
        mark = text.fingerprint(args.content, args.kind, args.path, None)
        if mark in held:
            yield Outcome(item.position, "skipped", "already in the project")
            continue
        held.add(mark)
        if dry_run:
            yield Outcome(item.position, "added")
            continue
        created = min(item.created_at or now, now)
        record = MemoryRecord(
            id=memory_id(),
            workspace_id=target.workspace_id,
            project_id=target.id,
            content=args.content,
            kind=args.kind,
            tags=args.tags,
            path=args.path,
            source=source,
            version=1,
            created_at=created,
            updated_at=max(created, min(item.updated_at or created, now)),
            embedding=embed_content(embedder, args.content),
        )
        try:
            with ports.store.unit_of_work():
                ports.store.create(record, dedupe=True)
                if needs_embedding(embedder, record):
                    ports.store.mark_for_repair(record)
        except Duplicate:  # written meanwhile by someone else
            yield Outcome(item.position, "skipped", "already in the project")
            continue
        yield Outcome(item.position, "added", memory_id=record.id)
