"""Time in the question (issue 39, docs/retrieval.md "Time in the question"), on every backend:
search_memory, recall and recall_context read time words into an updated window, drop them from
the terms, let an explicit window win, never turn an answer into a miss, and say what they read.

Memories are saved now, so "today" holds them and "yesterday" holds none, in any time zone."""

from __future__ import annotations

import pytest
from mnemo.errors import InvalidRequest


def add(tenant, content, **fields):
    return tenant.call("memory_add", content=content, **fields).memory


def refs(result):
    return [item.reference for item in result.results]


def test_time_words_are_a_window_and_not_search_terms(tenant):
    # Given a memory saved today
    memory = add(tenant, "we deploy on fridays")
    # When a strict lookup names today, Then it finds the memory though it holds no word "today"
    found = tenant.call("search_memory", query="deploy fridays today")
    assert refs(found) == [memory.id]
    window = found.time_window
    assert (window.expressions, window.applied, window.note, window.tz) == (["today"], True, "window", "UTC")
    assert window.updated_after <= memory.updated_at < window.updated_before
    # And without reading time, "today" is a word the memory lacks
    plain = tenant.call("search_memory", query="deploy fridays today", parse_time=False)
    assert plain.matched is False
    assert plain.time_window is None


def test_a_window_nothing_matches_answers_as_without_reading_time_and_says_so(tenant):
    memory = add(tenant, "deploys moved to tuesdays")
    for tool in ("recall", "search_memory"):
        # When the window (yesterday) holds no memory
        read = tenant.call(tool, query="deploys tuesdays yesterday")
        plain = tenant.call(tool, query="deploys tuesdays yesterday", parse_time=False)
        # Then the answer is the one without parsing, and time_window says the window was empty
        assert refs(read) == refs(plain)
        assert read.time_window.note == "window_empty"
        assert read.time_window.applied is False
    assert refs(tenant.call("recall", query="deploys yesterday")) == [memory.id]


def test_an_empty_window_costs_one_more_search_not_a_diagnosis(tenant, monkeypatch):
    # Given a memory saved today that holds the word "yesterday", and the index's word searches counted
    memory = add(tenant, "deploys moved to tuesdays, decided yesterday")
    index = tenant.svc.ports.index
    searches = []
    real = type(index).search
    monkeypatch.setattr(type(index), "search", lambda self, query: searches.append(query) or real(self, query))
    for tool in ("recall", "search_memory"):
        searches.clear()
        # When the window (yesterday) holds no memory
        read = tenant.call(tool, query="deploys tuesdays yesterday")
        # Then the answer is the one without the window (which holds "yesterday" as a word), and
        # only the window's search and the one without it ran: none for why the window was empty
        assert refs(read) == [memory.id] and read.time_window.note == "window_empty"
        assert [q.filter.updated_after is not None for q in searches] == [True, False], tool


def test_an_explicit_window_wins_over_the_words(tenant):
    memory = add(tenant, "the billing cron runs hourly")
    result = tenant.call("search_memory", query="billing cron yesterday", updated_after="2000-01-01T00:00:00Z")
    assert refs(result) == [memory.id]
    assert (result.time_window.note, result.time_window.applied) == ("explicit_window", False)
    # an explicit window that holds nothing is still a miss
    future = tenant.call("search_memory", query="billing cron today", updated_after="2999-01-01T00:00:00Z")
    assert future.matched is False


def test_chinese_time_words_on_recall_context_in_the_callers_time_zone(tenant):
    memory = add(tenant, "部署改到周二")
    result = tenant.call("recall_context", query="今天 部署", tz="Asia/Shanghai")
    assert result.references == [memory.id]
    assert (result.time_window.expressions, result.time_window.tz) == (["今天"], "Asia/Shanghai")
    assert result.time_window.applied is True


def test_a_query_of_time_words_only_lists_what_changed_in_the_window(tenant):
    first = add(tenant, "first note")
    second = add(tenant, "second note")
    listed = tenant.call("recall", query="this week", tz="Pacific/Kiritimati")
    assert set(refs(listed)) == {first.id, second.id}
    assert listed.time_window.expressions == ["this week"]
    assert refs(tenant.call("search_memory", query="today")) == refs(listed)


@pytest.mark.parametrize("tz", ["Mars/Olympus", "../../etc/passwd", "utc+8", ""])
def test_an_unknown_time_zone_is_refused(tenant, tz):
    add(tenant, "a note")
    for tool in ("search_memory", "recall", "recall_context"):
        with pytest.raises(InvalidRequest):
            tenant.call(tool, query="note today", tz=tz)
