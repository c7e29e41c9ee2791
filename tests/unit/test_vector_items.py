"""A memory's vector in its DynamoDB item, as the table stores it and as a stream image carries it
to the indexer (Lambda delivers binary attributes in base64), and in its OpenSearch document."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from mnemo.backends.aws.items import memory_item, record_from_item
from mnemo.backends.aws.mapping import document, vector_field
from mnemo.backends.aws.query import similar_body
from mnemo.backends.aws.stream import change_from_stream_record
from mnemo.models.records import Embedding, MemoryRecord
from mnemo.ports import MemoryFilter, Scope, VectorQuery

from tests.support.records import memory_record

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def record(embedding: Embedding | None) -> MemoryRecord:
    return memory_record(
        "Bob is allergic to peanuts", id="mem_01JDQ5A1B2C3D4E5F6G7H8J9KA", at=NOW, version=3, embedding=embedding
    )


VECTOR = Embedding.of("static-test", [0.1, -0.2, 0.3, 0.9])


def test_the_item_carries_the_vector_and_the_model_and_reads_back_equal():
    item = memory_item(record(VECTOR))

    assert item["embedding"] == {"B": VECTOR.to_bytes()} and item["embedding_model"] == {"S": "static-test"}
    assert len(item["embedding"]["B"]) == 4 * VECTOR.dim
    assert record_from_item(item) == record(VECTOR)
    assert "embedding" not in memory_item(record(None))


def test_a_stream_image_in_base64_gives_the_indexer_the_same_vector():
    image = memory_item(record(VECTOR))
    image["embedding"] = {"B": base64.b64encode(image["embedding"]["B"]).decode()}
    keys = {"pk": image["pk"], "sk": image["sk"]}
    raw = {
        "eventName": "MODIFY",
        "dynamodb": {"Keys": keys, "NewImage": image, "ApproximateCreationDateTime": 1795978800},
    }

    change = change_from_stream_record(raw)

    assert change is not None and change.record.embedding == VECTOR


def test_the_document_holds_the_vector_by_dimension_but_its_record_never_does():
    doc = document(record(VECTOR))

    assert doc["embedding_model"] == "static-test"
    assert doc[vector_field(4)] == list(VECTOR.vector)
    assert "embedding" not in doc["record"]
    assert "embedding_model" not in document(record(None))


def test_the_vector_search_keeps_every_filter_and_asks_for_the_model():
    query = VectorQuery(Scope("ws_1", "prj_1"), [0.0, 1.0, 0.0, 0.0], "static-test", MemoryFilter(now=NOW), 5, 0.35)

    body = similar_body(query)

    candidates = body["query"]["script_score"]["query"]["bool"]
    assert {"term": {"workspace_id": "ws_1"}} in candidates["filter"]
    assert {"term": {"project_id": "prj_1"}} in candidates["filter"]
    assert {"term": {"embedding_model": "static-test"}} in candidates["filter"]
    assert {"exists": {"field": "embedding_4"}} in candidates["filter"]
    assert candidates["must_not"] == [{"term": {"deleted": True}}]
    assert body["min_score"] == 1.35 and body["size"] == 5
