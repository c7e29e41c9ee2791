"""How a workspace's limit is split into DynamoDB shards, and GCRA's tick unit (backends/aws/limiter.py,
mnemo/gcra.py). The shards' behaviour on DynamoDB is tested in tests/integration/test_rate_limit_shards.py."""

from __future__ import annotations

import pytest
from mnemo.backends.aws.limiter import PER_S, SHARD_LIMIT, shard_count, shares
from mnemo.gcra import interval, step


@pytest.mark.parametrize(
    ("limit", "count"), [(1, 1), (120, 1), (15_000, 1), (15_001, 2), (600_000, 40), (1_000_000, 67)]
)
def test_a_limit_takes_as_many_shards_as_its_rate_needs_and_one_below_the_threshold(limit, count):
    assert shard_count(limit) == count
    parts = shares(limit, count)
    assert sum(parts) == limit
    assert max(parts) - min(parts) <= 1
    assert max(parts) <= SHARD_LIMIT


def test_microsecond_ticks_keep_a_high_limit_exact_where_milliseconds_do_not():
    # 13 000 a minute: T is 4.615 ms, rounded to 4 ms (15 000 a minute admitted); 4615 µs (13 000.4)
    assert 60_000 / interval(13_000) > 13_000 * 1.15
    assert 60 * PER_S / interval(13_000, PER_S) < 13_000 * 1.0001


def test_a_decision_in_microseconds_reads_the_same_as_in_milliseconds():
    in_ms = step(None, 5_000, 3, "write")
    in_us = step(None, 5_000_000, 3, "write", per_s=PER_S)
    assert in_ms.decision == in_us.decision
    assert in_us.new_tat == in_ms.new_tat * 1000
