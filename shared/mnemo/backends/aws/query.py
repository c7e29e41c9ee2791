"""The OpenSearch index's queries: DSL built from a query, and its answers read back.

Query terms (already analysed by :mod:`mnemo.text`) become ``term`` and ``prefix`` queries over
the fields of :mod:`.mapping`, each term's clause named (``t0``, ``t1``, …) so a hit says which
terms it matched. Nothing user-typed ever reaches a query parser (no ``query_string``). Every
query filters on workspace *and* project, and leaves tombstones out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mnemo.backends.aws.fresh import IndexPage
from mnemo.backends.aws.mapping import KNN_K, vector_field
from mnemo.like import ANY_ONE, ANY_RUN, is_match_all, like_tokens
from mnemo.models.common import format_ts
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexHit, IndexQuery, MemoryFilter, Scope, VectorQuery
from mnemo.text import QueryTerm

#: field weights, as the SQLite backend's
FIELD_BOOSTS = {"content": 1.0, "tags": 0.6, "path": 0.4}
#: clauses a query may expand to in total (OpenSearch's indices.query.bool.max_clause_count is 1024)
CLAUSE_BUDGET = 600
#: the most documents the ``fresh`` aggregation lists (OpenSearch's ``max_inner_result_window``)
FRESH_DOCS = 100


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
    if not flt.include_superseded:
        clauses.append({"bool": {"must_not": {"exists": {"field": "superseded_by"}}}})
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
    if flt.session is not None:
        clauses.append({"term": {"session": flt.session}})
    if flt.visible_teams is not None or not flt.include_unteamed:
        team: list[dict[str, Any]] = []
        if flt.include_unteamed:
            team.append({"bool": {"must_not": {"exists": {"field": "team_id"}}}})
        if flt.visible_teams:
            team.append({"terms": {"team_id": sorted(flt.visible_teams)}})
        clauses.append({"bool": {"should": team, "minimum_should_match": 1}} if team else {"match_none": {}})
    return clauses


def term_clause(term: QueryTerm, expansions: int, name: str) -> dict[str, Any]:
    """One query term, matching in any of the three fields, content weighted highest, named
    ``name`` (a hit's ``matched_queries`` say which terms it matched).

    A term matches a word of the same stem: a BM25-scored ``term`` query on the stems field of
    each field, summed over the fields (as the SQLite index sums a key's weighted frequencies). It
    also matches its spelling on the surface field, with boost 0 (it adds nothing): a document
    indexed before stems existed still matches as written until the cleanup job re-indexes it.
    A prefix term also matches, per field, a constant-score ``prefix`` that decides the match
    (boost 0), and the same prefix rewritten into BM25-scored ``term`` queries over its first
    ``expansions`` words, so term frequency and length count (a plain ``prefix`` query scores every
    match the same). The stem and the prefix are two ways to match one term, and a word is scored
    one way: by its stem when it has the term's stem, by the prefix only when it does not (a word
    being typed: ``deplo``). Summed, a word matched both ways (``rotates`` for the query ``rotate``)
    counted twice, and its prefix clause's IDF — that of the word as written, rarer than the stem —
    outranked a memory holding every other term of the query as well; the SQLite index gives a
    term one IDF, its commonest key's, and a document its best key's impact.
    """
    stems: list[dict[str, Any]] = []
    prefixes: list[dict[str, Any]] = []
    for field, boost in FIELD_BOOSTS.items():
        terms = f"{field}_terms"
        stems.append({"term": {f"{field}_stems": {"value": term.stem, "boost": boost}}})
        stems.append({"term": {terms: {"value": term.text, "boost": 0.0}}})
        if term.prefix:
            prefixes.append({"prefix": {terms: {"value": term.text, "boost": 0.0, "rewrite": "constant_score"}}})
            prefixes.append(
                {"prefix": {terms: {"value": term.text, "boost": boost, "rewrite": f"top_terms_{expansions}"}}}
            )
    ways = [{"bool": {"should": stems, "minimum_should_match": 1}}]
    if prefixes:
        # only where the stem did not match: the prefix's words are scored by their own (rarer)
        # document frequencies, so a word matched both ways would score by the wrong IDF
        ways.append({"bool": {"should": prefixes, "minimum_should_match": 1, "must_not": stems}})
    return {"dis_max": {"queries": ways, "tie_breaker": 0.0, "_name": name}}


def fresh_aggregation(since: datetime) -> dict[str, object]:
    """The ``aggs`` of a search that lists the documents of the window matching the query (for
    the merge with the recent changes, :mod:`.fresh`)."""
    top = {"size": FRESH_DOCS, "_source": False, "version": True, "sort": [{"updated_at": "desc"}]}
    return {
        "fresh": {"filter": {"range": {"updated_at": {"gte": format_ts(since)}}}, "aggs": {"docs": {"top_hits": top}}}
    }


def search_body(query: IndexQuery, since: datetime | None = None) -> dict[str, Any]:
    """The query's DSL; with ``since``, also the ``fresh`` aggregation."""
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
        body["aggs"] = fresh_aggregation(since)
    return body


def search_page(query: IndexQuery, out: dict[str, Any]) -> IndexPage:
    """The hits of a :func:`search_body` answer, with the ``fresh`` aggregation's documents."""
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
        return IndexPage(hits, query.limit)
    listed = aggregation["docs"]["hits"]["hits"]
    versions = {doc["_id"].partition(".")[2]: int(doc["_version"]) for doc in listed}
    return IndexPage(hits, query.limit, versions)


def _matched(query: IndexQuery, hit: dict[str, Any]) -> tuple[str, ...]:
    names = set(hit.get("matched_queries") or ())
    return tuple(term.text for i, term in enumerate(query.terms) if f"t{i}" in names)


def _candidates(query: VectorQuery) -> tuple[str, list[dict[str, Any]]]:
    """The vector field of the query's dimension, and the filter of the candidates: the scope and
    filters, the query's model, a vector present."""
    field = vector_field(len(query.vector))
    return field, [
        *filter_clauses(query),
        {"term": {"embedding_model": query.model}},
        {"exists": {"field": field}},
    ]


def similar_body(query: VectorQuery) -> dict[str, Any]:
    """The exact vector search: the filtered candidates of the model, scored by cosine (the k-NN
    plugin's painless ``cosineSimilarity``; + 1 because a score may not be negative). Serves both
    vector layouts."""
    field, clauses = _candidates(query)
    candidates = {"bool": {"filter": clauses, "must_not": [{"term": {"deleted": True}}]}}
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


def similar_hits(out: dict[str, Any]) -> list[IndexHit]:
    """The hits of a :func:`similar_body` answer, scored by cosine."""
    return [
        IndexHit(MemoryRecord.model_validate(hit["_source"]["record"]), float(hit.get("_score") or 1.0) - 1.0)
        for hit in out["hits"]["hits"]
    ]


def knn_body(query: VectorQuery) -> dict[str, Any]:
    """The approximate vector search on an index of the ``hnsw`` layout: Lucene's HNSW ``knn``
    query with the scope and filters *inside* it (efficient filtering: the graph walk only
    accepts documents of the project, and Lucene searches exactly when the filter leaves fewer
    documents than it would visit), asking ``max(limit, KNN_K)`` neighbours and keeping ``limit``.
    Lucene's cosine score is ``(1 + cosine) / 2``."""
    field, clauses = _candidates(query)
    knn = {
        "vector": [float(x) for x in query.vector],
        "k": max(query.limit, KNN_K),
        "filter": {"bool": {"filter": clauses, "must_not": [{"term": {"deleted": True}}]}},
    }
    return {
        "size": query.limit,
        "min_score": (1.0 + query.min_score) / 2.0,
        "query": {"knn": {field: knn}},
        "sort": ["_score", {"updated_at": "desc"}, {"id": "desc"}],
        "track_scores": True,
        "_source": ["record"],
    }


def knn_hits(out: dict[str, Any]) -> list[IndexHit]:
    """The hits of a :func:`knn_body` answer, scored by cosine."""
    return [
        IndexHit(MemoryRecord.model_validate(hit["_source"]["record"]), 2.0 * float(hit.get("_score") or 0.5) - 1.0)
        for hit in out["hits"]["hits"]
    ]


def neighbours_searches(
    scope: Scope, anchor: MemoryRecord, flt: MemoryFilter, *, session: str | None, per_side: int
) -> list[dict[str, Any]]:
    """The ``_msearch`` lines (header, body, header, body) of one anchor's neighbours: the
    ``per_side`` memories before it and after it in id (creation) order, of its session when
    ``session``, passing ``flt``, tombstones left out."""
    clauses = filter_clauses(IndexQuery(scope, (), "all", flt, per_side))
    if session is not None:
        clauses.append({"term": {"session": session}})
    lines: list[dict[str, Any]] = []
    for op, order in (("lt", "desc"), ("gt", "asc")):
        boolean = {"filter": [*clauses, {"range": {"id": {op: anchor.id}}}], "must_not": [{"term": {"deleted": True}}]}
        lines.append({"routing": scope.project_id})
        lines.append({"size": per_side, "query": {"bool": boolean}, "sort": [{"id": order}], "_source": ["record"]})
    return lines


def neighbours_of(out: dict[str, Any]) -> list[MemoryRecord]:
    """The records of one ``_msearch`` response item."""
    if "error" in out:
        raise RuntimeError(f"a neighbours search failed: {out['error']}")
    return [MemoryRecord.model_validate(hit["_source"]["record"]) for hit in out["hits"]["hits"]]
