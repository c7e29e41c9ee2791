"""The ``mnemo`` command line: the local server, and administration straight on a backend.

Administration commands act as the operator (they open the backend itself, no API key), so they
can manage every workspace; docs/operations.md describes them. Exit codes:

* 0 -- done;
* 1 -- refused or failed (not found, conflict, invalid value, import refused, internal error);
* 2 -- usage: unknown command or option, missing argument, ambiguous workspace;
* 3 -- the backend is unavailable (cannot open or reach it); retrying later may work.

Results go to stdout (``--json``: one JSON document; ``export``: JSON lines), messages and
errors to stderr (``--json``: ``{"message", "code"}``).

One module per job: ``parser`` (the commands and options), ``server`` (serve, cleanup), ``admin``
(workspaces, projects, keys, limits), ``transfer`` (export, import), ``context`` (backend, workspace
and project of a command) and ``output`` (text or JSON, exit codes).
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.local.cli.parser import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))
