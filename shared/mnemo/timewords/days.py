"""Calendar arithmetic on local dates (a week starts on Monday, ISO 8601): the ranges of days
the expressions name, before they become UTC instants."""

from __future__ import annotations

from datetime import date, timedelta

#: a local range of days [first, last + 1)
Days = tuple[date, date]


def day(d: date) -> Days:
    return d, d + timedelta(days=1)


def week(d: date) -> Days:
    start = d - timedelta(days=d.weekday())
    return start, start + timedelta(days=7)


def month_start(year: int, month: int) -> date:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return date(year, month, 1)


def days_of_month(year: int, month: int) -> Days:
    return month_start(year, month), month_start(year, month + 1)


def days_of_year(year: int) -> Days:
    return date(year, 1, 1), date(year + 1, 1, 1)


def past_month(today: date, month: int, year: int | None) -> Days:
    if year is not None:
        return days_of_month(year, month)
    return days_of_month(today.year if month <= today.month else today.year - 1, month)


def past_weekday(today: date, weekday: int, *, strictly_before: bool = False) -> Days:
    back = (today.weekday() - weekday) % 7
    if back == 0 and strictly_before:
        back = 7
    return day(today - timedelta(days=back))


def ago(today: date, unit: str, n: int) -> Days:
    if unit == "day":
        return day(today - timedelta(days=n))
    if unit == "week":
        return week(today - timedelta(days=7 * n))
    if unit == "month":
        return days_of_month(today.year, today.month - n)
    return days_of_year(today.year - n)


def last_n(today: date, unit: str, n: int) -> Days:
    """The past n units up to and including today: "the last 7 days" is today and the 6 before."""
    end = today + timedelta(days=1)
    if unit == "day":
        return end - timedelta(days=n), end
    if unit == "week":
        return end - timedelta(days=7 * n), end
    return end - timedelta(days=(30 if unit == "month" else 365) * n), end


#: what a matched expression names: a range of local days, and which of its ends bound the window
#: ("both", "since": only the start, "before": only the end)
Meaning = tuple[Days, str]
