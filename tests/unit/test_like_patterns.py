"""LIKE patterns of path_filter / memory_type: validation and the reference semantics."""

from __future__ import annotations

import pytest
from mnemo.like import is_match_all, like_matches, like_problem
from mnemo.models.tools import RecallArgs, SearchMemoryArgs
from pydantic import ValidationError


@pytest.mark.parametrize("pattern", ["%", "acme/%", "a_c", "100\\%", "\\\\", "a\\\\", "\\x", "é%"])
def test_valid_patterns(pattern):
    assert like_problem(pattern) is None


@pytest.mark.parametrize("pattern", ["\\", "acme\\", "a\\\\\\", "%\\"])
def test_a_lone_trailing_backslash_is_invalid(pattern):
    assert "lone" in like_problem(pattern)


@pytest.mark.parametrize("field", ["path_filter", "memory_type"])
def test_the_argument_models_reject_an_invalid_pattern(field):
    with pytest.raises(ValidationError) as raised:
        SearchMemoryArgs.model_validate({"query": "x", field: "acme\\"})

    assert raised.value.errors()[0]["loc"] == (field,)
    assert RecallArgs.model_validate({"query": "x", field: "acme\\\\"}).model_dump()[field] == "acme\\\\"


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("acme/%", "acme/pricing", True),
        ("acme/%", "other/acme", False),
        ("ACME/%", "acme/x", True),
        ("acme/%", "Acme/X", True),
        ("%", None, True),
        ("_%", None, False),
        ("_%", "a", True),
        ("a_c", "abc", True),
        ("a_c", "ac", False),
        ("a\\_c", "abc", False),
        ("a\\_c", "a_c", True),
        ("100\\%", "100%", True),
        ("100\\%", "1000", False),
        ("c:\\\\%", "c:\\x", True),
        ("\\x", "x", True),
        ("a.c", "abc", False),  # regex metacharacters are literal
        ("%", "line\nbreak", True),
        ("数据%", "数据库", True),
    ],
)
def test_like_matches(pattern, value, matches):
    assert like_matches(pattern, value) is matches


@pytest.mark.parametrize(("pattern", "expected"), [(None, True), ("%", True), ("%%", True), ("_%", False), ("", False)])
def test_is_match_all(pattern, expected):
    assert is_match_all(pattern) is expected
