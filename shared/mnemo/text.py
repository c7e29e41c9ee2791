"""Text analysis shared by every backend, so the same data gives the same matches everywhere.

Documents and queries are analysed here, in Python, into *terms*:

* text is NFKC-normalised and case-folded (Unicode-aware, so ``Straße`` matches ``STRASSE``);
* Latin (and any other spaced) script splits on anything that is not a letter or digit;
* Chinese, Japanese and Korean runs, which have no spaces, become overlapping character
  bigrams (``数据库`` → ``数据 据库``); a lone CJK character stays a unigram.

The backends index these terms verbatim (SQLite FTS5 with the ``ascii`` tokenizer, which keeps
non-ASCII bytes inside tokens; OpenSearch with the ``whitespace`` analyzer) and match query terms
exactly, or as prefixes where :class:`QueryTerm` says so. A query of two or more CJK characters
therefore finds every memory that contains it, and a one-character CJK query matches as a prefix.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Han (incl. extensions and compatibility), kana, Hangul syllables and jamo, half-width kana.
_CJK_RANGES = (
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff"  # bopomofo, hangul compat jamo, kana ext
    "\u3400-\u4dbf\u4e00-\u9fff"  # Han
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul
    "\uf900-\ufaff"  # Han compatibility
    "\uff66-\uff9f"  # half-width katakana
    "\U00020000-\U0003134f"  # Han extensions B–H
)
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
_TOKEN = re.compile(r"[^\W_]+")
_CJK_SPLIT = re.compile(f"([{_CJK_RANGES}]+)")

#: the most distinct terms a query may carry; longer queries keep their first terms. Each term is one
#: more posting list the index scores for every memory it matches: at 64, a query of the commonest
#: words took recall past 100 ms at 10,000 memories; at 16 the slowest valid request of every tool
#: stays within 50 ms (bench/results/worst.md).
MAX_QUERY_TERMS = 16
#: recall's Latin prefixes are at least this long: a shorter one (``a``, ``to``) matches a large
#: share of the vocabulary — noise rather than forgiveness — and is the costliest to expand
MIN_PREFIX_LENGTH = 3


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def is_cjk(term: str) -> bool:
    return bool(_CJK_CHAR.match(term))


def terms(text: str) -> list[str]:
    """Every term of ``text`` in order, repeats kept (term frequency matters to ranking)."""
    out: list[str] = []
    for token in _TOKEN.findall(normalise(text)):
        if not _CJK_CHAR.search(token):
            out.append(token)
            continue
        for part in _CJK_SPLIT.split(token):
            if not part:
                continue
            if not _CJK_CHAR.match(part) or len(part) == 1:
                out.append(part)
            else:
                out.extend(part[i : i + 2] for i in range(len(part) - 1))
    return out


def index_text(text: str) -> str:
    """The analysed form a backend stores: terms joined by single spaces."""
    return " ".join(terms(text))


@dataclass(frozen=True, slots=True)
class QueryTerm:
    text: str
    prefix: bool = False


def query_terms(query: str, *, latin_prefix: bool = False) -> list[QueryTerm]:
    """Distinct terms of a query, in order.

    A lone CJK character always matches as a prefix (it is the start of the bigrams that
    contain it); with ``latin_prefix`` (the forgiving ``recall``) every non-CJK term of at least
    ``MIN_PREFIX_LENGTH`` characters does too. Only the first ``MAX_QUERY_TERMS`` are kept.
    """
    seen: set[str] = set()
    out: list[QueryTerm] = []
    for term in terms(query):
        if term in seen:
            continue
        seen.add(term)
        cjk = is_cjk(term)
        latin = latin_prefix and not cjk and len(term) >= MIN_PREFIX_LENGTH
        out.append(QueryTerm(term, prefix=(cjk and len(term) == 1) or latin))
        if len(out) == MAX_QUERY_TERMS:
            break
    return out


def term_matches(query_term: QueryTerm, doc_terms: set[str]) -> bool:
    if not query_term.prefix:
        return query_term.text in doc_terms
    return any(t.startswith(query_term.text) for t in doc_terms)


# --- token estimate ------------------------------------------------------------------------
#
# recall_context packs memories under a token budget without knowing the caller's model, so it
# uses a documented, deliberately conservative estimate (docs/retrieval.md):
#
# * a CJK character (Han, kana, Hangul — the ranges above) counts 1 token;
# * any other non-ASCII character (accented letters, Cyrillic, CJK punctuation, emoji) ½ token;
# * an ASCII character (letters, digits, spaces, punctuation, newlines) ¼ token;
#
# and the sum is rounded up. The estimate is additive over characters, so the estimate of a
# block equals the rounded-up sum of its pieces' weights: packers can count incrementally.

#: weight of one character in quarter tokens
_QUARTERS_ASCII, _QUARTERS_OTHER, _QUARTERS_CJK = 1, 2, 4


def token_quarters(text: str) -> int:
    """The token weight of ``text`` in quarter tokens (``estimate_tokens`` before rounding)."""
    if text.isascii():
        return len(text) * _QUARTERS_ASCII
    ascii_count = len(text.encode("ascii", "ignore"))
    cjk = len(_CJK_CHAR.findall(text))
    other = len(text) - ascii_count - cjk
    return ascii_count * _QUARTERS_ASCII + other * _QUARTERS_OTHER + cjk * _QUARTERS_CJK


def char_quarters(char: str) -> int:
    """The weight of one character in quarter tokens."""
    if char.isascii():
        return _QUARTERS_ASCII
    return _QUARTERS_CJK if _CJK_CHAR.match(char) else _QUARTERS_OTHER


def quarters_to_tokens(quarters: int) -> int:
    return -(-quarters // 4)


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: CJK characters 1 each, other non-ASCII ½, ASCII ¼, rounded up."""
    return quarters_to_tokens(token_quarters(text))
