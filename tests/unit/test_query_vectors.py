"""``service.vectors.embed_query`` keeps the vectors of recent queries, per embedder object: a
repeated query costs no second embedding, another embedder (even under the same model name) is
always asked itself, and a failure is never kept."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from mnemo.errors import EmbedderUnavailable
from mnemo.service import vectors


class Counting:
    model = "counting"
    dim = 2

    def __init__(self, first: float = 1.0) -> None:
        self.first = first
        self.texts: list[str] = []
        self.down = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.down:
            raise EmbedderUnavailable("down")
        self.texts += texts
        return [[self.first, float(len(t))] for t in texts]


class Asymmetric(Counting):
    """Queries embedded apart from documents (e5's prefixes)."""

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += [f"query: {t}" for t in texts]
        return [[-self.first, float(len(t))] for t in texts]


def test_a_repeated_query_is_embedded_once_and_answers_the_same_vector():
    embedder = Counting()
    first = vectors.embed_query(embedder, "deploy freeze")
    first.append(99.0)  # the caller's list is its own: the kept vector does not change
    assert vectors.embed_query(embedder, "deploy freeze") == [1.0, 13.0]
    assert vectors.embed_query(embedder, "deploy  freeze") == [1.0, 14.0]  # another text
    assert embedder.texts == ["deploy freeze", "deploy  freeze"]


def test_each_embedder_object_is_asked_itself_even_under_the_same_model_name():
    one, other = Counting(1.0), Counting(2.0)
    assert vectors.embed_query(one, "pricing") == [1.0, 7.0]
    assert vectors.embed_query(other, "pricing") == [2.0, 7.0]
    assert (one.texts, other.texts) == (["pricing"], ["pricing"])


def test_queries_go_through_embed_queries_when_the_embedder_has_it():
    embedder = Asymmetric()
    assert vectors.embed_query(embedder, "churn") == [-1.0, 5.0]
    assert vectors.embed_query(embedder, "churn") == [-1.0, 5.0]
    assert embedder.texts == ["query: churn"]


def test_a_failure_is_not_kept_and_the_oldest_queries_leave_first(monkeypatch):
    monkeypatch.setattr(vectors, "QUERY_CACHE_SIZE", 2)
    embedder = Counting()
    embedder.down = True
    with pytest.raises(EmbedderUnavailable):
        vectors.embed_query(embedder, "a")
    embedder.down = False
    for text in ("a", "b", "a", "c", "a", "b"):  # "b" left when "c" came: "a" was used since
        vectors.embed_query(embedder, text)
    assert embedder.texts == ["a", "b", "c", "b"]
