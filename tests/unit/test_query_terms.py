"""The bounds on a query's terms, which keep the slowest valid query of every tool within its
budget (bench/results/worst.md), and the schemas that state them."""

from __future__ import annotations

from mnemo.models.tools import MemorySearchArgs
from mnemo.text import MAX_PREFIX_LENGTH, MAX_QUERY_TERMS, MIN_PREFIX_LENGTH, QueryTerm, is_stop_word, query_terms


def test_a_query_keeps_its_first_distinct_terms_only():
    words = " ".join(f"w{i} w{i}" for i in range(3 * MAX_QUERY_TERMS))

    terms = query_terms(words)

    assert [t.text for t in terms] == [f"w{i}" for i in range(MAX_QUERY_TERMS)]


def test_recall_treats_only_latin_terms_of_three_characters_or_more_as_prefixes():
    assert MIN_PREFIX_LENGTH == 3
    assert query_terms("x ab dep deploy 数 数据", latin_prefix=True) == [
        QueryTerm("x"),
        QueryTerm("ab"),
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


def test_a_question_keeps_only_the_words_that_carry_its_meaning():
    assert [t.text for t in query_terms("When did Melanie's sister go to the support group?")] == [
        "melanie",
        "sister",
        "support",
        "group",
    ]


def test_a_chinese_question_drops_its_question_words_and_particles():
    assert [t.text for t in query_terms("李明什么时候扭伤了膝盖？")] == [
        "李明",
        "明什",
        "候扭",
        "扭伤",
        "伤了",
        "了膝",
        "膝盖",
    ]
    assert all(is_stop_word(w) for w in ("什么", "么时", "时候", "的", "了"))


def test_a_query_of_only_stop_words_keeps_them_all():
    assert [t.text for t in query_terms("the who")] == ["the", "who"]
    assert [t.text for t in query_terms("什么时候")] == ["什么", "么时", "时候"]


def test_stop_words_are_never_bounded_out_of_the_meaningful_terms():
    """Function words do not use up the MAX_QUERY_TERMS budget."""
    words = " ".join(["the of and"] * 10 + [f"w{i}" for i in range(MAX_QUERY_TERMS)])

    assert [t.text for t in query_terms(words)] == [f"w{i}" for i in range(MAX_QUERY_TERMS)]
