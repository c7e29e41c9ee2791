"""The time-expression reader (mnemo.timewords): what each expression means, what it leaves."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mnemo.timewords import Window, read

#: a Thursday
NOW = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


CASES = [
    # English
    ("what did we decide last week?", day(2026, 11, 23), day(2026, 11, 30), "what did we decide ?"),
    ("today", day(2026, 12, 3), day(2026, 12, 4), ""),
    ("yesterday's deploy", day(2026, 12, 2), day(2026, 12, 3), "deploy"),
    ("the day before yesterday", day(2026, 12, 1), day(2026, 12, 2), ""),
    ("this week", day(2026, 11, 30), day(2026, 12, 7), ""),
    ("this month", day(2026, 12, 1), day(2027, 1, 1), ""),
    ("last month billing", day(2026, 11, 1), day(2026, 12, 1), "billing"),
    ("last year", day(2025, 1, 1), day(2026, 1, 1), ""),
    ("deploys in March", day(2026, 3, 1), day(2026, 4, 1), "deploys"),
    ("in December", day(2026, 12, 1), day(2027, 1, 1), ""),
    ("during March 2024", day(2024, 3, 1), day(2024, 4, 1), ""),
    ("since Monday", day(2026, 11, 30), None, ""),
    ("since last Thursday", day(2026, 11, 26), None, ""),
    ("on Thursday", day(2026, 12, 3), day(2026, 12, 4), ""),
    ("last Friday's notes", day(2026, 11, 27), day(2026, 11, 28), "notes"),
    ("3 days ago", day(2026, 11, 30), day(2026, 12, 1), ""),
    ("two weeks ago", day(2026, 11, 16), day(2026, 11, 23), ""),
    ("a month ago", day(2026, 11, 1), day(2026, 12, 1), ""),
    ("in 2025", day(2025, 1, 1), day(2026, 1, 1), ""),
    ("before October", None, day(2026, 10, 1), ""),
    ("after yesterday", day(2026, 12, 3), None, ""),
    ("the past 7 days", day(2026, 11, 27), day(2026, 12, 4), ""),
    ("in the last 2 weeks", day(2026, 11, 20), day(2026, 12, 4), ""),
    ("on 2026-03-05", day(2026, 3, 5), day(2026, 3, 6), ""),
    ("March 5 decision", day(2026, 3, 5), day(2026, 3, 6), "decision"),
    ("Dec 25 party", day(2025, 12, 25), day(2025, 12, 26), "party"),
    ("since March, in 2026", day(2026, 3, 1), day(2027, 1, 1), ","),
    # Chinese
    ("今天", day(2026, 12, 3), day(2026, 12, 4), ""),
    ("昨天的部署", day(2026, 12, 2), day(2026, 12, 3), "的部署"),
    ("前天", day(2026, 12, 1), day(2026, 12, 2), ""),
    ("上周我们决定了什么", day(2026, 11, 23), day(2026, 11, 30), "我们决定了什么"),
    ("本周", day(2026, 11, 30), day(2026, 12, 7), ""),
    ("这个星期", day(2026, 11, 30), day(2026, 12, 7), ""),
    ("上个礼拜", day(2026, 11, 23), day(2026, 11, 30), ""),
    ("这个月", day(2026, 12, 1), day(2027, 1, 1), ""),
    ("上个月的账单", day(2026, 11, 1), day(2026, 12, 1), "的账单"),
    ("三月", day(2026, 3, 1), day(2026, 4, 1), ""),
    ("十二月份", day(2026, 12, 1), day(2027, 1, 1), ""),
    ("2025年3月", day(2025, 3, 1), day(2025, 4, 1), ""),
    ("3月5日的决定", day(2026, 3, 5), day(2026, 3, 6), "的决定"),
    ("今年", day(2026, 1, 1), day(2027, 1, 1), ""),
    ("去年", day(2025, 1, 1), day(2026, 1, 1), ""),
    ("2025年", day(2025, 1, 1), day(2026, 1, 1), ""),
    ("三天前", day(2026, 11, 30), day(2026, 12, 1), ""),
    ("两周前", day(2026, 11, 16), day(2026, 11, 23), ""),
    ("三个月前", day(2026, 9, 1), day(2026, 10, 1), ""),
    ("最近7天", day(2026, 11, 27), day(2026, 12, 4), ""),
    ("过去三天", day(2026, 12, 1), day(2026, 12, 4), ""),
    ("自周一以来", day(2026, 11, 30), None, ""),
    ("周一以来的改动", day(2026, 11, 30), None, "的改动"),
    ("从上周五开始", day(2026, 11, 27), None, ""),
    ("上周五", day(2026, 11, 27), day(2026, 11, 28), ""),
    ("星期三", day(2026, 12, 2), day(2026, 12, 3), ""),
    ("三月之前", None, day(2026, 3, 1), ""),
]


@pytest.mark.parametrize(("query", "after", "before", "rest"), CASES)
def test_an_expression_reads_as_its_window_and_leaves_the_other_words(
    query: str, after: datetime | None, before: datetime | None, rest: str
) -> None:
    # Given Thursday 3 December 2026 in UTC, When the query is read
    reading = read(query, NOW, UTC)
    # Then the window is the one it names, and its words are gone from the query
    assert reading.window == Window(after, before)
    assert reading.query == rest


@pytest.mark.parametrize(
    "query",
    ["march madness", "Monday standup", "we may deploy", "2025 errors", "统一月报", "deploy on fridays", "mar", ""],
)
def test_a_month_weekday_or_year_alone_is_not_time(query: str) -> None:
    reading = read(query, NOW, UTC)
    assert reading.window is None
    assert reading.query == query
    assert reading.spans == ()


def test_days_are_read_in_the_callers_time_zone() -> None:
    # Given 01:00 UTC on the 3rd, which is still the 2nd in New York
    now = datetime(2026, 12, 3, 1, 0, tzinfo=UTC)
    # When "today" is read there, Then it is New York's 2nd, as UTC instants
    reading = read("today", now, ZoneInfo("America/New_York"))
    assert reading.window == Window(datetime(2026, 12, 2, 5, tzinfo=UTC), datetime(2026, 12, 3, 5, tzinfo=UTC))
    # And in Shanghai it is already the 3rd
    shanghai = read("今天", now, ZoneInfo("Asia/Shanghai")).window
    assert shanghai == Window(datetime(2026, 12, 2, 16, tzinfo=UTC), datetime(2026, 12, 3, 16, tzinfo=UTC))


def test_a_naive_now_is_utc() -> None:
    assert read("today", NOW.replace(tzinfo=None), UTC).window == read("today", NOW, UTC).window


def test_windows_that_do_not_overlap_keep_the_first() -> None:
    reading = read("yesterday in 2024", NOW, UTC)
    assert reading.window == Window(day(2026, 12, 2), day(2026, 12, 3))
    assert [s.text for s in reading.spans] == ["yesterday", "in 2024"]


def test_the_spans_say_where_the_words_were() -> None:
    query = "what did we decide last week about 部署 上个月"
    reading = read(query, NOW, UTC)
    assert [query[s.start : s.end] for s in reading.spans] == ["last week", "上个月"]
    assert [s.text for s in reading.spans] == ["last week", "上个月"]


_words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
_time_words = st.sampled_from([q for q, *_ in CASES] + ["since", "in", "ago", "上", "月", "前", "以来", "周"])


@given(
    st.lists(st.one_of(_words, _time_words), max_size=6).map(" ".join),
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)),
    st.sampled_from([UTC, ZoneInfo("Asia/Shanghai"), ZoneInfo("America/New_York"), ZoneInfo("Pacific/Kiritimati")]),
)
def test_any_query_reads_without_raising_into_an_ordered_window_and_keeps_the_other_words(
    query: str, now: datetime, tz: ZoneInfo
) -> None:
    reading = read(query, now, tz)
    if reading.window is None:
        assert reading.spans == ()
        assert reading.query == query
        return
    window = reading.window
    assert window.after is not None or window.before is not None
    if window.after is not None and window.before is not None:
        assert window.after < window.before
    for end in (window.after, window.before):
        assert end is None or end.utcoffset() == timedelta(0)
    # the spans are in order, do not overlap, and are what the query holds there
    at = 0
    for span in reading.spans:
        assert at <= span.start < span.end
        assert query[span.start : span.end] == span.text
        at = span.end
    # removing them leaves every other character, in order (only spacing changes)
    kept, at = [], 0
    for span in reading.spans:
        kept.append(query[at : span.start])
        at = span.end
    kept.append(query[at:])
    assert "".join(reading.query.split()) == "".join("".join(kept).split())


def test_a_zone_is_found_on_a_host_without_a_zone_database(tmp_path):
    """PYTHONTZPATH pointing at an empty folder is a host without /usr/share/zoneinfo (a slim
    image, Windows): zones come from the pinned tzdata package, so `tz` still works."""
    probe = "from mnemo.timewords import zone; z = zone('Asia/Shanghai'); print(z.key if z else None)"
    env = {**os.environ, "PYTHONTZPATH": str(tmp_path)}

    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)

    assert (done.returncode, done.stdout.strip()) == (0, "Asia/Shanghai"), done.stderr
