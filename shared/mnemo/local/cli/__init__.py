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

#: Defaults for libraries that take their configuration from the environment only, set before
#: anything imports them (an explicit setting wins); Mnemo's own settings are never written there
#: (``context.configure`` hands them to the runtime). numpy's OpenBLAS starts a thread per core,
#: whose threads spin on the small products of one query's embedding (``MNEMO_EMBEDDER=minilm``;
#: docs/retrieval.md, "minilm"). Outside Lambda Powertools has no X-Ray daemon to trace to, and its
#: metrics would print EMF blobs to the console (``mnemo serve --metrics`` collects them instead).
LIBRARY_DEFAULTS = {
    "OPENBLAS_NUM_THREADS": "1",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "Mnemo",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}


def apply_library_defaults() -> None:
    """Set :data:`LIBRARY_DEFAULTS` where the environment has no value (before the libraries load):
    the CLI does it first thing, and so does a bench that builds the service as the CLI does."""
    for name, value in LIBRARY_DEFAULTS.items():
        os.environ.setdefault(name, value)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        # Claude Code starts a hook as a cold process on every prompt: it imports nothing else
        from mnemo.local.cli.hook import main as hook_main

        return hook_main(argv[1:])
    apply_library_defaults()
    from mnemo.local.cli.parser import build_parser

    args = build_parser().parse_args(argv)
    return int(args.func(args))
