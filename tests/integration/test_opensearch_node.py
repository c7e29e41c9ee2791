"""The test OpenSearch node works for what Mnemo needs: pre-analysed whitespace text and keyword filters."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as OSConnectionError

pytestmark = [pytest.mark.slow]


def _client(url: str, **kw: object) -> OpenSearch:
    return OpenSearch(hosts=[url], timeout=30, **kw)


def _create(client: OpenSearch, index: str) -> None:
    client.indices.create(
        index=index,
        body={
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {
                "properties": {
                    "text": {"type": "text", "analyzer": "whitespace"},
                    "tag": {"type": "keyword"},
                }
            },
        },
    )


def _ids(client: OpenSearch, index: str, query: dict) -> set[str]:
    hits = client.search(index=index, body={"query": query})["hits"]["hits"]
    return {h["_id"] for h in hits}


def test_whitespace_text_and_keyword_queries(opensearch_node) -> None:
    client = _client(opensearch_node.url)
    index = "mnemo-node-smoke"
    _create(client, index)
    try:
        client.index(index=index, id="1", body={"text": "alpha beta gamma", "tag": "Project-Alpha"}, refresh="wait_for")
        client.index(index=index, id="2", body={"text": "alpha delta", "tag": "project-beta"}, refresh="wait_for")

        assert _ids(client, index, {"match": {"text": {"query": "alpha beta", "operator": "and"}}}) == {"1"}
        assert _ids(client, index, {"match": {"text": {"query": "alpha", "operator": "and"}}}) == {"1", "2"}
        # whitespace does not lowercase: Mnemo must analyse (lowercase) in Python before indexing
        assert _ids(client, index, {"match": {"text": {"query": "Alpha", "operator": "and"}}}) == set()

        # keyword prefix is case-sensitive ...
        assert _ids(client, index, {"prefix": {"tag": {"value": "project-"}}}) == {"2"}

        # ... wildcard can be told not to be
        def wildcard(pattern: str) -> dict:
            return {"wildcard": {"tag": {"value": pattern, "case_insensitive": True}}}

        assert _ids(client, index, wildcard("PROJECT-*")) == {"1", "2"}
        assert _ids(client, index, wildcard("*alpha")) == {"1"}
    finally:
        client.indices.delete(index=index)


def test_pause_and_resume_keep_data_and_port(opensearch_node) -> None:
    url = opensearch_node.url
    client = _client(url)
    index = "mnemo-node-restart"
    _create(client, index)
    try:
        client.index(index=index, id="kept", body={"text": "survives restart", "tag": "t"}, refresh="wait_for")
        opensearch_node.pause()
        try:
            with pytest.raises(OSConnectionError):
                _client(url, max_retries=0).info()
        finally:
            opensearch_node.resume()
        assert opensearch_node.url == url
        client.cluster.health(index=index, wait_for_status="green")
        assert _ids(client, index, {"match": {"text": {"query": "survives", "operator": "and"}}}) == {"kept"}
    finally:
        client.indices.delete(index=index)
