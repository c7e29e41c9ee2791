"""A workspace's bucket sharded over several DynamoDB items (backends/aws/limiter.py), on moto
server alone. The shard size is lowered (``shard_limit``) so that a few hundred calls exercise
4 and 16 shards; the algorithm does not depend on the size.

moto does not apply conditional writes atomically across threads, while real DynamoDB is atomic
per item: the racing tests serialise moto's calls with a lock taken in botocore's ``before-call``
and released in ``after-call`` / ``after-call-error`` (``SerialisedDynamoDB``)."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from mnemo.backends.aws.limiter import PER_S, DynamoRateLimiter, shard_count
from mnemo.local.tables import create_tables

from tests.support.aws_stack import SerialisedDynamoDB, moto_server

pytestmark = [pytest.mark.slow, pytest.mark.aws]

T0 = 1_900_000_000 * PER_S  # a fixed instant (µs)
MINUTE = 60 * PER_S


@pytest.fixture(scope="module")
def rate_table() -> Iterator[tuple[Any, str]]:
    with moto_server() as url:
        client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1")
        create_tables(client, {"RateLimitTable": "rate-shards"})
        yield client, "rate-shards"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def limiter(rate_table: tuple[Any, str], clock: Clock, shard_limit: int, seed: int) -> DynamoRateLimiter:
    client, table = rate_table
    return DynamoRateLimiter(client, table, clock=clock, shard_limit=shard_limit, rng=random.Random(seed))


@pytest.mark.parametrize(("limit", "shard_limit", "shards"), [(120, 30, 4), (160, 10, 16)])
def test_a_burst_of_twice_the_limit_from_racing_instances_admits_the_limit_and_never_more(
    rate_table, limit, shard_limit, shards
):
    # Given 16 instances (each its own limiter and memory) and a bucket of `shards` shards, time frozen
    client, _ = rate_table
    SerialisedDynamoDB(client)
    assert shard_count(limit, shard_limit) == shards
    clock = Clock()
    workspace = f"ws_burst_{shards}"
    instances = [limiter(rate_table, clock, shard_limit, seed) for seed in range(16)]
    admitted: Counter[bool] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(len(instances))

    def calls(instance: DynamoRateLimiter) -> None:
        start.wait()
        for _ in range(2 * limit // len(instances)):
            allowed = instance.acquire(workspace, "write", limit).allowed
            with lock:
                admitted[allowed] += 1

    # When they send twice the limit at once
    threads = [threading.Thread(target=calls, args=(i,)) for i in instances]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Then never more than the limit, and at most 2 % fewer (tokens left in shards nobody probed)
    print(f"{shards} shards: admitted {admitted[True]} of {limit}")
    assert admitted[True] + admitted[False] == 2 * limit
    assert limit * 0.98 <= admitted[True] <= limit
    # and the shards' sum, read back, agrees with what was admitted
    assert instances[0].peek(workspace, "write", limit).remaining == limit - admitted[True]


def test_demand_under_the_limit_is_never_refused_and_over_it_gets_exactly_the_rate(rate_table):
    # Given one bucket of 4 shards (limit 60 a minute) and calls arriving over simulated minutes
    clock = Clock()
    instance = limiter(rate_table, clock, shard_limit=15, seed=7)
    limit, workspace = 60, "ws_rate"

    def run(calls_per_minute: int, minutes: int) -> int:
        gap = MINUTE // calls_per_minute
        allowed = 0
        for _ in range(calls_per_minute * minutes):
            clock.now += gap
            allowed += instance.acquire(workspace, "search", limit).allowed
        return allowed

    # When demand runs at 90 % of the limit, then at twice the limit
    under = run(54, 2)
    left, start = instance.peek(workspace, "search", limit).remaining, clock.now
    over = run(120, 2)
    refill = limit * (clock.now - start) // MINUTE
    end = instance.peek(workspace, "search", limit).remaining
    print(f"under {under}/108; over {over} + {end} at the end, of {left} left + {refill} refilled")

    # Then nothing under the limit is refused; over it, the shards admit what was left at the
    # start (read back exactly) plus the refill of those 2 minutes — never more, at most 2 % less —
    # and what was not admitted is still in the shards, but for a few tokens (a shard rounds down a
    # part-refilled token; a full shard's refill is lost until a call probes it)
    assert under == 108
    assert (left + refill) * 0.98 <= over <= left + refill
    assert left + refill - 4 <= over + end <= left + refill


def test_a_sharded_bucket_reads_back_exactly_and_a_drained_one_costs_no_requests(rate_table):
    client, _ = rate_table
    calls: Counter[str] = Counter()
    client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.update([model.name]))
    clock = Clock()
    instance = limiter(rate_table, clock, shard_limit=10, seed=3)
    limit, workspace = 40, "ws_cost"
    assert instance.peek(workspace, "write", limit).remaining == limit  # never used: full

    # When 25 calls are admitted (time frozen)
    assert all(instance.acquire(workspace, "write", limit).allowed for _ in range(25))

    # Then the shards' sum says exactly 15 left, read with one BatchGetItem
    calls.clear()
    level = instance.peek(workspace, "write", limit)
    assert (level.remaining, level.allowed) == (15, True)
    assert calls == Counter({"BatchGetItem": 1})

    # When the rest is drained and the caller hammers on
    while instance.acquire(workspace, "write", limit).allowed:
        pass
    calls.clear()
    refused = [instance.acquire(workspace, "write", limit) for _ in range(20)]

    # Then every shard is remembered empty: refused from memory with a retry hint, no request
    assert not any(d.allowed for d in refused)
    assert all(d.retry_after_s >= 1 and d.limit == limit for d in refused)
    assert calls == Counter()
    assert instance.peek(workspace, "write", limit).remaining == 0
