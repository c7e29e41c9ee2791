"""What the candidate parsers read of the time questions, and whether they return the span to
remove: dateparser's ``search_dates`` returns the matched text, parsedatetime's ``nlp`` offsets,
jionlp's ``parse_time`` reads a whole string (Chinese only). They are not dependencies of the
project: run this with a throwaway virtualenv's interpreter
(``pip install dateparser==1.5.0 parsedatetime==2.6 jionlp==1.5.31``):
``/tmp/venv/bin/python bench/timewords_candidates.py dateparser|parsedatetime|jionlp``.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from datetime import datetime
from typing import Any

NOW = datetime(2026, 12, 3, 15, 0)
QUESTIONS = [
    *("what did we decide last week?", "today", "yesterday's deploy", "this week", "last month"),
    *("in March", "since Monday", "3 days ago", "in 2025", "the past 7 days"),
    *("march madness", "Monday standup", "we may deploy"),
    *("今天", "昨天的部署", "上周我们决定了什么", "本周", "这个月", "上个月"),
    *("三月", "三天前", "自周一以来", "2025年3月", "最近7天"),
]


def parser(which: str) -> Callable[[str], Any]:
    if which == "dateparser":
        from dateparser.search import search_dates

        settings = {"RELATIVE_BASE": NOW, "PREFER_DATES_FROM": "past"}
        return lambda q: search_dates(q, settings=settings, languages=["en", "zh"])
    if which == "parsedatetime":
        import parsedatetime

        calendar = parsedatetime.Calendar()
        return lambda q: calendar.nlp(q, sourceTime=NOW)
    import jionlp

    def parse(q: str) -> Any:
        try:
            return jionlp.parse_time(q, time_base=NOW.timestamp())
        except ValueError as exc:
            return f"error {type(exc).__name__}"

    return parse


def main() -> None:
    warnings.filterwarnings("ignore")
    which = sys.argv[1]
    started = time.perf_counter()
    parse = parser(which)
    print(f"# {which}: import {time.perf_counter() - started:.2f} s wall")
    for q in QUESTIONS:
        started = time.process_time()
        answer = parse(q)
        print(f"{q!r}: {answer!r} ({(time.process_time() - started) * 1000:.1f} ms CPU)")


if __name__ == "__main__":
    main()
