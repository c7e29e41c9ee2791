"""Small timing helpers: percentiles over samples in seconds, reported in milliseconds."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence


def percentile(samples: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation): the value below which ``pct``% of samples lie."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def summary_ms(samples: Sequence[float]) -> dict[str, float | int]:
    """p50 / p90 / p99 / max / mean of samples given in seconds, in milliseconds."""
    return {
        "n": len(samples),
        "p50_ms": round(percentile(samples, 50) * 1000, 3),
        "p90_ms": round(percentile(samples, 90) * 1000, 3),
        "p99_ms": round(percentile(samples, 99) * 1000, 3),
        "max_ms": round(max(samples) * 1000, 3) if samples else math.nan,
        "mean_ms": round(statistics.fmean(samples) * 1000, 3) if samples else math.nan,
    }


def mean_ms(call: Callable[[], object], times: int) -> float:
    """The mean wall time of ``times`` calls of ``call``, in milliseconds (one decimal)."""
    started = time.perf_counter()
    for _ in range(times):
        call()
    return round((time.perf_counter() - started) / times * 1000, 1)
