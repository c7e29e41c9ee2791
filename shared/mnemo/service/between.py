"""What a host that serves one call at a time on one thread (``mnemo mcp``; each of ``mnemo
serve``'s handler instances) does on that thread between calls, so no call pays for it:

* stores the vectors made after earlier answers (:class:`~mnemo.service.vectors.EmbedAfter`,
  handed over: through the connection the calls read with), whenever some are ready;
* once nothing waits to be served, the backend's own work when due (``Ports.idle``: SQLite
  checkpoints its write-ahead log, which otherwise ran inside every eighth or so memory_add at
  100,000 memories: bench/results/2026-12-05-checkpoint-between-calls.md).

A call that arrives meanwhile waits for the step under way (a vector's store, or a checkpoint).
Lambda has no such host: its invocations end with their answers.
"""

from __future__ import annotations

from collections.abc import Callable

from mnemo.ports import Ports
from mnemo.service.vectors import EmbedAfter


class Between:
    """The serving thread's work between calls (see the module docstring)."""

    def __init__(self, ports: Ports, embed_after: EmbedAfter | None) -> None:
        self.ports = ports
        self.embed_after = embed_after

    def hand_over(self, wake: Callable[[], None]) -> None:
        """From now on the vectors are left for this host's thread; ``wake`` tells it one is ready
        (called from the embedding thread; it must not block)."""
        if self.embed_after is not None:
            self.embed_after.hand_over(wake)

    def write_ready(self) -> int:
        """Store the vectors left ready; how many."""
        return self.embed_after.write_ready() if self.embed_after is not None else 0

    def idle(self) -> bool:
        """Nothing waits to be served: the backend's work, when due; whether it did any."""
        return self.ports.idle()

    def hand_back(self) -> None:
        """The host stops serving: the embedding thread stores the vectors again (those left ready
        are stored now, on this thread)."""
        if self.embed_after is not None:
            self.embed_after.hand_back()
