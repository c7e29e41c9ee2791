"""GCRA (generic cell rate algorithm): a token bucket kept as one integer per bucket.

A bucket of ``limit`` calls per ``window`` with burst = limit stores only its *theoretical
arrival time* (TAT, integer milliseconds). Each call costs one emission interval
``T = window / limit``; a call at ``now`` is admitted when ``max(tat, now) + T - now <= window``,
i.e. while the bucket still holds a token. Backends keep the TAT and make the read-decide-write
atomic (SQLite: one write transaction; DynamoDB: a conditional update). :func:`peek` reads a
bucket without taking from it (the admin view of current levels).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WINDOW_MS = 60_000


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
    new_tat_ms: int  # what to store when admitted


def interval_ms(limit: int, window_ms: int = WINDOW_MS) -> int:
    return max(1, window_ms // limit)


def step(tat_ms: int | None, now_ms: int, limit: int, rate_class: str, window_ms: int = WINDOW_MS) -> Step:
    t = interval_ms(limit, window_ms)
    capacity_ms = t * limit  # a full bucket: TAT == now
    base = max(tat_ms or 0, now_ms)
    new_tat = base + t
    allowed = new_tat - now_ms <= capacity_ms
    level = (new_tat if allowed else base) - now_ms  # ms of tokens in use after this call
    remaining = max(0, (capacity_ms - level) // t)
    retry_ms = 0 if allowed else new_tat - capacity_ms - now_ms
    decision = RateDecision(
        allowed=allowed,
        limit=limit,
        remaining=int(remaining),
        reset_s=math.ceil(level / 1000),
        retry_after_s=0 if allowed else max(1, math.ceil(retry_ms / 1000)),
        window_s=window_ms // 1000,
        rate_class=rate_class,
    )
    return Step(decision, new_tat if allowed else base)


def peek(tat_ms: int | None, now_ms: int, limit: int, rate_class: str, window_ms: int = WINDOW_MS) -> RateDecision:
    """The bucket as it stands at ``now_ms``, taking nothing: ``remaining`` calls left, ``reset_s``
    until it is full again, and whether a call now would be admitted (``retry_after_s`` if not).
    Right after :func:`step` admitted a call it reports the same ``remaining`` and ``reset_s``."""
    t = interval_ms(limit, window_ms)
    capacity_ms = t * limit
    base = max(tat_ms or 0, now_ms)
    level = base - now_ms
    remaining = max(0, (capacity_ms - level) // t)
    allowed = level + t <= capacity_ms
    retry_ms = 0 if allowed else base + t - capacity_ms - now_ms
    return RateDecision(
        allowed=allowed,
        limit=limit,
        remaining=int(remaining),
        reset_s=math.ceil(level / 1000),
        retry_after_s=0 if allowed else max(1, math.ceil(retry_ms / 1000)),
        window_s=window_ms // 1000,
        rate_class=rate_class,
    )
