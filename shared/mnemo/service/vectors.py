"""The service's use of the ``Embedder`` port: a memory's vector, made before its store write (so
the record carries it to every backend, and the AWS stream indexer never calls an embedder), and
a query's vector. An embedder that fails never fails a write: the record is stored without its
vector and marked for repair (cleanup embeds it).

With an embedder whose memories cost more than a write's budget (``embed_after_answer``: the local
transformer), a long-lived process embeds after the answer instead (:class:`EmbedAfter`): the
write stores the record without its vector, so its words are searchable at once, and one
background thread per process embeds the queued records in order and stores each vector at the
record's version (as cleanup does). A record that changed meanwhile keeps its own (newer) turn;
one whose process ended first is embedded by the next cleanup run (a record without a vector).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from mnemo import machine
from mnemo.models.records import Embedding, MemoryRecord
from mnemo.observability import logger
from mnemo.ports import Embedder, Ports


def embed_content(embedder: Embedder | None, content: str) -> Embedding | None:
    """The content's vector, or None when there is no embedder or it failed (logged)."""
    if embedder is None:
        return None
    try:
        (vector,) = embedder.embed([content])
        return Embedding.of(embedder.model, vector)
    except Exception:  # noqa: BLE001 - any failure of a pluggable embedder leaves the write standing
        logger.warning("embedder failed; the memory is stored without its vector and marked for repair")
        return None


#: the most query vectors :func:`embed_query` keeps (about 3 MB of 384-dimension vectors)
QUERY_CACHE_SIZE = 256

_query_cache: OrderedDict[tuple[int, str, str], tuple[Embedder, tuple[float, ...]]] = OrderedDict()
_query_cache_lock = threading.Lock()


def embed_query(embedder: Embedder, text: str) -> list[float]:
    """A query's vector: through ``embed_queries`` when the embedder treats queries differently from
    documents (e5's and bge's prefixes, Cohere's ``input_type``), else ``embed``. Raises what the
    embedder raises.

    The last QUERY_CACHE_SIZE queries' vectors are kept, per embedder object: an agent repeats a
    query (recall, then recall_context; a retry) and a local model spends milliseconds of CPU on
    each (MiniLM: bench/results/2026-12-03-callsplit-before.md), a remote one a request. A failure
    is never kept, so an embedder that comes back is asked again."""
    key = (id(embedder), embedder.model, text)
    with _query_cache_lock:
        held = _query_cache.get(key)
        if held is not None and held[0] is embedder:
            _query_cache.move_to_end(key)
            return list(held[1])
    embed = getattr(embedder, "embed_queries", None) or embedder.embed
    (vector,) = embed([text])
    kept = tuple(vector)
    with _query_cache_lock:
        _query_cache[key] = (embedder, kept)  # the embedder held: its id is not reused meanwhile
        _query_cache.move_to_end(key)
        while len(_query_cache) > QUERY_CACHE_SIZE:
            _query_cache.popitem(last=False)
    return list(kept)


class PendingVector:
    """A query's vector on its way (:func:`embed_query_aside`): :meth:`result` answers it, or raises
    what the embedder raised, as :func:`embed_query` would have."""

    __slots__ = ("_embedder", "_future", "_text")

    def __init__(self, embedder: Embedder, text: str, future: Future[list[float]] | None) -> None:
        self._embedder, self._text, self._future = embedder, text, future

    def result(self) -> list[float]:
        if self._future is None:
            return embed_query(self._embedder, self._text)
        return self._future.result()


_aside_lock = threading.Lock()
_aside: tuple[int, ThreadPoolExecutor] | None = None


def _submit(fn: Any, *args: Any) -> Future[Any]:
    """``fn(*args)`` on the process's query thread (made on first use; a forked process makes its own)."""
    global _aside
    with _aside_lock:
        if _aside is None or _aside[0] != os.getpid():
            _aside = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemo-query-vector"))
        pool = _aside[1]
    return pool.submit(fn, *args)


def embed_query_aside(embedder: Embedder, text: str) -> PendingVector:
    """The query's vector, started now on a thread of its own when the embedder says a query costs
    it milliseconds of CPU outside the interpreter's lock (``embed_queries_aside``: the local
    transformer, whose onnxruntime run releases it) and the machine has a core to spare
    (:func:`mnemo.machine.spare_core`), so that it is made while the caller does other work (recall's word
    search); else, or when the vector is kept already, made when asked for, as :func:`embed_query`
    makes it. Either way the same vector, from the same cache."""
    if not getattr(embedder, "embed_queries_aside", False):
        return PendingVector(embedder, text, None)
    with _query_cache_lock:
        held = _query_cache.get((id(embedder), embedder.model, text))
    if (held is not None and held[0] is embedder) or not machine.spare_core():
        return PendingVector(embedder, text, None)
    return PendingVector(embedder, text, _submit(embed_query, embedder, text))


def needs_embedding(embedder: Embedder | None, record: MemoryRecord) -> bool:
    """Whether the record lacks a vector of the current embedder (none yet, or another model's)."""
    return embedder is not None and (record.embedding is None or record.embedding.model != embedder.model)


def with_embedding(embedder: Embedder | None, record: MemoryRecord) -> MemoryRecord:
    """The record with a vector of the current embedder (as it was when it has one or none can be
    made; then ``needs_embedding`` stays true)."""
    if not needs_embedding(embedder, record):
        return record
    embedding = embed_content(embedder, record.content)
    return record if embedding is None else record.model_copy(update={"embedding": embedding})


class EmbedAfter:
    """Memories' vectors made after their write answered, by one daemon thread of this process
    (started on the first record, so a forked worker starts its own), and stored by it — or, handed
    over (:meth:`hand_over`), by the thread that serves the calls, between them.

    Why hand over: on SQLite the daemon writes through a connection of its own, and a connection
    that finds another connection's write when its next read begins drops its page cache and its
    whole memory map (SQLite's ``pagerBeginReadTransaction``): the next call (the agent's next
    question, or its next memory_add) paid a few ms for it at 100,000 memories. A host that serves
    calls one at a time on one thread (``mnemo mcp``: stdio; each of ``mnemo serve``'s handler
    instances) writes the vectors on that thread instead, while it waits for the next call, so its
    reads find only their own writes."""

    def __init__(self, ports: Ports, embedder: Embedder) -> None:
        self.ports = ports
        self.embedder = embedder
        self._queue: queue.Queue[MemoryRecord] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: vectors made and not written yet, while handed over (each still an unfinished task)
        self._ready: deque[MemoryRecord] = deque()
        #: while handed over: told (from the daemon) that a vector is ready for :meth:`write_ready`
        self._wake: Callable[[], None] | None = None

    def hand_over(self, wake: Callable[[], None]) -> None:
        """From now on, leave each vector made for the serving thread: queue it and call ``wake``
        (from the daemon thread; it must not block), and the host calls :meth:`write_ready`."""
        self._wake = wake

    def hand_back(self) -> None:
        """The daemon writes the vectors again; those left ready are written now, on this thread."""
        with self._lock:  # a vector the daemon leaves is left before this, or stored by the daemon
            self._wake = None
        self.write_ready()

    def write_ready(self) -> int:
        """Store the vectors made and left for this thread (handed over); how many."""
        written = 0
        while True:
            try:
                embedded = self._ready.popleft()
            except IndexError:
                return written
            try:
                self._store(embedded)
                written += 1
            except Exception:  # noqa: BLE001 - as on the daemon: the record keeps no vector, cleanup embeds it
                logger.warning("storing a vector made after the answer failed; cleanup embeds the memory")
            finally:
                self._queue.task_done()

    def submit(self, record: MemoryRecord) -> None:
        """Queue a stored record (after its write committed) for its vector."""
        self._queue.put(record)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="mnemo-embed-after", daemon=True)
                self._thread.start()

    def pending(self) -> int:
        """Records queued or being embedded."""
        return self._queue.unfinished_tasks

    def drain(self, timeout_s: float) -> bool:
        """Wait at most ``timeout_s`` for every queued record's vector to be stored (a process about
        to end); True if they were. Vectors left ready for the serving thread are stored on this one."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.write_ready()
            if not self._queue.unfinished_tasks:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def _run(self) -> None:
        while True:
            record = self._queue.get()
            left = False
            try:
                left = self.embed(record)
            except Exception:  # noqa: BLE001 - the thread outlives any one record; cleanup embeds it later
                logger.warning("embedding after the answer failed; cleanup embeds the memory")
            finally:
                if not left:
                    self._queue.task_done()

    def embed(self, record: MemoryRecord) -> bool:
        """Make the record's vector and store it, or (handed over) leave it for the serving thread:
        whether it was left (its task is then finished by :meth:`write_ready`)."""
        embedded = with_embedding(self.embedder, record)
        if embedded is record:
            if needs_embedding(self.embedder, record):
                self.ports.store.mark_for_repair(record)  # the embedder failed: cleanup embeds it
            return False
        with self._lock:  # (against hand_back: nothing is left once it has taken the last ones)
            wake = self._wake
            if wake is not None:
                self._ready.append(embedded)
        if wake is not None:
            try:
                wake()
            except Exception:  # noqa: BLE001 - left all the same: stored after the next message, or by drain
                logger.warning("waking the serving thread for a vector failed; it is stored after the next message")
            return True
        self._store(embedded)
        return False

    def _store(self, embedded: MemoryRecord) -> None:
        if not self.ports.store.set_embedding(embedded):  # version-checked: a changed record keeps its own
            return
        try:
            self.ports.index.upsert(embedded)  # the index holds the vector beside the terms (AWS)
        except Exception:  # noqa: BLE001 - as a write whose index write fails: marked, cleanup re-indexes
            self.ports.store.mark_for_repair(embedded)
