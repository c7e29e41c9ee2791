"""Time in the question: read English and Chinese time expressions into a window on ``updated_at``.

``read(query, now, tz)`` finds expressions such as *today*, *yesterday*, *last week*, *this
month*, *in March*, *since Monday*, *3 days ago*, *in 2025*, *the past 7 days*, ``2026-03-05``
and 今天, 昨天, 前天, 上周, 本周, 这个月, 上个月, 三月, 2025年3月, 三天前, 最近7天, 自周一以来,
周一以后, 三月之前 … and returns the half-open window ``[after, before)`` they name, the query
without their words, and where they were. Calendar units are read in ``tz`` (a week starts on
Monday, ISO 8601); the window is returned in UTC. A name of a month or weekday alone is not read
("march", "May", "Monday standup"): it needs a word that makes it time (*in*, *since*, *on*,
*last*, *this*, *before*, a year, or the Chinese 月 / 周 / 星期 forms). A past month or weekday
means the latest one not after today (*in March* in February 2026 is March 2025).

Several expressions narrow each other (their windows intersect); when they do not overlap, the
first one read counts. The reader is pure, never raises on any string, and never looks at
anything but its arguments.

No library is used: the parsers measured (bench/results/2026-12-03-timewords.md) either do not
return the span to remove, read no Chinese, or cost more import time than the hook's budget."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, tzinfo

from mnemo.timewords import chinese, english
from mnemo.timewords.chinese import cjk
from mnemo.timewords.days import Meaning

__all__ = ["Reading", "Span", "Window", "read", "zone"]


def zone(name: str) -> tzinfo | None:
    """The IANA time zone of that name (UTC without a look-up), None when there is none."""
    if name == "UTC":
        return UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


@dataclass(frozen=True)
class Window:
    """``[after, before)`` in UTC; either end may be open (None), never both."""

    after: datetime | None
    before: datetime | None

    def intersect(self, other: Window) -> Window | None:
        after = _later(self.after, other.after)
        before = _earlier(self.before, other.before)
        if after is not None and before is not None and after >= before:
            return None
        return Window(after, before)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Reading:
    window: Window | None
    query: str
    spans: tuple[Span, ...]


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)


def _earlier(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def _instant(d: date, tz: tzinfo) -> datetime:
    """Local midnight of ``d`` in ``tz``, in UTC (clamped to the datetime range)."""
    try:
        return datetime.combine(d, time(), tz).astimezone(UTC)
    except (OverflowError, ValueError):
        return datetime.max.replace(tzinfo=UTC) if d.year > 1 else datetime.min.replace(tzinfo=UTC)


def _window(meaning: Meaning, tz: tzinfo) -> Window:
    (first, end), bound = meaning
    if bound == "since":
        return Window(_instant(first, tz), None)
    if bound == "after":
        return Window(_instant(end, tz), None)
    if bound == "before":
        return Window(None, _instant(first, tz))
    return Window(_instant(first, tz), _instant(end, tz))


def _remove(query: str, spans: list[Span]) -> str:
    """The query without the spans: a space where one stood between words, none between CJK
    characters (Chinese has no spaces to keep)."""
    out, at = "", 0
    for span in spans:
        out += query[at : span.start]
        rest = query[span.end :]
        if out and rest and not out[-1].isspace() and not rest[0].isspace():
            out += "" if cjk(out[-1]) and cjk(rest[0]) else " "
        at = span.end
    out += query[at:]
    return " ".join(out.split())


def read(query: str, now: datetime, tz: tzinfo = UTC) -> Reading:
    """The window the query's time expressions name (None: none read), the query without them,
    and where they were. ``now`` is aware (a naive one is taken as UTC)."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    try:
        today = now.astimezone(tz).date()
    except (OverflowError, ValueError):
        today = now.date()
    found: list[tuple[Span, Window]] = []
    for pattern, meaning_of in ((english.PATTERN, english.meaning), (chinese.PATTERN, chinese.meaning)):
        for m in pattern.finditer(query):
            if m.end() == m.start() or (pattern is chinese.PATTERN and chinese.month_in_word(query, m)):
                continue
            try:
                meaning = meaning_of(m, today)
            except (OverflowError, ValueError):
                meaning = None
            if meaning is None:
                continue
            start, end = m.span()
            while start < end and query[start].isspace():
                start += 1
            span = Span(start, end, query[start:end])
            if any(s.start < span.end and span.start < s.end for s, _ in found):
                continue
            found.append((span, _window(meaning, tz)))
    if not found:
        return Reading(None, query, ())
    found.sort(key=lambda f: f[0].start)
    window = found[0][1]
    for _, other in found[1:]:
        narrowed = window.intersect(other)
        if narrowed is not None:
            window = narrowed
    spans = [s for s, _ in found]
    return Reading(window, _remove(query, spans), tuple(spans))
