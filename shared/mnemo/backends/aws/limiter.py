"""Per-workspace GCRA buckets as DynamoDB items, decided inside ``ConditionExpression``s.

A bucket is one item ``pk = RL#<workspace>#<class>`` holding ``tat`` (theoretical arrival time,
integer epoch milliseconds; see :mod:`mnemo.gcra`). With ``T`` the emission interval and
``C = T * limit`` the bucket's capacity, a call at ``now`` is admitted by one of two conditional
``UpdateItem``s — DynamoDB applies each atomically per item, so racing callers can never both take
the last token:

* **idle** — ``attribute_not_exists(tat) OR tat < :now`` → ``SET tat = :now + T`` (a full bucket);
* **busy** — ``tat BETWEEN :now AND :now + C - T`` → ``SET tat = tat + T`` (a token is left).

No read precedes them: ``ReturnValues=UPDATED_NEW`` gives the new ``tat`` on success and
``ReturnValuesOnConditionCheckFailure=ALL_OLD`` the current one on failure, which is all
:func:`mnemo.gcra.step` needs for ``remaining`` / ``reset`` / ``retry_after``. The last ``tat``
seen per bucket picks which update to try first, so a busy bucket usually costs one write; at
most two are ever sent. A rejection is remembered until its retry time, so a client hammering
after a 429 costs no DynamoDB request until then (``tat`` never decreases, so the remembered
value stays a safe lower bound).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from mnemo.backends.aws.errors import is_condition_failure, outage
from mnemo.backends.errors import translate_errors
from mnemo.gcra import WINDOW_MS, interval_ms, peek, step
from mnemo.ports import RateClass, RateDecision

#: buckets whose last decision is remembered per process (LRU)
CACHE_SIZE = 4096
#: an idle bucket's item expires (DynamoDB TTL) this long after it is full again
IDLE_TTL_S = 3600


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@translate_errors(outage)
class DynamoRateLimiter:
    def __init__(self, client: Any, table: str, *, clock: Callable[[], int] = _now_ms) -> None:
        self.client = client
        self.table = table
        self.clock = clock
        self._lock = threading.Lock()
        #: (bucket, limit) -> (last tat seen, rejected until this ms or 0)
        self._seen: OrderedDict[tuple[str, int], tuple[int, int]] = OrderedDict()

    def acquire(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        bucket = f"RL#{workspace_id}#{rate_class}"
        now = self.clock()
        tat_seen, rejected_until = self._remembered(bucket, limit)
        if now < rejected_until:
            return step(tat_seen, now, limit, rate_class).decision
        attempts = (self._busy, self._idle) if tat_seen >= now else (self._idle, self._busy)
        t = interval_ms(limit)
        tat: int | None = None
        for attempt in attempts:
            admitted, tat = attempt(bucket, now, limit)
            if admitted and tat is not None:
                self._remember(bucket, limit, tat, 0)
                return step(tat - t, now, limit, rate_class).decision
        current = tat if tat is not None else now + t * limit  # the item vanished meanwhile: say "full"
        self._remember(bucket, limit, current, current + t - t * limit)
        return step(current, now, limit, rate_class).decision

    def peek(self, workspace_id: str, rate_class: RateClass, limit: int) -> RateDecision:
        """One strongly consistent ``GetItem``; the per-process memory is neither read nor changed."""
        out = self.client.get_item(
            TableName=self.table, Key={"pk": {"S": f"RL#{workspace_id}#{rate_class}"}}, ConsistentRead=True
        )
        tat = (out.get("Item") or {}).get("tat")
        return peek(int(tat["N"]) if tat else None, self.clock(), limit, rate_class)

    # -- the two conditional updates: (admitted, tat after success or tat found on failure) --

    def _idle(self, bucket: str, now: int, limit: int) -> tuple[bool, int | None]:
        t = interval_ms(limit)
        return self._update(
            bucket,
            "SET tat = :new, #ttl = :ttl",
            "attribute_not_exists(tat) OR tat < :now",
            {":new": now + t, ":now": now, ":ttl": self._ttl(now + t)},
        )

    def _busy(self, bucket: str, now: int, limit: int) -> tuple[bool, int | None]:
        t = interval_ms(limit)
        capacity = t * limit
        return self._update(
            bucket,
            "SET tat = tat + :t, #ttl = :ttl",
            "tat BETWEEN :now AND :max",
            {":t": t, ":now": now, ":max": now + capacity - t, ":ttl": self._ttl(now + capacity)},
        )

    def _update(self, bucket: str, update: str, condition: str, values: dict[str, int]) -> tuple[bool, int | None]:
        try:
            out = self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": bucket}},
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
            old = exc.response.get("Item", {}).get("tat")
            return False, int(old["N"]) if old else None
        return True, int(out["Attributes"]["tat"]["N"])

    @staticmethod
    def _ttl(full_at_ms: int) -> int:
        return full_at_ms // 1000 + WINDOW_MS // 1000 + IDLE_TTL_S

    # -- the per-process memory ---------------------------------------------------------------

    def _remembered(self, bucket: str, limit: int) -> tuple[int, int]:
        with self._lock:
            return self._seen.get((bucket, limit), (0, 0))

    def _remember(self, bucket: str, limit: int, tat: int, rejected_until: int) -> None:
        with self._lock:
            self._seen[(bucket, limit)] = (tat, rejected_until)
            self._seen.move_to_end((bucket, limit))
            while len(self._seen) > CACHE_SIZE:
                self._seen.popitem(last=False)
