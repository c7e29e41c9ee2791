"""The search index: one OpenSearch index behind an alias, DSL queries only.

* Text is analysed in Python (:mod:`mnemo.text`, the same analysis the SQLite backend indexes) and
  indexed with the core ``whitespace`` analyzer: the terms as written into ``content_terms`` /
  ``tags_terms`` / ``path_terms`` (prefixes match these), their stems into ``content_stems`` /
  ``tags_stems`` / ``path_stems`` (terms match these). Query terms become ``term`` and ``prefix``
  queries, each term's clause named (``t0``, ``t1``, …) so a hit says which terms it matched.
  Nothing user-typed ever reaches a query parser (no ``query_string``), and no plugin or script is
  needed.
* Each document records the analysis it was built with (``analysis``); the cleanup job's store
  walk re-indexes documents of another analysis. A mapping of an older layout (``_meta.layout``)
  gets the new fields added in place when the index is first used (mappings only grow), so an
  existing deployment keeps its index and alias: until the walk has re-indexed a document, its
  terms still match as written (each term clause also matches the surface field).
* Every document is routed by its project id, and every query filters on workspace *and* project.
* Writes use external versioning (``version = record.version``): a late or repeated write of an
  older version is refused by OpenSearch (409) and treated as done. A delete writes a tombstone at
  ``version + 1`` (``deleted: true``, filtered out of every query) instead of deleting the
  document, because OpenSearch forgets a real delete's version after ``index.gc_deletes`` (60 s)
  and a late older write could then resurrect it. The cleanup job purges old tombstones.
* The full record is kept in ``_source`` (``record``, not indexed), so a hit needs no DynamoDB
  read.
* Only the stream indexer and the cleanup job write here. A search is merged with the project's
  changes the index may not show yet, read from the table beside the query (:mod:`.fresh`;
  wired by ``AwsBackend`` through :meth:`OpenSearchIndex.read_your_writes`): a change is
  searchable the moment its write returns, without any write waiting for a refresh.
* Connection errors, timeouts, refusals of the caller (401, 403), 429 and 5xx become
  :class:`~mnemo.errors.IndexUnavailable` (``backends.aws.errors.index_outage``).
* For the cleanup job (``AwsMaintenance``) it also walks its documents (tombstones included), reads
  the entries of a page of records, and drops or purges entries, each write version-checked.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConflictError, NotFoundError, RequestError, TransportError

from mnemo import text
from mnemo.backends.aws import fresh
from mnemo.backends.aws.errors import index_cause, index_outage
from mnemo.backends.aws.items import RecentChange
from mnemo.errors import IndexUnavailable
from mnemo.like import ANY_ONE, ANY_RUN, is_match_all, like_tokens
from mnemo.models.common import format_ts, utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexEntry, IndexHit, IndexQuery, MemoryFilter, QueryTerm, Scope, VectorQuery

#: field weights, as the SQLite backend's
FIELD_BOOSTS = {"content": 1.0, "tags": 0.6, "path": 0.4}
#: the name of the index a deployment creates (the IAM policies grant creating this one only); its
#: mapping's layout is ``LAYOUT``, and an index of an older layout is upgraded in place
INDEX_VERSION = "v1"
#: the mapping's layout (``_meta.layout``): 1 had no stems and no ``analysis``; 2 adds them; 3 adds
#: the vectors (``embedding_model`` and ``embedding_<dim>``)
LAYOUT = 3
#: the dimension of the default embedder (mnemo.embedding.static), mapped up front; another
#: embedder's dimension gets its own field on first write (``OpenSearchIndex.vector_field``)
DEFAULT_DIM = 256


def vector_mapping(dim: int) -> dict[str, Any]:
    """A ``knn_vector`` without an ANN method: scored exactly, by cosine, over the candidates the
    filters leave (docs/aws.md, "Vectors"). No ``index.knn`` and no method means no native engine
    is ever loaded (faiss, the k-NN plugin's default, is not on every node)."""
    return {"type": "knn_vector", "dimension": dim}


def vector_field(dim: int) -> str:
    return f"embedding_{dim}"


_TERMS = {"type": "text", "analyzer": "whitespace", "norms": True}
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


def like_to_wildcard(pattern: str) -> str:
    """An SQL LIKE pattern (``mnemo.like``'s parse of it) as an OpenSearch wildcard pattern. The
    pattern's bounds (``mnemo.like.like_problem``) keep the automaton OpenSearch builds from it
    within the work OpenSearch allows."""
    out: list[str] = []
    for token in like_tokens(pattern):
        if token.kind == ANY_RUN:
            out.append("*")
        elif token.kind == ANY_ONE:
            out.append("?")
        else:
            out.append("\\" + token.char if token.char in "*?\\" else token.char)
    return "".join(out)


def filter_clauses(query: IndexQuery | VectorQuery) -> list[dict[str, Any]]:
    flt: MemoryFilter = query.filter
    clauses: list[dict[str, Any]] = [
        {"term": {"workspace_id": query.scope.workspace_id}},
        {"term": {"project_id": query.scope.project_id}},
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": {"exists": {"field": "expires_at"}}}},
                    {"range": {"expires_at": {"gt": format_ts(flt.now)}}},
                ],
                "minimum_should_match": 1,
            }
        },
    ]
    if flt.kind is not None:
        clauses.append({"term": {"kind_fold": flt.kind.casefold()}})
    window: dict[str, str] = {}
    if flt.updated_after is not None:
        window["gte"] = format_ts(flt.updated_after)
    if flt.updated_before is not None:
        window["lt"] = format_ts(flt.updated_before)
    if window:
        clauses.append({"range": {"updated_at": window}})
    for field, pattern in (("kind_fold", flt.kind_like), ("path_fold", flt.path_like)):
        if pattern is not None and not is_match_all(pattern):
            clauses.append({"wildcard": {field: {"value": like_to_wildcard(pattern.casefold())}}})
    clauses.extend({"term": {"tags": tag}} for tag in flt.tags_all)
    if flt.visible_teams is not None or not flt.include_unteamed:
        team: list[dict[str, Any]] = []
        if flt.include_unteamed:
            team.append({"bool": {"must_not": {"exists": {"field": "team_id"}}}})
        if flt.visible_teams:
            team.append({"terms": {"team_id": sorted(flt.visible_teams)}})
        clauses.append({"bool": {"should": team, "minimum_should_match": 1}} if team else {"match_none": {}})
    return clauses


#: clauses a query may expand to in total (OpenSearch's indices.query.bool.max_clause_count is 1024)
CLAUSE_BUDGET = 600


def term_clause(term: QueryTerm, expansions: int, name: str) -> dict[str, Any]:
    """One query term, matching in any of the three fields, content weighted highest, named
    ``name`` (a hit's ``matched_queries`` say which terms it matched).

    A term matches a word of the same stem: a BM25-scored ``term`` query on the stems field. It
    also matches its spelling on the surface field, with boost 0 (it adds nothing): a document
    indexed before stems existed still matches as written until the cleanup job re-indexes it.
    A prefix term adds two clauses per field: a constant-score ``prefix`` that decides the match
    (boost 0), and the same prefix rewritten into BM25-scored ``term`` queries over its first
    ``expansions`` words, so term frequency and length count (a plain ``prefix`` query scores every
    match the same).
    """
    should: list[dict[str, Any]] = []
    for field, boost in FIELD_BOOSTS.items():
        should.append({"term": {f"{field}_stems": {"value": term.stem, "boost": boost}}})
        should.append({"term": {f"{field}_terms": {"value": term.text, "boost": 0.0}}})
        if term.prefix:
            terms = f"{field}_terms"
            should.append({"prefix": {terms: {"value": term.text, "boost": 0.0, "rewrite": "constant_score"}}})
            should.append(
                {"prefix": {terms: {"value": term.text, "boost": boost, "rewrite": f"top_terms_{expansions}"}}}
            )
    return {"bool": {"should": should, "minimum_should_match": 1, "_name": name}}


def search_body(query: IndexQuery, since: datetime | None = None) -> dict[str, Any]:
    """The query's DSL; with ``since``, also the ``fresh`` aggregation (:mod:`.fresh`)."""
    prefixes = sum(1 for t in query.terms if t.prefix)
    expansions = max(1, min(32, CLAUSE_BUDGET // max(1, prefixes * len(FIELD_BOOSTS))))
    clauses = [term_clause(t, expansions, f"t{i}") for i, t in enumerate(query.terms)]
    boolean: dict[str, Any] = {"filter": filter_clauses(query), "must_not": [{"term": {"deleted": True}}]}
    if query.mode == "all":
        boolean["must"] = clauses
    else:
        boolean["should"] = clauses
        boolean["minimum_should_match"] = 1
    sort: list[Any] = [{"working": "desc"}] if query.prefer_working else []
    sort += ["_score", {"updated_at": "desc"}, {"id": "desc"}]
    body: dict[str, Any] = {
        "size": query.limit,
        "query": {"bool": boolean},
        "sort": sort,
        "track_scores": True,
        "_source": ["record"],
    }
    if since is not None:
        body["aggs"] = fresh.fresh_aggregation(since)
    return body


_Query = TypeVar("_Query", IndexQuery, VectorQuery)
_Page = TypeVar("_Page", fresh.IndexPage, list[IndexHit])


class RecentChanges(Protocol):
    """Where a search finds the changes the index may not show yet (``DynamoMemoryStore``)."""

    def recent_changes(
        self, scope: Scope, since: datetime, first_page: int, most: int
    ) -> tuple[list[RecentChange], bool]: ...


#: the most recent changes one search merges (a burst beyond this within the window is merged in part)
MAX_RECENT_CHANGES = 1000


def similar_body(query: VectorQuery) -> dict[str, Any]:
    """The vector search: the filtered candidates of the model, scored by cosine (the k-NN
    plugin's painless ``cosineSimilarity``; + 1 because a score may not be negative)."""
    field = vector_field(len(query.vector))
    candidates = {
        "bool": {
            "filter": [
                *filter_clauses(query),
                {"term": {"embedding_model": query.model}},
                {"exists": {"field": field}},
            ],
            "must_not": [{"term": {"deleted": True}}],
        }
    }
    script = {
        "source": "cosineSimilarity(params.query_value, doc[params.field]) + 1.0",
        "params": {"field": field, "query_value": [float(x) for x in query.vector]},
    }
    return {
        "size": query.limit,
        "min_score": 1.0 + query.min_score,
        "query": {"script_score": {"query": candidates, "script": script}},
        "sort": ["_score", {"updated_at": "desc"}, {"id": "desc"}],
        "track_scores": True,
        "_source": ["record"],
    }


_ENTRY_FIELDS = ["id", "workspace_id", "project_id", "deleted", "deleted_at", "updated_at", "analysis"]


@contextmanager
def _index_call() -> Iterator[None]:
    try:
        yield
    except TransportError as exc:
        if index_outage(exc):
            raise IndexUnavailable(cause=f"OpenSearch maintenance failed: {index_cause(exc)}") from exc
        raise


def _parse_ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _entry(hit: dict[str, Any]) -> IndexEntry:
    source = hit.get("_source") or {}
    deleted = bool(source.get("deleted"))
    workspace_id, project_id, memory_id = source.get("workspace_id"), source.get("project_id"), source.get("id")
    return IndexEntry(
        ref=hit["_id"],
        scope=Scope(workspace_id, project_id) if workspace_id and project_id else None,
        memory_id=memory_id,
        version=int(hit["_version"]) if "_version" in hit else None,
        deleted=deleted,
        # tombstones written before ``deleted_at`` existed age from their record's last update
        deleted_at=_parse_ts(source.get("deleted_at") or source.get("updated_at")) if deleted else None,
        token=f"{hit['_seq_no']}:{hit['_primary_term']}" if "_seq_no" in hit else "",
        # a live document of layout 1 recorded no analysis: "" (another analysis than any)
        analysis=None if deleted else str(source.get("analysis") or ""),
    )


def _matched(query: IndexQuery, hit: dict[str, Any]) -> tuple[str, ...]:
    names = set(hit.get("matched_queries") or ())
    return tuple(term.text for i, term in enumerate(query.terms) if f"t{i}" in names)


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
    ) -> None:
        self.client = client
        self.alias = alias
        self.refresh = refresh
        self.shards = shards
        self.replicas = replicas
        self.refresh_interval = refresh_interval
        self._ready = False
        self._lock = threading.Lock()
        self._changes: RecentChanges | None = None
        self._window = timedelta(0)
        self._first_page = 0

    def read_your_writes(self, changes: RecentChanges, *, window_s: float, first_page: int) -> None:
        """Merge every search with the changes of the last ``window_s`` seconds that ``changes``
        reports (0 turns the merge off: searches then show the index alone)."""
        self._changes = changes if window_s > 0 else None
        self._window = timedelta(seconds=window_s)
        self._first_page = first_page
        #: vector fields known to be in the mapping
        self._vector_fields = {vector_field(DEFAULT_DIM)}

    # -- setup --------------------------------------------------------------------------------

    def ensure(self) -> None:
        """Create the index and its alias when missing (once per process; idempotent)."""
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            try:
                # HEAD <alias>/_alias/<alias>, not /_alias/<alias>: a path under the alias, which is
                # all the functions' IAM policies grant (template.yaml, docs/aws.md)
                if not self.client.indices.exists_alias(index=self.alias, name=self.alias):
                    self._create()
            except TransportError as exc:
                if index_outage(exc):
                    raise IndexUnavailable(cause=f"OpenSearch setup failed: {index_cause(exc)}") from exc
                raise
            self._ready = True

    def _create(self) -> None:
        index = f"{self.alias}-{INDEX_VERSION}"
        body = {
            "settings": {
                "number_of_shards": self.shards,
                "number_of_replicas": self.replicas,
                # explicit, so an idle shard keeps refreshing (no search-idle pause)
                "refresh_interval": self.refresh_interval,
            },
            "mappings": MAPPINGS,
            "aliases": {self.alias: {"is_write_index": True}},
        }
        try:
            self.client.indices.create(index=index, body=body)
        except TransportError as exc:
            if exc.error != "resource_already_exists_exception":
                raise
            self.client.indices.put_alias(index=index, name=self.alias)

    def _upgrade(self) -> None:
        """Bring the mapping of an index of an older layout to ``LAYOUT`` (``GET`` then ``PUT
        <alias>/_mapping``, a path under the alias the write policy grants): add the fields it
        lacks — only those, because the k-NN plugin refuses a ``knn_vector`` put again as it is —
        an additive change OpenSearch allows on a live index, so instances racing to do it are
        harmless. Done when a document of this layout is refused by the strict mapping, so an
        index already at ``LAYOUT`` costs no request. Documents are re-analysed by the cleanup job."""
        mappings = self.client.indices.get_mapping(index=self.alias)
        for index, body in mappings.items():
            held = set((body.get("mappings") or {}).get("properties") or {})
            missing = {k: v for k, v in MAPPINGS["properties"].items() if k not in held}
            self.client.indices.put_mapping(index=index, body={"_meta": MAPPINGS["_meta"], "properties": missing})

    # -- the port -----------------------------------------------------------------------------

    def upsert(self, record: MemoryRecord) -> None:
        if record.embedding is not None:
            self._ensure_vector_field(record.embedding.dim)
        self._write(record, document(record), record.version)

    def _ensure_vector_field(self, dim: int) -> None:
        """Map ``embedding_<dim>`` before the first document of an embedder of that dimension (an
        additive mapping change; once per process: read the mapping, put the field only when no
        index behind the alias has it — the k-NN plugin refuses a ``knn_vector`` put again as it is)."""
        field = vector_field(dim)
        if field in self._vector_fields:
            return
        try:
            self.ensure()
            for index, body in self.client.indices.get_mapping(index=self.alias).items():
                if field not in ((body.get("mappings") or {}).get("properties") or {}):
                    self.client.indices.put_mapping(index=index, body={"properties": {field: vector_mapping(dim)}})
        except TransportError as exc:
            if index_outage(exc):
                raise IndexUnavailable(cause=f"OpenSearch mapping failed: {index_cause(exc)}") from exc
            raise
        self._vector_fields.add(field)

    def remove(self, record: MemoryRecord) -> None:
        self._write(record, tombstone(record), record.version + 1)

    def _write(self, record: MemoryRecord, body: dict[str, Any], version: int) -> None:
        def write() -> None:
            self.client.index(
                index=self.alias,
                id=doc_id(record.project_id, record.id),
                body=body,
                routing=record.project_id,
                version=version,
                # external_gte: the same version may be written again (the cleanup job re-indexes
                # a document of another analysis); an older one is refused (409)
                version_type="external_gte",
                refresh=self.refresh,
            )

        try:
            self.ensure()
            try:
                write()
            except RequestError as exc:
                if exc.error != "strict_dynamic_mapping_exception":
                    raise
                self._upgrade()  # an index of an older layout: it gets this layout's fields
                write()
        except ConflictError:
            return  # a newer version is indexed already: done
        except TransportError as exc:
            if index_outage(exc):
                raise IndexUnavailable(cause=f"OpenSearch write failed: {index_cause(exc)}") from exc
            raise

    def search(self, query: IndexQuery) -> list[IndexHit]:
        """The index's hits, merged with the project's recent changes when :meth:`read_your_writes`
        is wired: the OpenSearch query runs on a pool thread while this one reads the changes
        (one consistent ``Query``; this thread keeps the trace context its DynamoDB call needs)."""
        if not query.terms:
            return []
        if self._changes is None:
            return self._query(query, None).hits
        return self._with_changes(query, self._query, fresh.merge)

    def _with_changes(
        self,
        query: _Query,
        ask: Callable[[_Query, datetime], _Page],
        merge: Callable[[_Query, _Page, Sequence[RecentChange]], fresh.Merged],
    ) -> list[IndexHit]:
        """``ask`` the index on a pool thread while this one reads the project's recent changes
        (one consistent ``Query``; this thread keeps the trace context its DynamoDB call needs),
        then ``merge`` them; when the changes removed hits from a full page, ask for enough to fill it."""
        assert self._changes is not None
        since = utc_now() - self._window
        pending = fresh.pool().submit(ask, query, since)
        try:
            changes, _ = self._changes.recent_changes(query.scope, since, self._first_page, MAX_RECENT_CHANGES)
        except BaseException:
            pending.cancel()
            raise
        merged = merge(query, pending.result(), changes)
        if merged.short:
            wider = replace(query, limit=query.limit + len(changes))
            merged = merge(query, ask(wider, since), changes)
        return merged.hits

    def _query(self, query: IndexQuery, since: datetime | None) -> fresh.IndexPage:
        try:
            out = self.client.search(index=self.alias, body=search_body(query, since), routing=query.scope.project_id)
        except NotFoundError:
            return fresh.IndexPage([], query.limit)  # no index yet: nothing was ever written
        except TransportError as exc:
            if index_outage(exc):
                raise IndexUnavailable(cause=f"OpenSearch search failed: {index_cause(exc)}") from exc
            raise
        hits = [
            IndexHit(
                MemoryRecord.model_validate(hit["_source"]["record"]),
                float(hit.get("_score") or 0.0),
                matched=_matched(query, hit),
            )
            for hit in out["hits"]["hits"]
        ]
        aggregation = (out.get("aggregations") or {}).get("fresh")
        if aggregation is None:
            return fresh.IndexPage(hits, query.limit)
        listed = aggregation["docs"]["hits"]["hits"]
        versions = {doc["_id"].partition(".")[2]: int(doc["_version"]) for doc in listed}
        return fresh.IndexPage(hits, query.limit, versions, int(aggregation["doc_count"]) <= len(listed))

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        """The nearest vectors, merged with the project's recent changes as :meth:`search` is
        (``fresh.merge_similar``: the items carry their vectors, so the merge scores exactly)."""
        if query.limit <= 0:
            return []
        if self._changes is None:
            return self._similar(query)
        return self._with_changes(query, self._similar, fresh.merge_similar)

    def _similar(self, query: VectorQuery, since: datetime | None = None) -> list[IndexHit]:
        """(``since`` unused: a vector search lists no window; the argument keeps ``_with_changes``'s shape.)"""
        try:  # (a dimension never written has no field: the ``exists`` filter then matches nothing)
            out = self.client.search(index=self.alias, body=similar_body(query), routing=query.scope.project_id)
        except NotFoundError:
            return []  # no index yet: nothing was ever written
        except TransportError as exc:
            if index_outage(exc):
                raise IndexUnavailable(cause=f"OpenSearch search failed: {index_cause(exc)}") from exc
            raise
        return [
            IndexHit(MemoryRecord.model_validate(hit["_source"]["record"]), float(hit.get("_score") or 1.0) - 1.0)
            for hit in out["hits"]["hits"]
        ]

    # -- for the cleanup job ------------------------------------------------------------------

    @staticmethod
    def entry_for(scope: Scope, memory_id: str, version: int) -> IndexEntry:
        """The entry a record of this version would have (to remove one whose record is gone)."""
        return IndexEntry(doc_id(scope.project_id, memory_id), scope, memory_id, version)

    def entries(self, records: list[MemoryRecord]) -> dict[str, IndexEntry]:
        """What the index holds for each of these records, by document id (absent: nothing)."""
        if not records:
            return {}
        docs = [{"_id": doc_id(r.project_id, r.id), "routing": r.project_id} for r in records]
        try:
            with _index_call():
                out = self.client.mget(
                    index=self.alias, body={"docs": docs}, params={"_source_includes": ",".join(_ENTRY_FIELDS)}
                )
        except NotFoundError:
            return {}  # no index yet
        return {hit["_id"]: _entry(hit) for hit in out.get("docs", []) if hit.get("found")}

    def walk(self, cursor: str | None, limit: int) -> tuple[list[IndexEntry], str | None]:
        """Every document, tombstones included, ``limit`` at a time in (project, id) order; the
        cursor resumes after them (None: the walk's end)."""
        body: dict[str, Any] = {
            "size": limit,
            "query": {"match_all": {}},
            "sort": [{"project_id": "asc"}, {"id": "asc"}],
            "_source": _ENTRY_FIELDS,
            "version": True,
            "seq_no_primary_term": True,
        }
        if cursor:
            body["search_after"] = json.loads(cursor)
        try:
            with _index_call():
                out = self.client.search(index=self.alias, body=body)
        except NotFoundError:
            return [], None  # no index yet
        hits = out["hits"]["hits"]
        return [_entry(hit) for hit in hits], json.dumps(hits[-1]["sort"]) if len(hits) == limit else None

    def drop(self, entry: IndexEntry) -> bool:
        if entry.scope is None or entry.memory_id is None or entry.version is None:
            return False
        now = format_ts(utc_now())
        body = {
            "id": entry.memory_id,
            "workspace_id": entry.scope.workspace_id,
            "project_id": entry.scope.project_id,
            "updated_at": now,
            "deleted": True,
            "deleted_at": now,
        }
        try:
            with _index_call():
                self.ensure()
                self.client.index(
                    index=self.alias,
                    id=doc_id(entry.scope.project_id, entry.memory_id),
                    body=body,
                    routing=entry.scope.project_id,
                    version=entry.version + 1,
                    version_type="external",
                    refresh=self.refresh,
                )
        except ConflictError:
            return False  # something newer is there already
        return True

    def purge(self, entry: IndexEntry) -> bool:
        if entry.scope is None or not entry.token:
            return False
        seq_no, _, primary_term = entry.token.partition(":")
        try:
            with _index_call():
                self.client.delete(
                    index=self.alias,
                    id=entry.ref,
                    routing=entry.scope.project_id,
                    if_seq_no=int(seq_no),
                    if_primary_term=int(primary_term),
                )
        except (ConflictError, NotFoundError):
            return False  # rewritten or purged since
        return True
