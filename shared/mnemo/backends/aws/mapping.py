"""The OpenSearch index's shape: its mapping, the document a record is indexed as, and the
set-up that creates the index or brings an older one to the current layout.

* Text is analysed in Python (:mod:`mnemo.text`, the same analysis the SQLite backend indexes) and
  indexed with the core ``whitespace`` analyzer: the terms as written into ``content_terms`` /
  ``tags_terms`` / ``path_terms`` (prefixes match these), their stems into ``content_stems`` /
  ``tags_stems`` / ``path_stems`` (terms match these). No plugin or script is needed to index.
* Each document records the analysis it was built with (``analysis``); the cleanup job's store
  walk re-indexes documents of another analysis. A mapping of an older layout (``_meta.layout``)
  gets the new fields added in place when the index is first used (mappings only grow), so an
  existing deployment keeps its index and alias: until the walk has re-indexed a document, its
  terms still match as written (each term clause also matches the surface field).
* Every document is routed by its project id; its id carries the project too (:func:`doc_id`).
* A delete writes a tombstone (:func:`tombstone`, ``deleted: true``) at ``version + 1`` instead of
  deleting the document, because OpenSearch forgets a real delete's version after
  ``index.gc_deletes`` (60 s) and a late older write could then resurrect it.
* The full record is kept in ``_source`` (``record``, not indexed), so a hit needs no DynamoDB read.
* Vectors have one of two layouts, fixed at an index's creation (``index.knn`` cannot be changed
  on a live index): ``exact`` (a ``knn_vector`` without a method, scored by ``script_score``) or
  ``hnsw`` (an ``index.knn`` index whose vectors carry a Lucene HNSW graph, searched by the
  ``knn`` query). A new index gets ``IndexSetup.vectors``; the searches find the layout behind
  the alias by asking ``knn`` (``index.OpenSearchIndex.similar``); an index moves from one to the other
  by :mod:`.reindex` (a new index behind the alias, zero downtime), during which the writes also
  go to the migration's alias (:meth:`IndexSetup.write_targets`).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Literal

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError, TransportError

from mnemo import text
from mnemo.backends.aws.errors import index_errors
from mnemo.backends.errors import translate_errors
from mnemo.models.common import format_ts, utc_now
from mnemo.models.records import MemoryRecord

#: the name of the index a deployment creates (the IAM policies grant creating this one only); its
#: mapping's layout is ``LAYOUT``, and an index of an older layout is upgraded in place
INDEX_VERSION = "v1"
#: the mapping's layout (``_meta.layout``): 1 had no stems and no ``analysis``; 2 adds them; 3 adds
#: the vectors (``embedding_model`` and ``embedding_<dim>``); 4 adds ``session`` (no document of an
#: older layout has one, so none needs re-indexing for it); 5 adds ``superseded_by`` (likewise: a
#: memory is first marked after its index has the field)
LAYOUT = 5
#: the dimension of the default embedder (mnemo.embedding.static), mapped up front; another
#: embedder's dimension gets its own field on first write (``IndexSetup.ensure_vector_field``)
DEFAULT_DIM = 256


#: a vector layout: scored exactly (``script_score``) or searched through a Lucene HNSW graph
Vectors = Literal["exact", "hnsw"]
#: the HNSW graph's parameters (bench/vectors.py ``--backends node`` measured them; docs/scale.md):
#: links per node and the candidate list of its construction
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 256
#: the ``knn`` query's ``k`` at least: Lucene's candidate list (its ef_search) is ``k``, so a search
#: asks for this many neighbours (or its ``limit``, when larger) and keeps its ``size``. Measured
#: (docs/scale.md, "Vectors"): top-10 overlap with exact search 0.927 at k 100, 0.982 at 200, 1.000
#: at 400 (every slot; 1.000 at recall's floor for all three)
KNN_K = 400
#: the alias a migration's new index is reachable by while it is filled (:mod:`.reindex`); the
#: writers write there too while it exists
NEXT_SUFFIX = "-next"
#: seconds a writer trusts what it read of a running migration: :mod:`.reindex` waits longer than
#: this before it back-fills, so every writer writes to both indexes by then
LAYOUT_TTL_S = 10.0
#: seconds a searcher keeps to ``script_score`` after its ``knn`` query was refused (an index of
#: the ``exact`` layout behind the alias): a switch to ``hnsw`` is picked up this much later
KNN_RETRY_S = 60.0


def vector_mapping(dim: int, vectors: Vectors = "exact") -> dict[str, Any]:
    """A ``knn_vector`` field. ``exact``: without an ANN method, scored exactly, by cosine, over
    the candidates the filters leave (docs/aws.md, "Vectors") — no ``index.knn`` and no method
    means no native engine is ever loaded (faiss, the k-NN plugin's default, is not on every
    node). ``hnsw``: a Lucene HNSW graph in cosine space (the Lucene engine is Java, in the k-NN
    plugin itself; the index needs ``index.knn``)."""
    field: dict[str, Any] = {"type": "knn_vector", "dimension": dim}
    if vectors == "hnsw":
        field["method"] = {
            "name": "hnsw",
            "engine": "lucene",
            "space_type": "cosinesimil",
            "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
        }
    return field


def vector_field(dim: int) -> str:
    return f"embedding_{dim}"


_TERMS = {"type": "text", "analyzer": "whitespace", "norms": True}
#: the mapping of the ``exact`` layout (:func:`mappings` gives either)
MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "_meta": {"layout": LAYOUT},
    "properties": {
        "id": {"type": "keyword"},
        "workspace_id": {"type": "keyword"},
        "project_id": {"type": "keyword"},
        "content_terms": _TERMS,
        "tags_terms": _TERMS,
        "path_terms": _TERMS,
        "content_stems": _TERMS,
        "tags_stems": _TERMS,
        "path_stems": _TERMS,
        "analysis": {"type": "keyword"},
        "kind_fold": {"type": "keyword"},
        "path_fold": {"type": "keyword"},
        "tags": {"type": "keyword"},
        "team_id": {"type": "keyword"},
        "session": {"type": "keyword"},
        "superseded_by": {"type": "keyword"},
        "expires_at": {"type": "date", "format": "strict_date_optional_time"},
        "updated_at": {"type": "date", "format": "strict_date_optional_time"},
        "working": {"type": "byte"},
        "deleted": {"type": "boolean"},
        # when a tombstone was written: the cleanup job purges it after its retention
        "deleted_at": {"type": "date", "format": "strict_date_optional_time"},
        "record": {"type": "object", "enabled": False},
        "embedding_model": {"type": "keyword"},
        vector_field(DEFAULT_DIM): vector_mapping(DEFAULT_DIM),
    },
}


def mappings(vectors: Vectors) -> dict[str, Any]:
    """The mapping of an index of this vector layout (``_meta.vectors`` records it)."""
    properties = {**MAPPINGS["properties"], vector_field(DEFAULT_DIM): vector_mapping(DEFAULT_DIM, vectors)}
    return {**MAPPINGS, "_meta": {**MAPPINGS["_meta"], "vectors": vectors}, "properties": properties}


def index_body(vectors: Vectors, *, shards: int, replicas: int, refresh_interval: str) -> dict[str, Any]:
    """The settings and mapping of a new index of this vector layout."""
    settings: dict[str, Any] = {
        "number_of_shards": shards,
        "number_of_replicas": replicas,
        # explicit, so an idle shard keeps refreshing (no search-idle pause)
        "refresh_interval": refresh_interval,
    }
    if vectors == "hnsw":
        settings["knn"] = True
    return {"settings": settings, "mappings": mappings(vectors)}


def layout_of(mapping: dict[str, Any]) -> Vectors:
    """The vector layout of an index, from its mapping (``GET <index>/_mapping``'s ``mappings``):
    ``hnsw`` when its vector fields carry a method (or ``_meta.vectors`` says so)."""
    if (mapping.get("_meta") or {}).get("vectors") == "hnsw":
        return "hnsw"
    fields = (mapping.get("properties") or {}).values()
    return "hnsw" if any(f.get("type") == "knn_vector" and "method" in f for f in fields) else "exact"


#: the fields that hold a document's terms as written (``fresh`` matches a change against them)
TERM_FIELDS = ("content_terms", "tags_terms", "path_terms")


def document(record: MemoryRecord) -> dict[str, Any]:
    kind_fold = (record.kind or "").casefold()
    doc: dict[str, Any] = {
        "id": record.id,
        "workspace_id": record.workspace_id,
        "project_id": record.project_id,
        "content_terms": text.index_text(record.content),
        "tags_terms": text.index_text(" ".join(record.tags)),
        "path_terms": text.index_text(record.path or ""),
        "content_stems": text.index_stems(record.content),
        "tags_stems": text.index_stems(" ".join(record.tags)),
        "path_stems": text.index_stems(record.path or ""),
        "analysis": text.ANALYSIS,
        "kind_fold": kind_fold,
        "path_fold": (record.path or "").casefold(),
        "tags": list(record.tags),
        "updated_at": format_ts(record.updated_at),
        "working": 1 if kind_fold == "working" else 0,
        "deleted": False,
        "record": record.model_dump(mode="json"),
    }
    if record.team_id is not None:
        doc["team_id"] = record.team_id
    if record.session is not None:
        doc["session"] = record.session
    if record.superseded_by is not None:
        doc["superseded_by"] = record.superseded_by
    if record.expires_at is not None:
        doc["expires_at"] = format_ts(record.expires_at)
    if record.embedding is not None:
        doc["embedding_model"] = record.embedding.model
        doc[vector_field(record.embedding.dim)] = list(record.embedding.vector)
    return doc


def doc_id(project_id: str, memory_id: str) -> str:
    """Memory ids are unique inside a project (a copied project keeps them), so the document id
    carries the project too."""
    return f"{project_id}.{memory_id}"


def tombstone(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "workspace_id": record.workspace_id,
        "project_id": record.project_id,
        "updated_at": format_ts(record.updated_at),
        "deleted": True,
        "deleted_at": format_ts(utc_now()),
    }


@translate_errors(index_errors("setup", ensure_vector_field="mapping", upgrade="write", write_targets="setup"))
class IndexSetup:
    """Where the index is (``client``, ``alias``), and its creation and migrations: once per
    process each, shared by the index adapter and the cleanup job's. ``vectors`` is the vector
    layout of an index it creates; whether a migration is running is read at most every ``ttl_s`` seconds."""

    def __init__(
        self,
        client: OpenSearch,
        alias: str,
        *,
        shards: int = 1,
        replicas: int = 0,
        refresh_interval: str = "1s",
        vectors: Vectors = "hnsw",
        ttl_s: float = LAYOUT_TTL_S,
    ) -> None:
        self.client = client
        self.alias = alias
        self.next_alias = alias + NEXT_SUFFIX
        self.shards = shards
        self.replicas = replicas
        self.refresh_interval = refresh_interval
        self.vectors: Vectors = vectors
        self.ttl_s = ttl_s
        self._ready = False
        self._lock = threading.Lock()
        #: vector fields known to be in the mapping, by write target
        self._vector_fields: dict[str, set[str]] = {alias: {vector_field(DEFAULT_DIM)}}
        #: (read at, value) of the write targets
        self._targets: tuple[float, tuple[str, ...]] | None = None

    def ensure(self, timeout_s: float | None = None) -> None:
        """Create the index and its alias when missing (once per process; idempotent); a creation
        returns once the primary shards have started, so ``timeout_s`` may exceed the client's."""
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            # HEAD <alias>/_alias/<alias>, not /_alias/<alias>: a path under the alias, which is
            # all the functions' IAM policies grant (template.yaml, docs/aws.md)
            if not self.client.indices.exists_alias(index=self.alias, name=self.alias):
                self._create(timeout_s)
            self._ready = True

    def _create(self, timeout_s: float | None) -> None:
        index = f"{self.alias}-{INDEX_VERSION}"
        body = index_body(
            self.vectors, shards=self.shards, replicas=self.replicas, refresh_interval=self.refresh_interval
        )
        body["aliases"] = {self.alias: {"is_write_index": True}}
        try:
            wait = {} if timeout_s is None else {"request_timeout": timeout_s}
            self.client.indices.create(index=index, body=body, **wait)
        except TransportError as exc:
            if exc.error != "resource_already_exists_exception":
                raise
            self.client.indices.put_alias(index=index, name=self.alias)

    def wait_started(self, timeout_s: float) -> bool:
        """Wait at most ``timeout_s`` for the primary shards of the index behind the alias to
        start (cluster health ``yellow`` for that index): a search of a shard not started yet fails
        (``search_phase_execution_exception``). True once they have; False at the deadline (the
        health API then answers 408, not an error here)."""
        health = self.client.cluster.health(
            index=self.alias,
            wait_for_status="yellow",
            timeout=f"{max(1, math.ceil(timeout_s))}s",
            ignore=408,
            request_timeout=timeout_s + 5,
        )
        return not health.get("timed_out", True)

    def upgrade(self) -> None:
        """Bring the mapping of an index of an older layout to ``LAYOUT`` (``GET`` then ``PUT
        <alias>/_mapping``, a path under the alias the write policy grants): add the fields it
        lacks — only those, because the k-NN plugin refuses a ``knn_vector`` put again as it is —
        an additive change OpenSearch allows on a live index, so instances racing to do it are
        harmless. Done when a document of this layout is refused by the strict mapping, so an
        index already at ``LAYOUT`` costs no request. Documents are re-analysed by the cleanup job."""
        for target in self.write_targets():
            # (put through the alias, the path the policy grants: one index is behind each)
            for body in self._mappings(target).values():
                held = (body.get("mappings") or {}).get("properties") or {}
                vectors = layout_of(body.get("mappings") or {})
                wanted = mappings(vectors)
                missing = {k: v for k, v in wanted["properties"].items() if k not in held}
                meta = {**((body.get("mappings") or {}).get("_meta") or {}), **wanted["_meta"]}
                self.client.indices.put_mapping(index=target, body={"_meta": meta, "properties": missing})

    def ensure_vector_field(self, dim: int) -> None:
        """Map ``embedding_<dim>`` before the first document of an embedder of that dimension (an
        additive mapping change; once per process and write target: read the mapping, put the
        field — in the index's own vector layout — only when an index lacks it: the k-NN plugin
        refuses a ``knn_vector`` put again as it is)."""
        field = vector_field(dim)
        targets = self.write_targets()
        if all(field in self._vector_fields.get(t, ()) for t in targets):
            return
        self.ensure()
        for target in targets:
            for body in self._mappings(target).values():
                mapping = body.get("mappings") or {}
                if field not in (mapping.get("properties") or {}):
                    put = {"properties": {field: vector_mapping(dim, layout_of(mapping))}}
                    self.client.indices.put_mapping(index=target, body=put)
            self._vector_fields.setdefault(target, set()).add(field)

    def _mappings(self, target: str) -> dict[str, Any]:
        try:
            out: dict[str, Any] = self.client.indices.get_mapping(index=target)
        except NotFoundError:
            return {}  # a migration's alias removed since it was read: its index is the alias's now
        return out

    def write_targets(self) -> tuple[str, ...]:
        """Where a write goes: the alias, and first the migration's alias while one exists
        (``<alias>-next``, :mod:`.reindex`), read at most every ``ttl_s`` seconds."""
        now = time.monotonic()
        if self._targets is not None and now - self._targets[0] < self.ttl_s:
            return self._targets[1]
        migrating = self.client.indices.exists_alias(index=self.next_alias, name=self.next_alias)
        targets = (self.next_alias, self.alias) if migrating else (self.alias,)
        self._targets = (now, targets)
        return targets

    def forget(self) -> None:
        """Read the write targets again on next use (after a switch)."""
        self._targets = None
