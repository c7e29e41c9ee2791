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

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

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


# ---- calendar arithmetic (local dates; converted to UTC instants at the end) -----------------

#: a local range of days [first, last + 1)
_Days = tuple[date, date]


def _day(d: date) -> _Days:
    return d, d + timedelta(days=1)


def _week(d: date) -> _Days:
    start = d - timedelta(days=d.weekday())
    return start, start + timedelta(days=7)


def _month_start(year: int, month: int) -> date:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return date(year, month, 1)


def _month(year: int, month: int) -> _Days:
    return _month_start(year, month), _month_start(year, month + 1)


def _year(year: int) -> _Days:
    return date(year, 1, 1), date(year + 1, 1, 1)


def _past_month(today: date, month: int, year: int | None) -> _Days:
    if year is not None:
        return _month(year, month)
    return _month(today.year if month <= today.month else today.year - 1, month)


def _past_weekday(today: date, weekday: int, *, strictly_before: bool = False) -> _Days:
    back = (today.weekday() - weekday) % 7
    if back == 0 and strictly_before:
        back = 7
    return _day(today - timedelta(days=back))


def _ago(today: date, unit: str, n: int) -> _Days:
    if unit == "day":
        return _day(today - timedelta(days=n))
    if unit == "week":
        return _week(today - timedelta(days=7 * n))
    if unit == "month":
        return _month(today.year, today.month - n)
    return _year(today.year - n)


def _last_n(today: date, unit: str, n: int) -> _Days:
    """The past n units up to and including today: "the last 7 days" is today and the 6 before."""
    end = today + timedelta(days=1)
    if unit == "day":
        return end - timedelta(days=n), end
    if unit == "week":
        return end - timedelta(days=7 * n), end
    return end - timedelta(days=(30 if unit == "month" else 365) * n), end


# ---- vocabulary -------------------------------------------------------------------------------

_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_WEEKDAYS = {
    name: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
}
_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month"}
_UNITS |= {"year": "year", "years": "year"}

_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_NUMBER = r"\d{1,3}|" + "|".join(sorted((re.escape(k) for k in _NUMBERS), key=len, reverse=True))
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_NUMBER = r"\d{1,3}|[零〇一二两三四五六七八九十]{1,3}"
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_CN_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}


def _cn_int(token: str) -> int | None:
    """A number written in digits or in Chinese (up to 99): 3, 三, 十二, 二十, 二十五."""
    if token.isdigit():
        return int(token)
    if "十" in token:
        tens, _, ones = token.partition("十")
        if "十" in ones:
            return None
        high = _CN_DIGITS.get(tens, -1) if tens else 1
        low = _CN_DIGITS.get(ones, -1) if ones else 0
        return None if high < 0 or low < 0 else high * 10 + low
    if len(token) != 1:
        return None
    return _CN_DIGITS.get(token)


def _en_int(token: str) -> int | None:
    token = " ".join(token.lower().split())
    return int(token) if token.isdigit() else _NUMBERS.get(token)


# ---- the expressions: each pattern, and what it means given today --------------------------

#: what a matched expression names: a range of local days, and which of its ends bound the window
#: ("both", "since": only the start, "before": only the end)
_Meaning = tuple[_Days, str]


def _en_point(m: re.Match[str], today: date) -> _Days | None:
    """A point in time English names after *since*/*before*/*on*: a day, week, month or year."""
    g = m.groupdict()
    if g.get("rel"):
        rel = g["rel"].lower()
        return {
            "today": _day(today),
            "tonight": _day(today),
            "yesterday": _day(today - timedelta(days=1)),
            "last night": _day(today - timedelta(days=1)),
            "this morning": _day(today),
            "this afternoon": _day(today),
            "this evening": _day(today),
            "the day before yesterday": _day(today - timedelta(days=2)),
        }.get(" ".join(rel.split()))
    if g.get("which"):
        which = g["which"].lower()
        unit = g["unit1"].lower()
        shift = {"this": 0, "current": 0, "last": -1, "past": -1, "previous": -1}[which]
        if unit == "week":
            return _week(today + timedelta(days=7 * shift))
        if unit == "month":
            return _month(today.year, today.month + shift)
        return _year(today.year + shift)
    if g.get("wd"):
        weekday = _WEEKDAYS[g["wd"].lower()]
        mod = (g.get("wdmod") or "").lower()
        if mod == "this":
            return _day(_week(today)[0] + timedelta(days=weekday))
        return _past_weekday(today, weekday, strictly_before=mod == "last")
    if g.get("mon"):
        month = _MONTHS[g["mon"].lower()]
        year = int(g["mony"]) if g.get("mony") else None
        if g.get("mond"):
            day = int(g["mond"])
            y = year if year is not None else today.year
            try:
                d = date(y, month, day)
            except ValueError:
                return None
            if year is None and d > today:
                try:
                    d = date(y - 1, month, day)
                except ValueError:
                    return None
            return _day(d)
        return _past_month(today, month, year)
    if g.get("iso"):
        try:
            return _day(date(int(g["isoy"]), int(g["isom"]), int(g["isod"])))
        except ValueError:
            return None
    if g.get("yr"):
        return _year(int(g["yr"]))
    return None


_EN_POINT = (
    r"(?P<rel>the\s+day\s+before\s+yesterday|today|tonight|yesterday|last\s+night"
    r"|this\s+(?:morning|afternoon|evening))"
    r"|(?P<which>this|current|last|past|previous)\s+(?P<unit1>week|month|year)"
    rf"|(?:(?P<wdmod>this|last|past)\s+)?(?P<wd>{_WEEKDAY})"
    rf"|(?P<mon>{_MONTH})\.?(?:\s+(?P<mond>[0-3]?\d)(?:st|nd|rd|th)?)?(?:,?\s+(?P<mony>{_YEAR}))?"
    r"|(?P<iso>(?P<isoy>\d{4})-(?P<isom>\d\d)-(?P<isod>\d\d))"
    rf"|(?P<yr>{_YEAR})"
)

#: English: "since X" / "before X" / "in|on|during X" / a bare relative day or "last week"
_EN = re.compile(
    rf"\b(?P<lead>since|after|before|until|till|in|on|during|from|of|over)?\s*(?:(?P<the>the)\s+)?(?P<point>{_EN_POINT})\b(?:['’]s\b)?"
    rf"|\b(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT})\s+ago\b"
    rf"|\b(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:last|past)\s+(?P<ln>{_NUMBER})\s+(?P<lunit>{_UNIT})\b",
    re.IGNORECASE,
)


def _en(m: re.Match[str], today: date) -> _Meaning | None:
    g = m.groupdict()
    if g.get("n"):
        n = _en_int(g["n"])
        return None if n is None or n > 1000 else (_ago(today, _UNITS[g["unit"].lower()], n), "both")
    if g.get("ln"):
        n = _en_int(g["ln"])
        return None if n is None or n < 1 or n > 1000 else (_last_n(today, _UNITS[g["lunit"].lower()], n), "both")
    lead = (g.get("lead") or "").lower()
    # a month, weekday or year alone is too often not time ("march", "May", "Monday standup", "2025
    # errors"): it needs a leading word, a modifier, a day or a year with it
    bare = not lead and not g.get("wdmod") and not g.get("mond") and not g.get("mony")
    if bare and (g.get("wd") or g.get("mon") or g.get("yr")):
        return None
    point = _en_point(m, today)
    if point is None:
        return None
    if lead in ("since", "after", "from"):
        return point, "since" if lead != "after" else "after"
    if lead in ("before", "until", "till"):
        return point, "before"
    return point, "both"


#: Chinese: 今天 / 昨天 / 前天 / 上周 / 本周 / 这个月 / 上个月 / 今年 / 去年 / 三月 / 2025年3月 /
#: 三天前 / 最近7天 / 周一 / 上周一 / 3月5日 / 2026年, with 自…以来 / …以来 / …之后 / 从…起 /
#: …之前 / …以前 around them
_CN_POINT = (
    r"(?P<crel>今天|今日|今早|今晚|昨天|昨日|昨晚|前天|大前天)"
    r"|(?P<cwk>上上周|上周|本周|这周|上个?星期|这个?星期|本星期|上个?礼拜|这个?礼拜|下周)"
    r"(?:(?P<cwkd>[一二三四五六日天末]))?"
    r"|(?P<cmo>上上个月|上个月|上月|本月|这个月|这月)"
    r"|(?P<cyr>今年|去年|前年)"
    rf"|(?:(?P<cy>\d{{4}})年)?(?P<cm>{_CN_NUMBER})月份?(?:(?P<cd>{_CN_NUMBER})[日号])?"
    r"|(?P<cyo>\d{4})年"
    r"|(?:周|星期|礼拜)(?P<cwd>[一二三四五六日天])"
)
_CN = re.compile(
    rf"(?P<cnsince>自从|自|从)?(?P<cpoint>{_CN_POINT})(?P<ctail>以来|之后|以后|起|开始|之前|以前)?"
    rf"|(?P<cn>{_CN_NUMBER})(?P<cunit>天|日|周|个?星期|个?礼拜|个?月|年)(?P<cago>前|之前|以前)"
    rf"|(?:最近|过去|近|前)(?P<cln>{_CN_NUMBER})(?P<clunit>天|日|周|个?星期|个?礼拜|个?月|年)(?:内|里|以来|来)?"
)


def _cn_unit(token: str) -> str:
    return _CN_UNITS[token.removeprefix("个")]


def _cn_point(g: dict[str, str | None], today: date) -> _Days | None:
    if crel := g.get("crel"):
        back = {"今天": 0, "今日": 0, "今早": 0, "今晚": 0, "昨天": 1, "昨日": 1, "昨晚": 1, "前天": 2, "大前天": 3}
        return _day(today - timedelta(days=back[crel]))
    if cwk := g.get("cwk"):
        shift = -2 if cwk.startswith("上上") else -1 if cwk.startswith("上") else 1 if cwk.startswith("下") else 0
        start = _week(today)[0] + timedelta(days=7 * shift)
        if wd := g.get("cwkd"):
            return (
                _day(start + timedelta(days=_CN_WEEKDAY[wd]))
                if wd != "末"
                else (start + timedelta(days=5), start + timedelta(days=7))
            )
        return start, start + timedelta(days=7)
    if cmo := g.get("cmo"):
        shift = -2 if cmo.startswith("上上") else -1 if cmo.startswith("上") else 0
        return _month(today.year, today.month + shift)
    if cyr := g.get("cyr"):
        return _year(today.year - {"今年": 0, "去年": 1, "前年": 2}[cyr])
    if cm := g.get("cm"):
        month = _cn_int(cm)
        if month is None or not 1 <= month <= 12:
            return None
        cy = g.get("cy")
        year = int(cy) if cy else None
        if cd := g.get("cd"):
            day = _cn_int(cd)
            if day is None:
                return None
            y = year if year is not None else today.year
            try:
                d = date(y, month, day)
                if year is None and d > today:
                    d = date(y - 1, month, day)
            except ValueError:
                return None
            return _day(d)
        return _past_month(today, month, year)
    if cyo := g.get("cyo"):
        return _year(int(cyo))
    if cwd := g.get("cwd"):
        return _past_weekday(today, _CN_WEEKDAY[cwd])
    return None


def _cn(m: re.Match[str], today: date) -> _Meaning | None:
    g = m.groupdict()
    if cn := g.get("cn"):
        n = _cn_int(cn)
        return None if n is None or n > 1000 else (_ago(today, _cn_unit(g["cunit"]), n), "both")
    if cln := g.get("cln"):
        n = _cn_int(cln)
        return None if n is None or n < 1 or n > 1000 else (_last_n(today, _cn_unit(g["clunit"]), n), "both")
    point = _cn_point(g, today)
    if point is None:
        return None
    tail = g.get("ctail") or ""
    if tail in ("以来", "起", "开始", "之后", "以后") or g.get("cnsince"):
        return point, "since"
    if tail in ("之前", "以前"):
        return point, "before"
    return point, "both"


# ---- reading ---------------------------------------------------------------------------------


def _instant(d: date, tz: tzinfo) -> datetime:
    """Local midnight of ``d`` in ``tz``, in UTC (clamped to the datetime range)."""
    try:
        return datetime.combine(d, time(), tz).astimezone(UTC)
    except (OverflowError, ValueError):
        return datetime.max.replace(tzinfo=UTC) if d.year > 1 else datetime.min.replace(tzinfo=UTC)


def _window(meaning: _Meaning, tz: tzinfo) -> Window:
    (first, end), bound = meaning
    if bound == "since":
        return Window(_instant(first, tz), None)
    if bound == "after":
        return Window(_instant(end, tz), None)
    if bound == "before":
        return Window(None, _instant(first, tz))
    return Window(_instant(first, tz), _instant(end, tz))


def _cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _remove(query: str, spans: list[Span]) -> str:
    """The query without the spans: a space where one stood between words, none between CJK
    characters (Chinese has no spaces to keep)."""
    out, at = "", 0
    for span in spans:
        out += query[at : span.start]
        rest = query[span.end :]
        if out and rest and not out[-1].isspace() and not rest[0].isspace():
            out += "" if _cjk(out[-1]) and _cjk(rest[0]) else " "
        at = span.end
    out += query[at:]
    return " ".join(out.split())


#: characters that may stand right before a month written in Chinese numerals (三月) without
#: making it part of another word (统一月报, 单一月份): particles, prepositions, time words
_CN_BEFORE_MONTH = set("的在于从自到至和与及是们年去今前上本这了说将那每、，。：；（ ")


def _cn_month_in_word(query: str, m: re.Match[str]) -> bool:
    cm = m.groupdict().get("cm")
    if not cm or cm.isdigit() or m.groupdict().get("cy") or m.groupdict().get("cnsince"):
        return False
    before = query[m.start() - 1] if m.start() > 0 else " "
    return _cjk(before) and before not in _CN_BEFORE_MONTH


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
    for pattern, meaning_of in ((_EN, _en), (_CN, _cn)):
        for m in pattern.finditer(query):
            if m.end() == m.start() or (pattern is _CN and _cn_month_in_word(query, m)):
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
