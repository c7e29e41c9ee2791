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
(workspaces, projects, keys, limits, privacy), ``transfer`` (export, import), ``hook`` (Claude Code's hooks:
standard library only, imported alone), ``context`` (backend, workspace and project of a command)
and ``output`` (text or JSON, exit codes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

#: numpy's OpenBLAS starts a thread per core and, for the small products of one query's embedding
#: (``MNEMO_EMBEDDER=minilm``), its threads spin: ≈ 500 ms per memory against 24-29 ms on one
#: thread on a shared two-core machine (docs/retrieval.md, "minilm"). Set before anything imports
#: numpy; an explicit setting wins.
THREAD_DEFAULTS = {"OPENBLAS_NUM_THREADS": "1"}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        # Claude Code starts a hook as a cold process on every prompt: it imports nothing else
        from mnemo.local.cli.hook import main as hook_main

        return hook_main(argv[1:])
    for name, value in THREAD_DEFAULTS.items():
        os.environ.setdefault(name, value)
    from mnemo.local.cli.parser import build_parser

    args = build_parser().parse_args(argv)
    return int(args.func(args))
