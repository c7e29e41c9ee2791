"""The OpenSearch query builder: DSL from parsed arguments only, never a query parser."""

from __future__ import annotations

import json

import pytest
from mnemo.backends.aws.mapping import KNN_K, index_body, layout_of, mappings, vector_field, vector_mapping
from mnemo.backends.aws.query import knn_body, knn_hits, like_to_wildcard, search_body
from mnemo.models.common import format_ts, utc_now
from mnemo.ports import IndexQuery, MemoryFilter, Scope, VectorQuery
from mnemo.text import query_terms


@pytest.mark.parametrize(
    ("like", "wildcard"),
    [
        ("acme/%", "acme/*"),
        ("a_c", "a?c"),
        ("100\\%", "100%"),
        ("a\\_b", "a_b"),
        ("a*b?", "a\\*b\\?"),
        ("back\\\\slash", "back\\\\slash"),
        ("\\x", "x"),
    ],
)
def test_like_patterns_become_escaped_wildcards(like, wildcard):
    assert like_to_wildcard(like) == wildcard


def test_every_query_filters_on_workspace_and_project_and_hides_tombstones():
    query = IndexQuery(Scope("ws_1", "prj_1"), query_terms("hello"), "all", MemoryFilter(now=utc_now()), 5)

    body = search_body(query)["query"]["bool"]

    assert {"term": {"workspace_id": "ws_1"}} in body["filter"]
    assert {"term": {"project_id": "prj_1"}} in body["filter"]
    assert body["must_not"] == [{"term": {"deleted": True}}]


def test_user_text_never_reaches_a_query_parser():
    query = IndexQuery(
        Scope("ws_1", "prj_1"), query_terms('a OR b* "c" NOT d:e'), "any", MemoryFilter(now=utc_now()), 5
    )

    text = json.dumps(search_body(query))

    assert "query_string" not in text and "simple_query_string" not in text and '"match"' not in text


def test_a_query_word_too_long_for_a_prefix_query_reaches_the_index_as_a_term_only():
    # OpenSearch refuses a prefix of about 1,000 characters ("input automaton is too large": 500)
    word = "b" * 4096
    query = IndexQuery(
        Scope("ws_1", "prj_1"), query_terms(word, latin_prefix=True), "all", MemoryFilter(now=utc_now()), 5
    )

    body = json.dumps(search_body(query))

    assert '"prefix"' not in body
    assert word in body  # still looked for, as a whole word


def _vector_query(limit: int = 10, min_score: float = 0.35) -> VectorQuery:
    return VectorQuery(Scope("ws_1", "prj_1"), [0.6, 0.8], "m1", MemoryFilter(now=utc_now()), limit, min_score)


def test_the_knn_query_filters_inside_the_graph_walk_and_asks_more_than_it_keeps():
    body = knn_body(_vector_query(limit=10))

    knn = body["query"]["knn"][vector_field(2)]
    # the tenant filter is inside the knn query (efficient filtering), not beside it
    assert {"term": {"workspace_id": "ws_1"}} in knn["filter"]["bool"]["filter"]
    assert {"term": {"project_id": "prj_1"}} in knn["filter"]["bool"]["filter"]
    assert {"term": {"embedding_model": "m1"}} in knn["filter"]["bool"]["filter"]
    assert knn["filter"]["bool"]["must_not"] == [{"term": {"deleted": True}}]
    assert set(body["query"]) == {"knn"}
    assert knn["k"] == KNN_K and body["size"] == 10
    assert knn_body(_vector_query(limit=KNN_K * 2))["query"]["knn"][vector_field(2)]["k"] == KNN_K * 2


def test_lucene_cosine_scores_map_back_to_cosine_and_the_floor_forward():
    # Lucene's cosinesimil score is (1 + cosine) / 2
    assert knn_body(_vector_query(min_score=0.35))["min_score"] == pytest.approx(0.675)
    now = format_ts(utc_now())
    record = {"id": "m", "workspace_id": "w", "project_id": "p", "content": "c", "source": "t", "version": 1}
    record |= {"created_at": now, "updated_at": now}
    hit = {"_score": 0.9, "_source": {"record": record}}
    assert knn_hits({"hits": {"hits": [hit]}})[0].score == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("mapping", "layout"),
    [
        (mappings("hnsw"), "hnsw"),
        (mappings("exact"), "exact"),
        # an index created before the layouts were recorded: its vector fields say it
        ({"properties": {"embedding_256": vector_mapping(256)}}, "exact"),
        ({"properties": {"embedding_384": vector_mapping(384, "hnsw")}}, "hnsw"),
    ],
)
def test_an_index_layout_is_read_from_its_mapping(mapping, layout):
    assert layout_of(mapping) == layout


def test_only_the_hnsw_layout_needs_index_knn():
    assert index_body("hnsw", shards=1, replicas=0, refresh_interval="1s")["settings"]["knn"] is True
    assert "knn" not in index_body("exact", shards=1, replicas=0, refresh_interval="1s")["settings"]
