"""``mnemo hook <event>``: the command Claude Code starts once per event (:mod:`mnemo.hook`)."""

from __future__ import annotations

import os
import sys

from mnemo.hook.events import EVENTS, run


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in EVENTS:
        sys.stderr.write(f"usage: mnemo hook {{{','.join(EVENTS)}}}  (the event's JSON on stdin)\n")
        return 2
    return run(argv[0], sys.stdin, sys.stdout, sys.stderr, dict(os.environ))
