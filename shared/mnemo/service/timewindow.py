"""Time in the question for search_memory, recall and recall_context (docs/retrieval.md).

``timed(tool)`` wraps a retrieval tool: with ``parse_time`` (the default) it reads the query's
time expressions (:mod:`mnemo.timewords`, in the caller's ``tz``, relative to the call's ``now``)
into an ``updated_after`` / ``updated_before`` window and runs the tool on the query without
those words, limited to the window. An explicit updated_after / updated_before wins (the words
are still not search terms). Reading never turns an answer into a miss: when nothing matches the
query without its time words in the window, the tool runs again exactly as with
``parse_time: false`` and says so (``note``). The
result's ``time_window`` always shows what was read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from mnemo.errors import InvalidRequest
from mnemo.models.retrieval import RecallContextResult, RetrievalArgs, RetrievalResult, TimeWindow
from mnemo.service.context import CallContext

A = TypeVar("A", bound=RetrievalArgs)
R = TypeVar("R", RetrievalResult, RecallContextResult)


def _answered(result: RetrievalResult | RecallContextResult) -> bool:
    if isinstance(result, RetrievalResult):
        return result.matched
    return bool(result.references)


def timed(tool: Callable[[CallContext, A], R]) -> Callable[[CallContext, A], R]:
    def run(ctx: CallContext, args: A) -> R:
        if not args.parse_time:
            return tool(ctx, args)
        # imported on the first call that reads time, not at start: the parser's patterns cost a
        # process about 10 ms to compile, which a handler that never searches need not pay
        from mnemo import timewords

        tz = timewords.zone(args.tz)
        if tz is None:
            raise InvalidRequest(
                "tz must be an IANA time zone name, such as UTC or Asia/Shanghai",
                details=[{"loc": ["tz"], "type": "value_error"}],
            )
        reading = timewords.read(args.query, ctx.now, tz)
        window = reading.window
        if window is None:
            return tool(ctx, args)
        explicit = args.updated_after is not None or args.updated_before is not None
        update: dict[str, object] = {"query": reading.query}
        if not explicit:
            update |= {"updated_after": window.after, "updated_before": window.before}
        result = tool(replace(ctx, trial=True), args.model_copy(update=update))
        note = "explicit_window" if explicit else "window"
        if not _answered(result):
            result = tool(ctx, args)
            note = note if explicit else "window_empty"
        return result.model_copy(
            update={
                "time_window": TimeWindow(
                    expressions=[span.text for span in reading.spans],
                    updated_after=window.after,
                    updated_before=window.before,
                    tz=args.tz,
                    applied=note == "window",
                    note=note,
                )
            }
        )

    run.__name__ = getattr(tool, "__name__", "timed")
    run.__doc__ = tool.__doc__
    return run
