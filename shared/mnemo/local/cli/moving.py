"""``mnemo import --from SOURCE PATH``: memories kept by another tool, into a project
(docs/operations.md, "Moving to Mnemo"). The source's reader (``mnemo.importers``) turns the
path into items and problems; the service adds the items under ``memory_add``'s rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemo.service.transfer import Outcome

from mnemo.local.cli.context import project_of, service
from mnemo.local.cli.output import EXIT_ERROR, EXIT_OK, Console, UsageError


def field_pairs(values: list[str] | None) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values or []:
        for pair in value.split(","):
            name, sep, field = pair.partition("=")
            if not sep or not name.strip() or not field.strip():
                raise UsageError(f"--map takes FIELD=NAME pairs (e.g. content=text), not {pair!r}")
            pairs[name.strip()] = field.strip()
    return pairs


def cmd_import_from(args: argparse.Namespace, console: Console) -> int:
    from mnemo import importers
    from mnemo.importers import table
    from mnemo.service import transfer

    if args.path is None:
        raise UsageError(f"--from {args.source} needs the PATH of the {args.source} store to read")
    if args.input is not None:
        raise UsageError("--input reads Mnemo's own export; with --from give the PATH instead")
    options: dict[str, Any] = {}
    if args.source in ("jsonl", "csv"):
        try:
            options["fields"] = table.field_map(field_pairs(args.map))
        except ValueError as exc:
            raise UsageError(f"--map: {exc}") from None
    elif args.map:
        raise UsageError(f"--map is for jsonl and csv; {args.source}'s mapping is fixed (docs/operations.md)")
    path = Path(args.path)
    if not path.exists():
        raise UsageError(f"{path} does not exist")
    read = importers.reader(args.source)
    try:
        entries = list(read(path, **options))  # the whole source first: a wrong format refuses at once
    except importers.WrongFormat as exc:
        from mnemo.errors import InvalidRequest

        raise InvalidRequest(f"{exc}; nothing was imported") from None
    svc = service(args)
    project = project_of(svc, args)
    items = [e for e in entries if isinstance(e, importers.Item)]
    outcomes: list[Outcome] = [
        transfer.Outcome(e.position, "refused", e.message) for e in entries if isinstance(e, importers.Problem)
    ]
    bar = Progress(len(items), console.err) if not console.as_json and console.err.isatty() else None
    for outcome in transfer.import_items(
        svc.ports, project, items, source=args.source, embedder=svc.embedder, dry_run=args.dry_run
    ):
        outcomes.append(outcome)
        if bar is not None:
            bar.step()
    if bar is not None:
        bar.done()
    return _report(console, project, outcomes, dry_run=args.dry_run)


def _report(console: Console, project: Any, outcomes: list[Outcome], *, dry_run: bool) -> int:
    by = {name: [o for o in outcomes if o.result == name] for name in ("added", "skipped", "refused")}
    payload = {
        "project": {"id": project.id, "slug": project.slug},
        "dry_run": dry_run,
        "added": len(by["added"]),
        "skipped": [{"position": o.position, "reason": o.reason} for o in by["skipped"]],
        "refused": [{"position": o.position, "reason": o.reason} for o in by["refused"]],
    }
    verb = "Would add" if dry_run else "Added"
    lines = [
        f"{verb} {len(by['added'])} memories to project {project.slug!r} ({project.id}); "
        f"skipped {len(by['skipped'])} already there; refused {len(by['refused'])}."
    ]
    if dry_run:
        lines += [f"  add      {o.position}" for o in by["added"]]
    lines += [f"  skip     {o.position}: {o.reason}" for o in by["skipped"]] if dry_run else []
    lines += [f"  refused  {o.position}: {o.reason}" for o in by["refused"]]
    console.result(payload, "\n".join(lines))
    # a source of which nothing could be read is a failure; one already imported is not
    return EXIT_ERROR if by["refused"] and not (by["added"] or by["skipped"]) else EXIT_OK


class Progress:
    """A one-line bar on a terminal (stderr), redrawn at each hundredth of the way."""

    WIDTH = 30

    def __init__(self, total: int, out: IO[str] = sys.stderr) -> None:
        self.total, self.done_count, self.out, self.shown = total, 0, out, -1

    def step(self) -> None:
        self.done_count += 1
        share = self.done_count * 100 // max(self.total, 1)
        if share != self.shown:
            self.shown = share
            filled = self.WIDTH * self.done_count // max(self.total, 1)
            self.out.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done_count}/{self.total}")
            self.out.flush()

    def done(self) -> None:
        if self.shown >= 0:
            self.out.write("\n")
            self.out.flush()
