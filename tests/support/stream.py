"""The memories table's stream drained through the indexer, for tests that look at the index.

On AWS the index follows the table through its stream; in the suite nothing follows it unless a
test says so, so every search meets a lagging index (the search adapter's read-your-writes merge
is what the tools see). :class:`StreamDrain` plays the event source mapping synchronously —
``mnemo.local.stream.StreamMapping``, the one ``mnemo serve --backend aws`` runs, with the
indexer's own handler (``functions/indexer/handler.py``) wired to the test's backend — so a test
can bring the index level with the store, or lose chosen changes the way a mapping that gave up
on them would.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mnemo import runtime
from mnemo.embedding import default_embedder
from mnemo.local.stream import Failure, StreamMapping, clients
from mnemo.service.pipeline import Service


class StreamDrain:
    """One stream position for a whole session (tests share the session's table)."""

    def __init__(self, cfg: Any, *, start: str = "TRIM_HORIZON", max_retry_attempts: int | None = None) -> None:
        """``start``: where a shard is first read (``LATEST`` skips what the stream holds now);
        ``max_retry_attempts``: the mapping's retries of a failed batch (the template's by default)."""
        self.cfg = cfg
        dynamodb, streams = clients(cfg)
        self.failures: list[Failure] = []
        self._ports: Any = None
        self.mapping = StreamMapping(
            dynamodb,
            streams,
            cfg.memories_table,
            self._handle,
            on_failure=self.failures.append,
            retry_delay_s=0,
            start=start,
            **({} if max_retry_attempts is None else {"max_retry_attempts": max_retry_attempts}),
        )

    def _handle(self, event: dict[str, Any], context: Any) -> Any:
        from functions.indexer.handler import lambda_handler

        with runtime.using(Service(self._ports, embedder=default_embedder()), self.cfg):
            return lambda_handler(event, context)

    def drain(self, ports: Any, *, lose: Iterable[str] = ()) -> int:
        """Deliver every change not yet delivered to the indexer over ``ports``; the changes of
        the memories in ``lose`` are dropped instead. Returns the stream records read."""
        lost = set(lose)
        self._ports = ports
        return self.mapping.drain(lose=lambda record: _memory_id(record) in lost)


def _memory_id(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["Keys"]["sk"]["S"]).removeprefix("MEM#")
