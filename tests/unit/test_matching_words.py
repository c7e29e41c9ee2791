"""The service's per-field word lookup (``retrieval.matching._Words``: stems in a dict, prefixes
by bisection) answers what the reference rule ``text.matching_words`` answers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mnemo import text
from mnemo.service.retrieval.matching import _Words

from tests.support.fuzz import examples

pytestmark = [pytest.mark.fuzz]

_WORDS = ["deploy", "deploys", "deployed", "deployment", "deploym", "dep", "freeze", "freezes", "frozen",
          "数据", "据库", "会議", "run", "running", "runner", "a", "ab", "abc", "news", "new"]  # fmt: skip
words = st.lists(st.sampled_from(_WORDS) | st.text("abdeoy", min_size=1, max_size=6), max_size=12)
queries = st.sampled_from(_WORDS) | st.text("abdeoy", min_size=1, max_size=5)


@settings(max_examples=examples("matching_words"))
@given(doc=words, query=queries, prefix=st.booleans())
def test_the_lookup_answers_as_the_reference_rule(doc: list[str], query: str, prefix: bool) -> None:
    term = text.QueryTerm(query, prefix=prefix)
    assert _Words(doc).matching(term) == text.matching_words(term, doc)


def test_a_prefix_finds_every_word_it_starts_and_every_inflection() -> None:
    field = _Words(["deployment", "deploys", "deep", "freeze"])
    assert field.matching(text.QueryTerm("deploy", prefix=True)) == ["deployment", "deploys"]
    assert field.matching(text.QueryTerm("deployments")) == ["deployment", "deploys"]
    assert field.matching(text.QueryTerm("de", prefix=True)) == ["deep", "deployment", "deploys"]
    assert field.matching(text.QueryTerm("frozen")) == []
