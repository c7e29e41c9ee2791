"""LIKE patterns of path_filter / memory_type: validation, the bounds the schema states, and the
matcher, held to SQLite's own ``LIKE … ESCAPE '\\'`` on random patterns and strings."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from mnemo.like import (
    MAX_LIKE_ANY_ONE_AFTER_RUN,
    MAX_LIKE_ANY_RUNS,
    MAX_LIKE_LENGTH,
    like_matches,
    like_problem,
)
from mnemo.models.retrieval import SearchMemoryArgs
from pydantic import ValidationError

from tests.support.fuzz import examples

pytestmark = [pytest.mark.fuzz]


@pytest.mark.parametrize("pattern", ["%", "acme/%", "a_c", "100\\%", "\\\\", "a\\\\", "\\x", "é%"])
def test_valid_patterns(pattern):
    assert like_problem(pattern) is None


@pytest.mark.parametrize("pattern", ["\\", "acme\\", "a\\\\\\", "%\\"])
def test_a_lone_trailing_backslash_is_invalid(pattern):
    assert "lone" in like_problem(pattern)


@pytest.mark.parametrize("field", ["path_filter", "memory_type"])
def test_the_schema_states_the_bounds_the_validator_enforces(field):
    properties = SearchMemoryArgs.model_json_schema()["properties"]
    path_filter = properties["path_filter"]["description"]

    assert properties[field]["maxLength"] == MAX_LIKE_LENGTH
    assert f"`%` any run (max {MAX_LIKE_ANY_RUNS})" in path_filter
    assert f"`_` one char (max {MAX_LIKE_ANY_ONE_AFTER_RUN} after `%`)" in path_filter
    assert field == "path_filter" or properties[field]["description"].startswith("As path_filter")
    with pytest.raises(ValidationError) as raised:
        SearchMemoryArgs.model_validate({"query": "x", field: "%a" * (MAX_LIKE_ANY_RUNS + 1)})
    assert raised.value.errors()[0]["loc"] == (field,)


# -- the matcher against SQLite's own LIKE ---------------------------------------------------------

#: letters whose case folding changes their length or meets another letter's ("ß" → "ss",
#: "ΐ" → three code points, "İ" → "i̇", "K" (Kelvin) → "k"), the wildcards, the escape, a slash
ALPHABET = ["a", "b", "s", "S", "ß", "ΐ", "İ", "i", "K", "k", "/", "%", "_", "\\"]
LITERALS = ["a", "b", "s", "ß", "ΐ", "İ", "K", "/", "\\%", "\\_", "\\\\", "\\a"]

#: most cases draw from two letters only, where segments overlap and near-misses are common
SMALL = ["a", "b", "%", "_"]

pattern_tokens = st.one_of(
    st.lists(st.sampled_from(SMALL), min_size=1, max_size=12),
    st.lists(st.sampled_from([*LITERALS, "%", "_"]), min_size=1, max_size=24),
)
values = st.one_of(st.text(st.sampled_from("ab"), max_size=12), st.text(st.sampled_from(ALPHABET), max_size=30))


def instance(draw: st.DrawFn, tokens: list[str]) -> str:
    """A value built to match the tokens (then perhaps mutated), so matches are common."""
    out = []
    for token in tokens:
        if token == "%":
            out.append(draw(st.text(st.sampled_from(ALPHABET), max_size=4)))
        elif token == "_":
            out.append(draw(st.sampled_from(ALPHABET)))
        else:
            char = token[-1]
            out.append(draw(st.sampled_from([char, char.upper(), char.lower()])))
    value = "".join(out)
    if draw(st.booleans()) and value:
        at = draw(st.integers(0, len(value) - 1))
        value = value[:at] + draw(st.text(st.sampled_from(ALPHABET), max_size=2)) + value[at + 1 :]
    return value


@st.composite
def pattern_and_value(draw: st.DrawFn) -> tuple[str, str]:
    tokens = draw(pattern_tokens)
    value = instance(draw, tokens) if draw(st.booleans()) else draw(values)
    return "".join(tokens), value


@pytest.fixture(scope="module")
def sqlite_like():
    conn = sqlite3.connect(":memory:")

    def like(pattern: str, value: str) -> bool:
        # what the SQLite backend runs: both sides case-folded, the pattern as given
        return bool(conn.execute("SELECT ? LIKE ? ESCAPE '\\'", (value.casefold(), pattern.casefold())).fetchone()[0])

    yield like
    conn.close()


@settings(max_examples=examples("like"))
@given(case=pattern_and_value())
def test_the_matcher_agrees_with_sqlites_like_on_random_patterns(sqlite_like, case):
    pattern, value = case
    assume(like_problem(pattern) is None)

    assert like_matches(pattern, value) is sqlite_like(pattern, value), (pattern, value)


@pytest.mark.parametrize(
    ("pattern", "value"),
    [
        ("%a%a%a%a%a%b", "a" * 100),  # 2.3 s with the backtracking regular expression
        ("%a%a%a%a%a%a%a%b", "a" * 512),  # past 15 s with it
        ("%" + "a" * 125 + "b%", "a" * 512),
        ("%_" + "a" * 124 + "b%", "a" * 512),
        ("%ß%ß%ß%ß%ß%ß%ß%b", "ss" * 256),
    ],
    ids=["issue's 12", "issue's 16", "long segment", "long segment with _", "folded"],
)
def test_the_patterns_that_froze_the_regex_answer_like_sqlite(sqlite_like, pattern, value):
    """No timing here (that is bench/like.py's); the same answer as SQLite on the inputs that took
    seconds to minutes before."""
    assert like_problem(pattern) is None
    assert like_matches(pattern, value) is sqlite_like(pattern, value) is False
