"""The service's use of the ``Embedder`` port: a memory's vector, made before its store write (so
the record carries it to every backend, and the AWS stream indexer never calls an embedder), and
a query's vector. An embedder that fails never fails a write: the record is stored without its
vector and marked for repair (cleanup embeds it)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from mnemo.models.records import Embedding, MemoryRecord
from mnemo.observability import logger
from mnemo.ports import Embedder


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
