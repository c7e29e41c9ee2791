"""``mnemo export`` and ``mnemo import``: a project's memories as JSON lines, losslessly."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

from mnemo.local.cli.context import project_of, service
from mnemo.local.cli.output import EXIT_OK, Console


def cmd_export(args: argparse.Namespace, console: Console) -> int:
    from mnemo.service import transfer

    svc = service(args)
    project = project_of(svc, args)
    count = 0
    if args.format == "markdown":
        from pathlib import Path

        from mnemo.local.cli import notes
        from mnemo.local.cli.output import UsageError

        folder = args.dir or args.output
        if not folder:
            raise UsageError("--format markdown writes a folder: give its DIR")
        records = transfer.export_project(svc.ports, project, include_expired=args.include_expired)
        count = notes.write(records, Path(folder))
        console.note(f"Exported {count} memories of project {project.slug!r} ({project.id}) as notes in {folder}.")
        if console.as_json:
            summary = {"exported": count, "project": {"id": project.id, "slug": project.slug}}
            console.err.write(json.dumps(summary) + "\n")
        return EXIT_OK
    if args.dir:
        from mnemo.local.cli.output import UsageError

        raise UsageError("DIR goes with --format markdown (JSON lines: --output FILE)")
    from mnemo.models.admin import ExportedMemory

    with _open_output(args.output) as out:
        records = transfer.export_project(svc.ports, project, include_expired=args.include_expired)
        for entry in transfer.with_history(svc.ports, records):
            out.write(ExportedMemory.of(entry.record, entry.versions, entry.dropped).model_dump_json() + "\n")
            count += 1
    summary = {"exported": count, "project": {"id": project.id, "slug": project.slug}}
    if console.as_json:
        console.err.write(json.dumps(summary) + "\n")
    else:
        console.note(f"Exported {count} memories of project {project.slug!r} ({project.id}).")
    return EXIT_OK


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    from mnemo.service import transfer

    svc = service(args)
    project = project_of(svc, args)
    with _open_input(args.input) as raw, tempfile.SpooledTemporaryFile(max_size=16 << 20, mode="w+b") as spool:
        lines = 0
        for number, line in enumerate(raw, 1):
            if line.strip():
                _parse_line(line, number)  # refuse a bad file before anything is written
                spool.write(line.encode("utf-8"))
                lines += 1

        def records() -> Iterator[Any]:
            spool.seek(0)
            for number, line in enumerate(spool, 1):
                yield _parse_line(line.decode("utf-8"), number)

        report = transfer.import_records(
            svc.ports,
            project,
            records,
            force_workspace=args.force_workspace,
            on_existing=args.on_existing,
            embedder=svc.embedder,
        )
    payload = {
        "project": {"id": project.id, "slug": project.slug},
        "imported": len(report.imported),
        "skipped": report.skipped,
    }
    text = f"Imported {len(report.imported)} memories into project {project.slug!r} ({project.id})"
    text += f"; skipped {len(report.skipped)} that already existed." if report.skipped else "."
    console.result(payload, text)
    return EXIT_OK


def _parse_line(line: str, number: int) -> Any:
    from pydantic import ValidationError

    from mnemo.errors import InvalidRequest
    from mnemo.models.admin import ExportedMemory
    from mnemo.service.transfer import Entry

    try:
        exported = ExportedMemory.model_validate_json(line)
        return Entry(exported.record(), tuple(exported.versions()), exported.history_dropped)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise InvalidRequest(f"input line {number}: {where}: {first['msg']}; nothing was imported") from None


@contextlib.contextmanager
def _open_output(path: str | None) -> Iterator[IO[str]]:
    if path in (None, "-"):
        yield sys.stdout
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8") as fh:  # type: ignore[arg-type]
        yield fh


@contextlib.contextmanager
def _open_input(path: str | None) -> Iterator[IO[str]]:
    if path in (None, "-"):
        yield sys.stdin
        return
    with open(path, encoding="utf-8") as fh:  # type: ignore[arg-type]
        yield fh
