"""recall_context's block: whole memories in rank order under the token budget, the first that
does not fit cut (and marked) or left out, by the documented token estimate (``mnemo.text``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mnemo import text
from mnemo.models.records import MemoryRecord
from mnemo.models.retrieval import (
    ContextItem,
)
from mnemo.service.retrieval.matching import Match

#: what ends a memory cut to fit, and the block when memories were left out
TRUNCATION_MARK = "…[truncated]"


#: between two memories in a context block
SEPARATOR = "\n\n"


#: a memory is cut to fit only when at least this many tokens of its text fit (else left out)
MIN_CUT_TOKENS = 8


def dedupe_key(content: str) -> str:
    """Contents that differ only in case, Unicode form or whitespace count as identical."""
    return text.dedupe_key(content)


def _header(number: int, record: MemoryRecord) -> str:
    bits = [f"[{number}] {record.id}"]
    if record.kind:
        bits.append(f"kind: {record.kind}")
    if record.path:
        bits.append(f"path: {record.path}")
    if record.tags:
        bits.append("tags: " + ", ".join(record.tags))
    if record.superseded_by:
        bits.append(f"superseded by {record.superseded_by}")
    if record.supersedes:
        bits.append("supersedes " + ", ".join(record.supersedes))
    return " | ".join(bits) + "\n"


def cut_to(content: str, quarters: int) -> str:
    """The longest prefix of ``content`` within ``quarters`` quarter-tokens, ended at a word
    boundary when one is near, without trailing whitespace."""
    used = 0
    end = 0
    for char in content:
        weight = text.char_quarters(char)
        if used + weight > quarters:
            break
        used += weight
        end += 1
    prefix = content[:end]
    if end < len(content) and not content[end].isspace():
        boundary = max(prefix.rfind(" "), prefix.rfind("\n"))
        if boundary >= end // 2:
            prefix = prefix[:boundary]
    return prefix.rstrip()


@dataclass
class Packed:
    parts: list[str]
    items: list[ContextItem]
    truncated: bool = False


def pack(matches: Sequence[Match], max_tokens: int) -> Packed:
    """Whole memories in rank order while they fit; the first that does not is cut (and marked)
    when enough of it fits, else left out with a closing mark. Never over ``max_tokens``."""
    budget = max_tokens * 4
    mark = text.token_quarters(TRUNCATION_MARK)
    reserve = text.token_quarters(SEPARATOR) + mark
    packed = Packed([], [])
    used = 0
    for number, match in enumerate(matches, start=1):
        record = match.record
        separator = SEPARATOR if packed.parts else ""
        head = _header(number, record)
        piece = separator + head + record.content
        weight = text.token_quarters(piece)
        last = number == len(matches)
        if used + weight + (0 if last else reserve) <= budget:
            packed.parts.append(piece)
            packed.items.append(_context_item(record, record.content, head, truncated=False))
            used += weight
            continue
        packed.truncated = True
        room = budget - used - text.token_quarters(separator + head) - mark
        room = min(room, text.token_quarters(record.content) - 1)
        cut = cut_to(record.content, room) if room >= MIN_CUT_TOKENS * 4 else ""
        if cut:
            content = cut + TRUNCATION_MARK
            packed.parts.append(separator + head + content)
            packed.items.append(_context_item(record, content, head, truncated=True))
        else:
            tail = separator + TRUNCATION_MARK
            if used + text.token_quarters(tail) <= budget:
                packed.parts.append(tail)
        break
    return packed


def _context_item(record: MemoryRecord, content: str, head: str, *, truncated: bool) -> ContextItem:
    return ContextItem(
        reference=record.id,
        location=record.path,
        kind=record.kind,
        tags=record.tags,
        content=content,
        tokens=text.estimate_tokens(head + content),
        truncated=truncated,
        supersedes=record.supersedes,
        superseded_by=record.superseded_by,
    )
