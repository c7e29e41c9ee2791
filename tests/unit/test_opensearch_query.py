"""The OpenSearch query builder: DSL from parsed arguments only, never a query parser."""

from __future__ import annotations

import json

import pytest
from mnemo.backends.aws.query import like_to_wildcard, search_body
from mnemo.models.common import utc_now
from mnemo.ports import IndexQuery, MemoryFilter, Scope
from mnemo.text import query_terms


@pytest.mark.parametrize(
    ("like", "wildcard"),
    [
        ("acme/%", "acme/*"),
        ("a_c", "a?c"),
        ("100\\%", "100%"),
        ("a\\_b", "a_b"),
        ("a*b?", "a\\*b\\?"),
        ("back\\\\slash", "back\\\\slash"),
        ("\\x", "x"),
    ],
)
def test_like_patterns_become_escaped_wildcards(like, wildcard):
    assert like_to_wildcard(like) == wildcard


def test_every_query_filters_on_workspace_and_project_and_hides_tombstones():
    query = IndexQuery(Scope("ws_1", "prj_1"), query_terms("hello"), "all", MemoryFilter(now=utc_now()), 5)

    body = search_body(query)["query"]["bool"]

    assert {"term": {"workspace_id": "ws_1"}} in body["filter"]
    assert {"term": {"project_id": "prj_1"}} in body["filter"]
    assert body["must_not"] == [{"term": {"deleted": True}}]


def test_user_text_never_reaches_a_query_parser():
    query = IndexQuery(
        Scope("ws_1", "prj_1"), query_terms('a OR b* "c" NOT d:e'), "any", MemoryFilter(now=utc_now()), 5
    )

    text = json.dumps(search_body(query))

    assert "query_string" not in text and "simple_query_string" not in text and '"match"' not in text


def test_a_query_word_too_long_for_a_prefix_query_reaches_the_index_as_a_term_only():
    # OpenSearch refuses a prefix of about 1,000 characters ("input automaton is too large": 500)
    word = "b" * 4096
    query = IndexQuery(
        Scope("ws_1", "prj_1"), query_terms(word, latin_prefix=True), "all", MemoryFilter(now=utc_now()), 5
    )

    body = json.dumps(search_body(query))

    assert '"prefix"' not in body
    assert word in body  # still looked for, as a whole word
