"""The bounds on a query's terms, which keep the slowest valid query of every tool within its
budget (bench/results/worst.md), and the schemas that state them."""

from __future__ import annotations

from mnemo.models.tools import MemorySearchArgs
from mnemo.text import MAX_PREFIX_LENGTH, MAX_QUERY_TERMS, MIN_PREFIX_LENGTH, QueryTerm, query_terms


def test_a_query_keeps_its_first_distinct_terms_only():
    words = " ".join(f"w{i} w{i}" for i in range(3 * MAX_QUERY_TERMS))

    terms = query_terms(words)

    assert [t.text for t in terms] == [f"w{i}" for i in range(MAX_QUERY_TERMS)]


def test_recall_treats_only_latin_terms_of_three_characters_or_more_as_prefixes():
    assert MIN_PREFIX_LENGTH == 3
    assert query_terms("a to dep deploy 数 数据", latin_prefix=True) == [
        QueryTerm("a"),
        QueryTerm("to"),
        QueryTerm("dep", prefix=True),
        QueryTerm("deploy", prefix=True),
        QueryTerm("数", prefix=True),  # a lone CJK character: always a prefix
        QueryTerm("数据"),
    ]


def test_a_term_longer_than_the_longest_prefix_matches_whole_words_only():
    # OpenSearch refuses a prefix query of about 1,000 characters ("input automaton is too large")
    longest, over = "b" * MAX_PREFIX_LENGTH, "b" * (MAX_PREFIX_LENGTH + 1)

    assert query_terms(f"{longest} {over} {'c' * 4096}", latin_prefix=True) == [
        QueryTerm(longest, prefix=True),
        QueryTerm(over),
        QueryTerm("c" * 4096),
    ]
    assert MAX_PREFIX_LENGTH < 1000


def test_the_schema_of_memory_search_states_how_many_terms_are_used():
    """memory_search's `q` says so; the `query` of search_memory, recall and recall_context leaves it
    to docs/contract.md §3, which keeps the tools/list answer within its 10 KB budget
    (unit/test_tool_catalog.py)."""
    description = MemorySearchArgs.model_json_schema()["properties"]["q"]["description"]

    assert f"first {MAX_QUERY_TERMS} distinct terms" in description
