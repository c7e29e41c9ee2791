"""The LIKE patterns of ``path_filter`` and ``memory_type`` (docs/contract.md §3), defined once.

``%`` matches any run of characters (also none), ``_`` exactly one character, and ``\\``
makes the next character literal (``\\%``, ``\\_``, ``\\\\``; ``\\x`` is just ``x``). Matching
is case-insensitive: pattern and value are both case-folded. A memory without a kind or path
is matched as the empty string, so ``%`` matches it and ``_%`` does not.

A valid pattern (anything else is 400 ``invalid_request``, see :func:`like_problem`):

* has 1 to :data:`MAX_LIKE_LENGTH` characters and no control characters (no stored kind or path
  holds one, and SQLite would read a NUL as the end of the pattern);
* does not end in a lone ``\\`` (it would escape nothing);
* has at most :data:`MAX_LIKE_ANY_RUNS` ``%`` and at most :data:`MAX_LIKE_ANY_ONE_AFTER_RUN`
  ``_`` after its first ``%`` (escaped ones are literals and do not count). Those bounds are
  OpenSearch's: it compiles a ``wildcard`` query into a deterministic automaton, refused (an
  error, not an answer) past a fixed amount of work, and that work grows exponentially with the
  ``?`` that follow a ``*`` and with the pattern's length. Within the bounds the worst pattern
  costs the node a few tens of milliseconds (bench/results/like.md).

Matching (:func:`like_matches`) cannot backtrack. The pattern is split on its ``%`` into
segments, each a fixed number of characters (literals and ``_``). Without ``%`` the value must be
exactly the one segment. Otherwise the first segment must start the value, the last must end it,
and each middle one is placed at its leftmost occurrence after the previous one: segments are of
fixed length, so the leftmost place leaves the most room for the rest, and a segment that does
not fit there fits nowhere later (greedy is exact). A literal segment is found with
``str.find``; one holding ``_`` with a regular expression of literals and ``.`` only — no
quantifier, no alternation, so no state to return to. Each value position is tried at most once
per segment: at most ``len(value) × len(pattern)`` character comparisons, all in C.

Backends translate the pattern themselves — SQLite ``LIKE … ESCAPE '\\'`` (its matcher returns
early once a ``%`` has failed, so it is polynomial too), OpenSearch a ``wildcard`` query
(:func:`like_tokens` is the parse both the matcher and that translation read) — and are tested
against :func:`like_matches`, which is also what the AWS backend filters listings with and what
the service uses to explain a ``no_match``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: the longest pattern, in characters (a path is at most 512, a kind 64)
MAX_LIKE_LENGTH = 128
#: the most ``%`` a pattern may hold
MAX_LIKE_ANY_RUNS = 8
#: the most ``_`` a pattern may hold after its first ``%`` (before it, ``_`` costs nothing)
MAX_LIKE_ANY_ONE_AFTER_RUN = 3

ANY_RUN = "%"
ANY_ONE = "_"
_ESCAPE = "\\"


@dataclass(frozen=True, slots=True)
class Token:
    """One unit of a parsed pattern: ``%``, ``_``, or one literal character (``literal``)."""

    kind: str  # ANY_RUN, ANY_ONE or "literal"
    char: str = ""


def like_tokens(pattern: str) -> list[Token]:
    """``pattern`` (valid, already case-folded when it is to be matched) as tokens."""
    out: list[Token] = []
    chars = iter(pattern)
    for char in chars:
        if char == _ESCAPE:
            out.append(Token("literal", next(chars, _ESCAPE)))
        elif char in (ANY_RUN, ANY_ONE):
            out.append(Token(char))
        else:
            out.append(Token("literal", char))
    return out


def like_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid LIKE pattern, or None when it is."""
    if not 1 <= len(pattern) <= MAX_LIKE_LENGTH:
        return f"a pattern has 1-{MAX_LIKE_LENGTH} characters, not {len(pattern)}"
    if any(ord(char) < 32 for char in pattern):
        return "control characters are not allowed in a pattern (no kind or path contains one)"
    if pattern.endswith(_ESCAPE) and (len(pattern) - len(pattern.rstrip(_ESCAPE))) % 2:
        return "the pattern ends with a lone `\\`, which escapes nothing; write `\\\\` for a literal backslash"
    tokens = like_tokens(pattern)
    runs = sum(1 for t in tokens if t.kind == ANY_RUN)
    if runs > MAX_LIKE_ANY_RUNS:
        return f"the pattern has {runs} `%`; at most {MAX_LIKE_ANY_RUNS} are allowed (write `\\%` for a literal one)"
    first_run = next((i for i, t in enumerate(tokens) if t.kind == ANY_RUN), len(tokens))
    ones = sum(1 for t in tokens[first_run:] if t.kind == ANY_ONE)
    if ones > MAX_LIKE_ANY_ONE_AFTER_RUN:
        return (
            f"the pattern has {ones} `_` after its first `%`; at most {MAX_LIKE_ANY_ONE_AFTER_RUN} are allowed "
            "(write `\\_` for a literal underscore)"
        )
    return None


@dataclass(frozen=True, slots=True)
class _Segment:
    """A run of tokens between two ``%``: ``length`` characters, literal or ``_``."""

    length: int
    #: the segment's text when it holds no ``_`` (found with str.find), else None
    literal: str | None
    #: literals and ``.`` (DOTALL), when it holds ``_``
    regex: re.Pattern[str] | None

    def at(self, value: str, pos: int) -> bool:
        """Whether the segment occupies ``value[pos : pos + length]`` (which must exist)."""
        if self.literal is not None:
            return value.startswith(self.literal, pos)
        assert self.regex is not None
        return self.regex.match(value, pos) is not None

    def find(self, value: str, start: int, end: int) -> int:
        """The leftmost position ≥ ``start`` where the segment lies wholly before ``end``, or -1."""
        if self.literal is not None:
            return value.find(self.literal, start, end)
        assert self.regex is not None
        found = self.regex.search(value, start, end)
        return -1 if found is None else found.start()


def _segment(tokens: list[Token]) -> _Segment:
    if all(t.kind == "literal" for t in tokens):
        return _Segment(len(tokens), "".join(t.char for t in tokens), None)
    source = "".join("." if t.kind == ANY_ONE else re.escape(t.char) for t in tokens)
    return _Segment(len(tokens), None, re.compile(source, re.DOTALL))


@dataclass(frozen=True, slots=True)
class LikeMatcher:
    """A compiled pattern: its ``%``-separated segments (one when it has no ``%``)."""

    segments: tuple[_Segment, ...]

    def __call__(self, value: str) -> bool:
        """Whether ``value`` (already case-folded) matches."""
        first, last = self.segments[0], self.segments[-1]
        if len(self.segments) == 1:
            return len(value) == first.length and first.at(value, 0)
        end = len(value) - last.length
        if end < first.length or not first.at(value, 0) or not last.at(value, end):
            return False
        pos = first.length
        for segment in self.segments[1:-1]:
            found = segment.find(value, pos, end)
            if found < 0:
                return False
            pos = found + segment.length
        return True


@lru_cache(maxsize=1024)
def compile_like(pattern: str) -> LikeMatcher:
    """``pattern`` (valid) compiled for matching case-folded values."""
    segments: list[list[Token]] = [[]]
    for token in like_tokens(pattern.casefold()):
        if token.kind == ANY_RUN:
            segments.append([])
        else:
            segments[-1].append(token)
    return LikeMatcher(tuple(_segment(s) for s in segments))


def like_matches(pattern: str, value: str | None) -> bool:
    """True when ``value`` (None counts as "") matches the LIKE ``pattern``."""
    return compile_like(pattern)((value or "").casefold())


def is_match_all(pattern: str | None) -> bool:
    """True for patterns that match every value, the empty one included (``%``, ``%%``, …)."""
    return pattern is None or (pattern != "" and set(pattern) == {"%"})
