"""GCRA (generic cell rate algorithm): a token bucket kept as one integer per bucket.

A bucket of ``limit`` calls per ``window`` with burst = limit stores only its *theoretical
arrival time* (TAT, an integer count of clock ticks: milliseconds by default, ``per_s`` ticks a
second). Each call costs one emission interval ``T = window / limit``; a call at ``now`` is
admitted when ``max(tat, now) + T - now <= window``, i.e. while the bucket still holds a token.
``T`` is rounded down to a whole tick, so a bucket admits up to ``1 / T`` (relative) more than its
limit: under 1 % while ``T`` is at least 100 ticks — 600 calls a minute counted in milliseconds
(SQLite), 600 000 in microseconds (the DynamoDB buckets). Backends keep the TAT and make the
read-decide-write atomic (SQLite: one write transaction; DynamoDB: a conditional update).
:func:`peek` reads a bucket without taking from it (the admin view of current levels).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WINDOW_S = 60


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    #: seconds until the bucket is full again
    reset_s: int
    #: whole seconds to wait before a retry can succeed (0 when allowed)
    retry_after_s: int
    window_s: int = 60
    rate_class: str = "search"

    def headers(self) -> dict[str, str]:
        """docs/contract.md §5's headers, in the structured-field form of the IETF httpapi rate-limit draft."""
        headers = {
            "RateLimit-Policy": f'"{self.rate_class}";q={self.limit};w={self.window_s}',
            "RateLimit": f'"{self.rate_class}";r={self.remaining};t={self.reset_s}',
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after_s)
        return headers


@dataclass(frozen=True, slots=True)
class Step:
    decision: RateDecision
    new_tat: int  # what to store when admitted


def interval(limit: int, per_s: int = 1000) -> int:
    """The emission interval ``T`` in ticks (at least one)."""
    return max(1, WINDOW_S * per_s // limit)


def step(tat: int | None, now: int, limit: int, rate_class: str, *, per_s: int = 1000) -> Step:
    t = interval(limit, per_s)
    capacity = t * limit  # a full bucket: TAT == now
    base = max(tat or 0, now)
    new_tat = base + t
    allowed = new_tat - now <= capacity
    level = (new_tat if allowed else base) - now  # ticks of tokens in use after this call
    remaining = max(0, (capacity - level) // t)
    retry = 0 if allowed else new_tat - capacity - now
    decision = RateDecision(
        allowed=allowed,
        limit=limit,
        remaining=int(remaining),
        reset_s=math.ceil(level / per_s),
        retry_after_s=0 if allowed else max(1, math.ceil(retry / per_s)),
        window_s=WINDOW_S,
        rate_class=rate_class,
    )
    return Step(decision, new_tat if allowed else base)


def peek(tat: int | None, now: int, limit: int, rate_class: str, *, per_s: int = 1000) -> RateDecision:
    """The bucket as it stands at ``now``, taking nothing: ``remaining`` calls left, ``reset_s``
    until it is full again, and whether a call now would be admitted (``retry_after_s`` if not).
    Right after :func:`step` admitted a call it reports the same ``remaining`` and ``reset_s``."""
    t = interval(limit, per_s)
    capacity = t * limit
    base = max(tat or 0, now)
    level = base - now
    remaining = max(0, (capacity - level) // t)
    allowed = level + t <= capacity
    retry = 0 if allowed else base + t - capacity - now
    return RateDecision(
        allowed=allowed,
        limit=limit,
        remaining=int(remaining),
        reset_s=math.ceil(level / per_s),
        retry_after_s=0 if allowed else max(1, math.ceil(retry / per_s)),
        window_s=WINDOW_S,
        rate_class=rate_class,
    )
