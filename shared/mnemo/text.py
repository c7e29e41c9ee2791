"""Text analysis shared by every backend, so the same data gives the same matches everywhere.

Documents and queries are analysed here, in Python, into *terms*:

* text is NFKC-normalised and case-folded (Unicode-aware, so ``Straße`` matches ``STRASSE``);
* Latin (and any other spaced) script splits on anything that is not a letter or digit;
* Chinese, Japanese and Korean runs, which have no spaces, become overlapping character
  bigrams (``数据库`` → ``数据 据库``); a lone CJK character stays a unigram.

Every term also has a *stem* (:func:`stem`): an English word's Snowball stem (the ``english``
algorithm, "porter2", through PyStemmer), so ``deploy``, ``deploys``, ``deployed`` and
``deployment`` share the stem ``deploy``; any other term (CJK, digits, non-ASCII words) is its own
stem. A query term matches a document word whose stem equals the query term's stem, or, where
:class:`QueryTerm` says so, a word that starts with the query term as typed (prefixes are never
stemmed: ``deploym`` is not a word, and its stem is no prefix of ``deployment``'s). A query of two
or more CJK characters therefore finds every memory that contains it, and a one-character CJK
query matches as a prefix.

The backends index what :func:`terms` and :func:`stem` give (SQLite: its own inverted index of
stems and differing surface words, ``backends/sqlite/postings.py``; OpenSearch: the surface terms and
the stems in separate ``whitespace``-analysed fields) and match query terms by this rule
(:func:`term_matches` is the reference). :data:`ANALYSIS` names the analysis; an index built with
another one is re-indexed.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

import Stemmer

#: the analysis every index records; a change of the tokenizer, the stemmer or its version
#: changes it, and an index built with another analysis is re-indexed (SQLite when it is opened,
#: OpenSearch by the cleanup job's store walk)
STEMMER_ALGORITHM = "english"
ANALYSIS = f"mnemo-2/snowball-{STEMMER_ALGORITHM}-{Stemmer.version()}"

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
#: ... and at most this long: a longer term matches whole words only. OpenSearch refuses a
#: ``prefix`` query of more than about 1,000 characters ("input automaton is too large"), and no
#: one types that much of a word expecting it to be completed
MAX_PREFIX_LENGTH = 255


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


# --- stems ---------------------------------------------------------------------------------

# A Stemmer keeps a mutable libstemmer environment and a cache: one per thread (the local server
# runs a thread per request; on CPython with the GIL sharing one happens to work, free-threaded
# Python would not forgive it).
_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    stemmer: Stemmer.Stemmer | None = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer(STEMMER_ALGORITHM)
    return stemmer


def stemmable(term: str) -> bool:
    """English words are stemmed: ASCII terms with a letter (so not ``2024``, nor CJK, nor
    ``café``, whose language we cannot tell)."""
    return term.isascii() and not term.isdigit()


def stem(term: str) -> str:
    """The stem of one analysed (normalised) term; a term that is not an English word is its own."""
    return _stemmer().stemWord(term) if stemmable(term) else term


def stems(analysed: Iterable[str]) -> list[str]:
    """:func:`stem` of each term, in order."""
    return [stem(t) for t in analysed]


def index_stems(text: str) -> str:
    """The stems a backend stores beside :func:`index_text`: one per term, in order."""
    return " ".join(stems(terms(text)))


# --- queries -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One query term: ``text`` as analysed, and its ``stem``. It matches a document word whose
    stem is ``stem``, or, with ``prefix``, a document word that starts with ``text``."""

    text: str
    prefix: bool = False
    stem: str = field(default="")

    def __post_init__(self) -> None:
        if not self.stem:
            object.__setattr__(self, "stem", stem(self.text))


# --- stop words ----------------------------------------------------------------------------


def _listed(words: str) -> list[str]:
    return words.split()


#: English function words: the words a question is made of ("when", "did", "the", the possessive
#: "s") rather than what it is about. A query's stop words are not terms (neither required by the
#: strict tools nor scored by recall) unless the query has nothing else. Lucene's English list
#: plus the question words, auxiliaries, pronouns, the contractions' tails and the light verbs
#: "go" and "get" in their forms (a question's "go to" is a memory's "went to").
EN_STOP_WORDS = frozenset(
    _listed(
        """a about after again all am an and any are as at be been before being both but by can could d did do
        does doing down during each few for from further get gets getting go goes going gone got gotten had
        has have having he her here hers herself him himself his how i if in into is it its itself just ll m
        me more most my myself no nor not now of off on once only or other our ours ourselves out over own
        re s same she should so some such t than that the their theirs them themselves then there these they
        this those through to too under until up ve very was we went were what when where which while who
        whom why will with would you your yours yourself yourselves"""
    )
)

#: Chinese function words as the index sees them (character pairs, a lone character alone): question
#: words (什么 / 时候 / 怎么 / 哪里 …), pronouns, and the particles that stand alone. A pair that
#: spans a function word and a content word (``么时`` of 什么时候, ``的时``) is kept only when it is
#: one of these.
ZH_STOP_WORDS = frozenset(
    _listed(
        """什么 么时 时候 怎么 么样 哪里 哪儿 哪个 哪些 为什 为何 是不 是否 有没 没有 我们 你们
        他们 她们 它们 自己 这个 那个 这些 那些 一个 就是 可以 还是 因为 所以 但是 如果 已经
        现在 的时 了吗 了吧 是什 么的 的 了 吗 呢 是 在 和 我 你 他 她 它 有 也 都 就
        吧 啊 呀 之 与 及 或"""
    )
)

STOP_WORDS = EN_STOP_WORDS | ZH_STOP_WORDS


def is_stop_word(term: str) -> bool:
    """Whether an analysed term is a function word (:data:`STOP_WORDS`)."""
    return term in STOP_WORDS


def query_terms(query: str, *, latin_prefix: bool = False) -> list[QueryTerm]:
    """Distinct terms of a query that carry meaning, in order.

    Stop words (:data:`STOP_WORDS`) are left out, unless the query is made of nothing else: then
    its words are its terms (``"the who"`` still finds the band). A lone CJK character always
    matches as a prefix (it is the start of the bigrams that contain it); with ``latin_prefix``
    (the forgiving ``recall``) every non-CJK term of at least ``MIN_PREFIX_LENGTH`` and at most
    ``MAX_PREFIX_LENGTH`` characters does too. Every term also matches the words that share its
    stem. Only the first ``MAX_QUERY_TERMS`` are kept.
    """
    analysed = terms(query)
    meaningful = [t for t in analysed if not is_stop_word(t)]
    seen: set[str] = set()
    out: list[QueryTerm] = []
    for term in meaningful or analysed:
        if term in seen:
            continue
        seen.add(term)
        cjk = is_cjk(term)
        latin = latin_prefix and not cjk and MIN_PREFIX_LENGTH <= len(term) <= MAX_PREFIX_LENGTH
        out.append(QueryTerm(term, prefix=(cjk and len(term) == 1) or latin))
        if len(out) == MAX_QUERY_TERMS:
            break
    return out


def matching_words(query_term: QueryTerm, doc_terms: Iterable[str]) -> list[str]:
    """The document's words (analysed, distinct, sorted) that ``query_term`` matches: those
    sharing its stem, and with ``prefix`` those starting with it."""
    wanted, prefix, typed = query_term.stem, query_term.prefix, query_term.text
    return sorted({w for w in doc_terms if stem(w) == wanted or (prefix and w.startswith(typed))})


def term_matches(query_term: QueryTerm, doc_terms: Iterable[str]) -> bool:
    """Whether ``query_term`` matches a document with these (analysed) words: the reference rule
    both backends implement."""
    wanted, prefix, typed = query_term.stem, query_term.prefix, query_term.text
    return any(stem(w) == wanted or (prefix and w.startswith(typed)) for w in doc_terms)


# --- identical memories --------------------------------------------------------------------


def dedupe_key(content: str) -> str:
    """Content as the index normalises it (NFKC, case folding), with runs of whitespace as one
    space: contents equal under it are the same memory (``recall_context`` shows them once,
    ``memory_add`` stores them once)."""
    return " ".join(normalise(content).split())


def fingerprint(content: str, kind: str | None, path: str | None, team_id: str | None) -> str:
    """What makes two memories of a project the same one for ``memory_add``: the content (as
    ``dedupe_key``), kind and path (case-folded, as filters compare them) and team."""
    material = [dedupe_key(content), (kind or "").casefold(), (path or "").casefold(), team_id or ""]
    return hashlib.sha256(json.dumps(material, ensure_ascii=False).encode()).hexdigest()


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
