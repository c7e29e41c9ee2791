"""A note longer than a memory may be (4,096 bytes of UTF-8) cut into parts on its own headings,
else its paragraphs, else its lines: each part is a verbatim run of the note, in order, so the
parts put back together are the note (the blank lines between parts aside)."""

from __future__ import annotations

import re

from mnemo.models.common import MAX_CONTENT_BYTES

HEADING = re.compile(r"^(?=#{1,6}[ \t])", re.MULTILINE)
PARAGRAPH = re.compile(r"(?<=\n)(?=[ \t]*\n)")
LINE = re.compile(r"(?<=\n)")


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def split(text: str, limit: int = MAX_CONTENT_BYTES) -> list[str]:
    """``text`` without its blank lines around it, as one part or as parts of at most ``limit``
    bytes each; never an empty part."""
    parts = [part.strip("\n") for part in _pack(text, limit, (HEADING, PARAGRAPH, LINE))]
    return [part for part in parts if part.strip()]


def _pieces(text: str, boundary: re.Pattern[str]) -> list[str]:
    cuts = [m.start() for m in boundary.finditer(text) if 0 < m.start() < len(text)]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def _pack(text: str, limit: int, boundaries: tuple[re.Pattern[str], ...]) -> list[str]:
    if size(text.strip("\n")) <= limit:
        return [text]
    if not boundaries:
        return _hard(text, limit)
    parts: list[str] = []
    current = ""
    for piece in _pieces(text, boundaries[0]):
        if size((current + piece).strip("\n")) <= limit:
            current += piece
            continue
        if current:
            parts.append(current)
        if size(piece.strip("\n")) <= limit:
            current = piece
        else:
            parts.extend(_pack(piece, limit, boundaries[1:]))
            current = ""
    if current:
        parts.append(current)
    return parts


def _hard(text: str, limit: int) -> list[str]:
    """A single line longer than the limit: cut between characters."""
    parts: list[str] = []
    current = ""
    for char in text:
        if size(current + char) > limit:
            parts.append(current)
            current = ""
        current += char
    return [*parts, current] if current else parts
