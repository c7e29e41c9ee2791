"""recall's context: memories saved together lend each other a bounded part of their weight.

A turn of a conversation is often findable only through the turns saved around it ("what did she
answer?" holds none of the answer's words). After the fusion, the first ``ANCHORS`` memories of the
ranking that weigh anything ask the store for their neighbours (``MemoryStore.neighbours``: the
memory saved just before and just after, in the same session when the memory has one, else in the
project's creation order; one call for all of them, on both backends); every memory then weighs
its own weight plus ``share`` times the mean of its two neighbours' weights (a neighbour outside
the ranking weighs 0; a memory at either end of its session has one neighbour, the other side
counts 0). A neighbour that was not a candidate enters the ranking with what it is lent. What a
memory is lent is at most ``share`` times the heaviest weight, and its own order among memories
lent nothing is kept. The anchors are the ranking's head whatever the ``limit``: the same top 10
for limit 10 and 50."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from mnemo.models.records import MemoryRecord
from mnemo.ports import MemoryFilter
from mnemo.service.context import CallContext
from mnemo.service.retrieval.matching import Match

#: how many of the fused ranking's first memories (those weighing anything) ask for their neighbours
ANCHORS = 30


@dataclass(frozen=True, slots=True)
class Neighbours:
    """The context rule: ``share`` of the mean of a memory's two neighbours' weights is added to its
    own (0: no context). ``within`` "session": only memories saved with a session lend and
    borrow, within it; "time": every memory, within its session when it has one, else among the
    project's memories in creation order."""

    share: float = 0.5
    within: Literal["session", "time"] = "session"
    anchors: int = ANCHORS
    #: a neighbour neither half found joins the ranking (False: only candidates are lent weight)
    join: bool = False


#: the rule recall uses (docs/retrieval.md, "Context")
ADOPTED = Neighbours()


def lend(
    ctx: CallContext, ranked: list[Match], flt: MemoryFilter, rule: Neighbours, *, prefer_working: bool
) -> list[Match]:
    """``ranked`` with each memory's weight raised by what its neighbours lend it (``Match.lent``),
    re-ordered by the raised weight; neighbours that were not candidates join, found by context.
    One ``MemoryStore.neighbours`` call, for the anchors (:func:`anchors`)."""
    heads = anchors(ranked, rule)
    if not heads:
        return ranked
    near = ctx.ports.store.neighbours(ctx.scope, [m.record for m in heads], flt, per_side=1, same_session=True)
    return lent(ranked, near, rule, prefer_working=prefer_working)


def anchors(ranked: list[Match], rule: Neighbours) -> list[Match]:
    """The memories that ask for their neighbours: of the ranking's first ``rule.anchors`` that weigh
    anything, those with a session (every one with ``within`` "time"); none when the rule lends
    nothing."""
    if rule.share <= 0:
        return []
    heads = [m for m in ranked if m.score > 0][: rule.anchors]
    return heads if rule.within == "time" else [m for m in heads if m.record.session is not None]


def lent(
    ranked: list[Match], near: dict[str, list[MemoryRecord]], rule: Neighbours, *, prefer_working: bool
) -> list[Match]:
    """The ranking once every memory is lent ``rule.share`` times the mean of its two neighbours'
    weights (``near``: an anchor's id → its neighbours, as ``MemoryStore.neighbours`` answers;
    adjacency holds both ways)."""
    weight = {m.record.id: m.score for m in ranked}
    sides: dict[str, set[str]] = {}
    joined: dict[str, Match] = {}
    for anchor, records in near.items():
        for record in records:
            sides.setdefault(anchor, set()).add(record.id)
            sides.setdefault(record.id, set()).add(anchor)
            if rule.join and record.id not in weight and record.id not in joined:
                joined[record.id] = Match(record, 0.0, [], by_words=False, analysed=False, via_context=True)
    out = []
    for match in [*ranked, *joined.values()]:
        # two neighbours at most (a skipped memory can make adjacency one-sided): the two heaviest
        two = sorted((weight.get(ref, 0.0) for ref in sides.get(match.record.id, ())), reverse=True)[:2]
        given = rule.share * sum(two) / 2
        out.append(replace(match, score=round(match.score + given, 6), lent=round(given, 6)) if given > 0 else match)
    out.sort(key=lambda m: order(m, prefer_working=prefer_working))
    return out


def order(match: Match, *, prefer_working: bool) -> tuple[bool, float, bool, bool, float, float, str]:
    """Heavier first (working memories before the rest with ``prefer_working``); ties: found by
    words first (newest first), then found by meaning, nearest first, then found by context."""
    return (
        not (prefer_working and match.working),
        -match.score,
        not match.by_words,
        match.via_context,
        -(0.0 if match.by_words else match.similarity or 0.0),
        -match.record.updated_at.timestamp(),
        match.record.id,
    )
