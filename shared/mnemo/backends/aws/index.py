"""The AWS ``SearchIndex``: one OpenSearch index behind an alias, DSL queries only.

Its parts, one job each: :mod:`.mapping` (the mapping, the document a record becomes, the index's
creation and migrations: ``IndexSetup``), :mod:`.query` (the DSL and the answers read back),
:mod:`.fresh` (read-your-writes: the merge with the store's recent changes, on a thread pool);
the cleanup job's walks, drops and purges are in :mod:`.maintenance`. This adapter writes and
searches:

* Writes use external versioning (``version = record.version``): a late or repeated write of an
  older version is refused by OpenSearch (409) and treated as done. A delete writes a tombstone at
  ``version + 1`` (``mapping.tombstone``), filtered out of every query; the cleanup job purges old
  tombstones.
* Only the stream indexer and the cleanup job write here. A search is merged with the project's
  changes the index may not show yet, read from the table beside the query (:mod:`.fresh`; wired
  by ``AwsBackend`` through :meth:`OpenSearchIndex.read_your_writes`): a change is searchable the
  moment its write returns, without any write waiting for a refresh.
* A vector search asks the ``knn`` query (Lucene HNSW, the tenant filter inside it) of an index
  of the ``hnsw`` layout, ``script_score`` (exact) of one of the ``exact`` layout. The layout
  behind the alias is found by asking: an index of the ``exact`` layout refuses ``knn`` (400,
  "not built for ANN search"); that search is answered by ``script_score`` and the next ones
  too, for ``knn_retry_s``, then ``knn`` is asked again — so a switch is picked up by then, with
  no request but searches (the read function's role grants ``_search`` only). While a migration moves the alias to a
  new index (:mod:`.reindex`), every write goes to the new index first, then through the alias.
* Connection errors, timeouts, refusals of the caller (401, 403), 429 and 5xx become
  :class:`~mnemo.errors.IndexUnavailable` (``backends.aws.errors.index_errors``), for every
  public method, through ``backends.errors.translate_errors``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConflictError, NotFoundError, RequestError

from mnemo.backends.aws import fresh
from mnemo.backends.aws.errors import index_errors
from mnemo.backends.aws.fresh import ReadYourWrites, RecentChanges
from mnemo.backends.aws.mapping import KNN_RETRY_S, LAYOUT_TTL_S, IndexSetup, Vectors, doc_id, document, tombstone
from mnemo.backends.aws.query import (
    knn_body,
    knn_hits,
    neighbours_of,
    neighbours_searches,
    search_body,
    search_page,
    similar_body,
    similar_hits,
)
from mnemo.backends.errors import translate_errors
from mnemo.errors import IndexUnavailable
from mnemo.models.records import MemoryRecord
from mnemo.ports import MAX_NEIGHBOURS, IndexHit, IndexQuery, MemoryFilter, Scope, VectorQuery


@translate_errors(index_errors("search", upsert="write", remove="write", ensure="setup", prepare="setup"))
class OpenSearchIndex:
    def __init__(
        self,
        client: OpenSearch,
        alias: str,
        *,
        refresh: str = "false",
        shards: int = 1,
        replicas: int = 0,
        refresh_interval: str = "1s",
        vectors: Vectors = "hnsw",
        layout_ttl_s: float = LAYOUT_TTL_S,
        knn_retry_s: float = KNN_RETRY_S,
    ) -> None:
        self.client = client
        self.alias = alias
        self.refresh = refresh
        self.setup = IndexSetup(
            client,
            alias,
            shards=shards,
            replicas=replicas,
            refresh_interval=refresh_interval,
            vectors=vectors,
            ttl_s=layout_ttl_s,
        )
        self._fresh: ReadYourWrites | None = None
        self.knn_retry_s = knn_retry_s
        #: when a ``knn`` query was last refused (monotonic seconds): exact searches until retry
        self._knn_refused_at: float | None = None

    def read_your_writes(self, changes: RecentChanges, *, window_s: float, first_page: int) -> None:
        """Merge every search with the changes of the last ``window_s`` seconds that ``changes``
        reports (0 turns the merge off: searches then show the index alone)."""
        self._fresh = ReadYourWrites(changes, timedelta(seconds=window_s), first_page) if window_s > 0 else None

    def ensure(self) -> None:
        """Create the index and its alias when missing (once per process; idempotent)."""
        self.setup.ensure()

    def prepare(self, wait_s: float) -> None:
        """Before traffic (``mnemo serve --backend aws``): create the index when missing, bring its
        mapping to this layout, and wait at most ``wait_s`` for its primary shards to start —
        :class:`~mnemo.errors.IndexUnavailable` when they have not (docs/aws.md, "The index before
        traffic")."""
        self.setup.ensure(wait_s)
        self.setup.upgrade()
        if not self.setup.wait_started(wait_s):
            cause = f"OpenSearch setup failed: the shards of {self.alias} did not start in {wait_s:g} s"
            raise IndexUnavailable(cause=cause)

    # -- writes -------------------------------------------------------------------------------

    def upsert(self, record: MemoryRecord) -> None:
        if record.embedding is not None:
            self.setup.ensure_vector_field(record.embedding.dim)
        self._write(record, document(record), record.version)

    def remove(self, record: MemoryRecord) -> None:
        self._write(record, tombstone(record), record.version + 1)

    def _write(self, record: MemoryRecord, body: dict[str, Any], version: int) -> None:
        self.setup.ensure()
        targets = self.setup.write_targets()
        for target in targets:
            # a migration's new index first, then the alias: if the alias is switched between the
            # two, the second write lands in the new index too (docs/scale.md, "Changing the
            # index's mapping")
            migrating = target != self.alias
            try:
                self._write_to(target, record, body, version, require_alias=migrating)
            except NotFoundError:
                if not migrating:
                    raise
                self.setup.forget()  # the migration's alias is gone: switched (or given up)

    def _write_to(
        self, target: str, record: MemoryRecord, body: dict[str, Any], version: int, *, require_alias: bool
    ) -> None:
        def write() -> None:
            self.client.index(
                index=target,
                id=doc_id(record.project_id, record.id),
                body=body,
                routing=record.project_id,
                version=version,
                # external_gte: the same version may be written again (the cleanup job re-indexes
                # a document of another analysis; a migration's back-fill and the stream may both
                # write it); an older one is refused (409)
                version_type="external_gte",
                refresh=self.refresh,
                # a migration's alias removed meanwhile must not be created as an index
                **({"params": {"require_alias": "true"}} if require_alias else {}),
            )

        try:
            try:
                write()
            except RequestError as exc:
                if exc.error != "strict_dynamic_mapping_exception":
                    raise
                self.setup.upgrade()  # an index of an older layout: it gets this layout's fields
                write()
        except ConflictError:
            return  # a newer version is indexed already: done

    # -- searches -----------------------------------------------------------------------------

    def search(self, query: IndexQuery) -> list[IndexHit]:
        """The index's hits, merged with the project's recent changes when :meth:`read_your_writes`
        is wired."""
        if not query.terms:
            return []
        if self._fresh is None:
            return self._search(query, None).hits
        return self._fresh.search(query, self._search, fresh.merge)

    def _search(self, asked: IndexQuery, since: datetime | None) -> fresh.IndexPage:
        try:
            out = self.client.search(index=self.alias, body=search_body(asked, since), routing=asked.scope.project_id)
        except NotFoundError:
            return fresh.IndexPage([], asked.limit)  # no index yet: nothing was ever written
        return search_page(asked, out)

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        """The nearest vectors, merged with the project's recent changes as :meth:`search` is
        (``fresh.merge_similar``: the items carry their vectors, so the merge scores exactly)."""
        if query.limit <= 0:
            return []
        if self._fresh is None:
            return self._similar(query)
        return self._fresh.search(query, self._similar, fresh.merge_similar)

    def _similar(self, asked: VectorQuery, since: datetime | None = None) -> list[IndexHit]:
        """(``since`` unused: a vector search lists no window; the argument keeps ``ReadYourWrites``'s shape.)

        ``knn`` unless a ``knn`` query was refused in the last ``knn_retry_s`` (an index of the
        ``exact`` layout, or none of this dimension yet): then ``script_score``, which serves
        either layout."""
        routing = asked.scope.project_id
        try:
            refused = self._knn_refused_at
            if refused is None or time.monotonic() - refused >= self.knn_retry_s:
                try:
                    return knn_hits(self.client.search(index=self.alias, body=knn_body(asked), routing=routing))
                except RequestError:
                    self._knn_refused_at = time.monotonic()
            # (a dimension never written has no field: the ``exists`` filter then matches nothing)
            out = self.client.search(index=self.alias, body=similar_body(asked), routing=routing)
        except NotFoundError:
            return []  # no index yet: nothing was ever written
        return similar_hits(out)

    def neighbours(
        self,
        scope: Scope,
        anchors: Sequence[MemoryRecord],
        flt: MemoryFilter,
        *,
        per_side: int = 1,
        same_session: bool = True,
    ) -> dict[str, list[MemoryRecord]]:
        """``MemoryStore.neighbours`` (``DynamoMemoryStore`` asks here): one ``_msearch`` for every
        anchor, two searches each, sorted by id."""
        per_side = max(0, min(per_side, MAX_NEIGHBOURS))
        out: dict[str, list[MemoryRecord]] = {a.id: [] for a in anchors}
        asked = [
            a for a in anchors if per_side and a.workspace_id == scope.workspace_id and a.project_id == scope.project_id
        ]
        if not asked:
            return out
        lines: list[dict[str, Any]] = []
        for anchor in asked:
            session = anchor.session if same_session else None
            lines += neighbours_searches(scope, anchor, flt, session=session, per_side=per_side)
        try:
            answers = self.client.msearch(index=self.alias, body=lines)["responses"]
        except NotFoundError:
            return out  # no index yet: nothing was ever written
        for n, anchor in enumerate(asked):
            found = neighbours_of(answers[2 * n]) + neighbours_of(answers[2 * n + 1])
            out[anchor.id] = sorted(found, key=lambda r: r.id)
        return out
