"""Per-workspace GCRA buckets (``mnemo.gcra``) as DynamoDB items, decided inside
``ConditionExpression``s: at most two conditional ``UpdateItem``s per call and no read, atomic per
item, so racing callers never over-admit. A limit above :data:`SHARD_LIMIT` a minute is split over
shards (one item sits on one partition); a call probes up to :data:`PROBES` random shards, and a
rejection is remembered per shard until its retry time. The design and its error bound:
docs/aws.md, "Rate limiter" (measured in ``tests/integration/test_rate_limit_shards.py``).
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from mnemo.backends.aws.errors import is_condition_failure, outage
from mnemo.backends.errors import translate_errors
from mnemo.gcra import WINDOW_S, interval, peek, step
from mnemo.ports import RateClass, RateDecision

#: the largest share of a limit one item holds, in calls a minute (250 a second: with a refused
#: probe or a second update per call, still at most ~500 writes a second on the item's partition)
SHARD_LIMIT = 15_000
#: shards a call tries before it is refused
PROBES = 3
#: ticks a second of ``tat_us``
PER_S = 1_000_000
#: shards whose last decision is remembered per process (LRU)
CACHE_SIZE = 4096
#: an idle shard's item expires (DynamoDB TTL) this long after it is full again
IDLE_TTL_S = 3600
#: BatchGetItem's most keys a request
BATCH_GET_MAX = 100


def _now_us() -> int:
    return time.time_ns() // 1000


def shard_count(limit: int, shard_limit: int = SHARD_LIMIT) -> int:
    return max(1, -(-limit // shard_limit))


def shares(limit: int, count: int) -> list[int]:
    """The limit split across ``count`` shards, summing to it exactly."""
    return [limit // count + (1 if i < limit % count else 0) for i in range(count)]


@translate_errors(outage)
class DynamoRateLimiter:
    def __init__(
        self,
        client: Any,
        table: str,
        *,
        clock: Callable[[], int] = _now_us,
        shard_limit: int = SHARD_LIMIT,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.table = table
        self.clock = clock
        self.shard_limit = shard_limit
        self._rng = rng or random.Random()  # noqa: S311 - spreads load over shards; nothing secret
        self._lock = threading.Lock()
        #: (shard key, share) -> (last tat seen, rejected until this µs or 0)
        self._seen: OrderedDict[tuple[str, int], tuple[int, int]] = OrderedDict()

    def keys(self, workspace_id: str, rate_class: RateClass, limit: int) -> list[str]:
        """The items of a workspace's bucket of a class at this limit."""
        count = shard_count(limit, self.shard_limit)
        base = f"RL#{workspace_id}#{rate_class}"
        return [base] if count == 1 else [f"{base}#{i}" for i in range(count)]

    def acquire(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        keys = self.keys(workspace_id, rate_class, limit)
        parts = shares(limit, len(keys))
        now = self.clock()
        seen = [self._remembered(key, share) for key, share in zip(keys, parts, strict=True)]
        open_shards = [i for i in range(len(keys)) if seen[i][1] <= now]
        if not open_shards:
            soonest = min(range(len(keys)), key=lambda i: seen[i][1])
            return self._scaled(step(seen[soonest][0], now, parts[soonest], rate_class, per_s=PER_S).decision, limit)
        self._rng.shuffle(open_shards)
        refusals: list[RateDecision] = []
        for i in open_shards[:PROBES]:
            key, share = keys[i], parts[i]
            admitted, tat = self._take(key, now, share, seen[i][0])
            t = interval(share, PER_S)
            if admitted:
                self._remember(key, share, tat, 0)
                return self._scaled(step(tat - t, now, share, rate_class, per_s=PER_S).decision, limit)
            self._remember(key, share, tat, tat + t - t * share)
            refusals.append(step(tat, now, share, rate_class, per_s=PER_S).decision)
        return self._scaled(min(refusals, key=lambda d: d.retry_after_s), limit)

    def peek(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        """Strongly consistent reads of every shard (one ``GetItem``, or ``BatchGetItem``s when
        sharded); the per-process memory is neither read nor changed."""
        keys = self.keys(workspace_id, rate_class, limit)
        parts = shares(limit, len(keys))
        tats = self._read(keys)
        now = self.clock()
        levels = [peek(tats.get(k), now, share, rate_class, per_s=PER_S) for k, share in zip(keys, parts, strict=True)]
        refused = [d.retry_after_s for d in levels if not d.allowed]
        return RateDecision(
            allowed=any(d.allowed for d in levels),
            limit=limit,
            remaining=sum(d.remaining for d in levels),
            reset_s=max(d.reset_s for d in levels),
            retry_after_s=0 if len(refused) < len(levels) else min(refused),
            window_s=WINDOW_S,
            rate_class=rate_class,
        )

    # -- one shard ------------------------------------------------------------------------------

    def _take(self, key: str, now: int, share: int, tat_seen: int) -> tuple[bool, int]:
        """(admitted, the tat after success or the tat found on failure); at most two updates."""
        t = interval(share, PER_S)
        capacity = t * share
        busy = tat_seen >= now
        tat: int | None = tat_seen if busy else None
        for _ in range(2):
            admitted, found = (self._busy if busy else self._idle)(key, now, share)
            if admitted and found is not None:
                return True, found
            tat = found
            if tat is None or tat < now:
                busy = False  # idle (or the item vanished meanwhile)
            elif tat <= now + capacity - t:
                busy = True
            else:
                return False, tat  # empty
        return False, now + capacity  # raced twice (each update lost to another caller's): say "empty"

    def _idle(self, key: str, now: int, share: int) -> tuple[bool, int | None]:
        t = interval(share, PER_S)
        return self._update(
            key,
            "SET tat_us = :new, #ttl = :ttl",
            "attribute_not_exists(tat_us) OR tat_us < :now",
            {":new": now + t, ":now": now, ":ttl": self._ttl(now + t)},
        )

    def _busy(self, key: str, now: int, share: int) -> tuple[bool, int | None]:
        t = interval(share, PER_S)
        capacity = t * share
        return self._update(
            key,
            "SET tat_us = tat_us + :t, #ttl = :ttl",
            "tat_us BETWEEN :now AND :max",
            {":t": t, ":now": now, ":max": now + capacity - t, ":ttl": self._ttl(now + capacity)},
        )

    def _update(self, key: str, update: str, condition: str, values: dict[str, int]) -> tuple[bool, int | None]:
        try:
            out = self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": key}},
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues={k: {"N": str(v)} for k, v in values.items()},
                ReturnValues="UPDATED_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
            old = exc.response.get("Item", {}).get("tat_us")
            return False, int(old["N"]) if old else None
        return True, int(out["Attributes"]["tat_us"]["N"])

    def _read(self, keys: list[str]) -> dict[str, int]:
        if len(keys) == 1:
            out = self.client.get_item(TableName=self.table, Key={"pk": {"S": keys[0]}}, ConsistentRead=True)
            items = [out["Item"]] if "Item" in out else []
        else:
            items = []
            for start in range(0, len(keys), BATCH_GET_MAX):
                request: dict[str, Any] = {
                    self.table: {"Keys": [{"pk": {"S": k}} for k in keys[start : start + BATCH_GET_MAX]]}
                }
                while request:
                    request[self.table]["ConsistentRead"] = True
                    out = self.client.batch_get_item(RequestItems=request)
                    items.extend(out["Responses"].get(self.table, []))
                    request = out.get("UnprocessedKeys") or {}
        return {item["pk"]["S"]: int(item["tat_us"]["N"]) for item in items if "tat_us" in item}

    @staticmethod
    def _scaled(decision: RateDecision, limit: int) -> RateDecision:
        """A shard's decision stated for the whole limit (itself when there is one shard)."""
        if decision.limit == limit:
            return decision
        return RateDecision(
            allowed=decision.allowed,
            limit=limit,
            remaining=min(limit, decision.remaining * limit // decision.limit),
            reset_s=decision.reset_s,
            retry_after_s=decision.retry_after_s,
            window_s=decision.window_s,
            rate_class=decision.rate_class,
        )

    @staticmethod
    def _ttl(full_at_us: int) -> int:
        return full_at_us // PER_S + WINDOW_S + IDLE_TTL_S

    # -- the per-process memory ---------------------------------------------------------------

    def _remembered(self, key: str, share: int) -> tuple[int, int]:
        with self._lock:
            return self._seen.get((key, share), (0, 0))

    def _remember(self, key: str, share: int, tat: int, rejected_until: int) -> None:
        with self._lock:
            self._seen[(key, share)] = (tat, rejected_until)
            self._seen.move_to_end((key, share))
            while len(self._seen) > CACHE_SIZE:
                self._seen.popitem(last=False)
