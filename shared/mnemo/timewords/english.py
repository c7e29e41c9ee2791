"""The English expressions: their words, one pattern, and what a match means given today."""

from __future__ import annotations

import re
from datetime import date, timedelta

from mnemo.timewords import days as cal
from mnemo.timewords.days import Days, Meaning

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


def _en_int(token: str) -> int | None:
    token = " ".join(token.lower().split())
    return int(token) if token.isdigit() else _NUMBERS.get(token)


def _en_point(m: re.Match[str], today: date) -> Days | None:
    """A point in time English names after *since*/*before*/*on*: a day, week, month or year."""
    g = m.groupdict()
    if g.get("rel"):
        rel = g["rel"].lower()
        return {
            "today": cal.day(today),
            "tonight": cal.day(today),
            "yesterday": cal.day(today - timedelta(days=1)),
            "last night": cal.day(today - timedelta(days=1)),
            "this morning": cal.day(today),
            "this afternoon": cal.day(today),
            "this evening": cal.day(today),
            "the day before yesterday": cal.day(today - timedelta(days=2)),
        }.get(" ".join(rel.split()))
    if g.get("which"):
        which = g["which"].lower()
        unit = g["unit1"].lower()
        shift = {"this": 0, "current": 0, "last": -1, "past": -1, "previous": -1}[which]
        if unit == "week":
            return cal.week(today + timedelta(days=7 * shift))
        if unit == "month":
            return cal.days_of_month(today.year, today.month + shift)
        return cal.days_of_year(today.year + shift)
    if g.get("wd"):
        weekday = _WEEKDAYS[g["wd"].lower()]
        mod = (g.get("wdmod") or "").lower()
        if mod == "this":
            return cal.day(cal.week(today)[0] + timedelta(days=weekday))
        return cal.past_weekday(today, weekday, strictly_before=mod == "last")
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
            return cal.day(d)
        return cal.past_month(today, month, year)
    if g.get("iso"):
        try:
            return cal.day(date(int(g["isoy"]), int(g["isom"]), int(g["isod"])))
        except ValueError:
            return None
    if g.get("yr"):
        return cal.days_of_year(int(g["yr"]))
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
PATTERN = re.compile(
    rf"\b(?P<lead>since|after|before|until|till|in|on|during|from|of|over)?\s*(?:(?P<the>the)\s+)?(?P<point>{_EN_POINT})\b(?:['’]s\b)?"
    rf"|\b(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT})\s+ago\b"
    rf"|\b(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:last|past)\s+(?P<ln>{_NUMBER})\s+(?P<lunit>{_UNIT})\b",
    re.IGNORECASE,
)


def meaning(m: re.Match[str], today: date) -> Meaning | None:
    g = m.groupdict()
    if g.get("n"):
        n = _en_int(g["n"])
        return None if n is None or n > 1000 else (cal.ago(today, _UNITS[g["unit"].lower()], n), "both")
    if g.get("ln"):
        n = _en_int(g["ln"])
        return None if n is None or n < 1 or n > 1000 else (cal.last_n(today, _UNITS[g["lunit"].lower()], n), "both")
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
