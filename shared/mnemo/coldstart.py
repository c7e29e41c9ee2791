"""A Lambda cold start without the garbage collector's passes over what it is loading.

Each handler imports this module first and calls :func:`done` after its last definition. In
between, Python's cyclic garbage collector is paused: importing a function's modules allocates
hundreds of thousands of objects that live as long as the process (modules, classes, functions,
pydantic schemas), and each collection the allocations trigger walks them all for nothing, in
every cold start (bench/results/coldstart-built.md). :func:`done` turns the
collector back on and freezes what the import built (``gc.freeze``), so later collections skip
it too.

Only inside Lambda (``LAMBDA_TASK_ROOT`` is set): tests, the local server and the CLI import the
handlers in long-lived processes whose collector is left alone while they load. A ``mnemo serve``
worker and ``mnemo mcp`` call :func:`freeze` once warm, for the same reason as :func:`done`: a
full collection over what a warm server holds landed on about one ``recall`` in 75 and made its
p99 (docs/scale.md).
"""

from __future__ import annotations

import gc
import os

_in_lambda = bool(os.environ.get("LAMBDA_TASK_ROOT"))
_paused = _in_lambda and gc.isenabled()
if _paused:
    gc.disable()


def done() -> None:
    """The handler module is loaded: resume collecting, and never walk what it loaded."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def built() -> None:
    """Inside Lambda, the process's service was just built, on its first request (the AWS clients
    and their service models: ≈ 46,000 objects more on the read function): freeze that too,
    without a collection (the request is waiting). A full collection walking them cost 13–25 ms
    of CPU, 0.1 ms once frozen (docs/scale.md). Outside Lambda, nothing: a long-lived process
    calls :func:`freeze` once warm."""
    if _in_lambda:
        gc.freeze()


def freeze() -> None:
    """A long-lived process is warm: collect what starting left behind, then keep what it holds
    (modules, schemas, the model, the store's connection) out of every later collection's walk."""
    gc.collect()
    gc.freeze()
