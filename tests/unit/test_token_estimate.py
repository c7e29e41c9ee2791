"""mnemo.text.estimate_tokens: the documented estimate recall_context packs by."""

from __future__ import annotations

import pytest
from mnemo.text import estimate_tokens, token_quarters


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("a", 1),  # ¼ rounds up
        ("abcd", 1),
        ("abcde", 2),
        ("four words in here!!", 5),  # 20 ASCII characters
        ("\n\n", 1),
        ("数据库", 3),  # one token per CJK character
        ("東京の会議", 5),  # kanji and kana
        ("배포", 2),  # Hangul
        ("é", 1),  # other non-ASCII: ½
        ("éé", 1),
        ("ééé", 2),
        ("，。", 1),  # CJK punctuation is not a CJK character: ½ each
        ("ab数", 2),  # ½ + 1, rounded up
        ("😀😀", 1),
    ],
)
def test_estimate_tokens(text, tokens):
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(("left", "right"), [("abc", "数据"), ("é", "x"), ("[1] mem_X\n", "延迟很高 latency")])
def test_the_weight_of_a_block_is_the_sum_of_its_pieces(left, right):
    assert token_quarters(left + right) == token_quarters(left) + token_quarters(right)
