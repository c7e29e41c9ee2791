"""Embedders: text → a vector of meaning (the ``Embedder`` port of ``mnemo.ports``).

``MNEMO_EMBEDDER`` chooses one per process: ``static`` (the default, ``mnemo.embedding.static``:
no network, no native code), ``minilm`` (``mnemo.embedding.transformer``: all-MiniLM-L6-v2 on the
CPU with numpy), ``openai`` (``mnemo.embedding.openai``: any OpenAI-compatible ``/v1/embeddings``),
``bedrock`` (``mnemo.embedding.bedrock``: Titan Text Embeddings V2 or Cohere Embed Multilingual v3),
``none`` (words only: recall's ``mode`` falls back to ``lexical``), or ``module:callable``, a factory
of the deployment's own that returns an object with ``model``, ``dim`` and ``embed`` (and, if
queries need another treatment than documents, ``embed_queries``). docs/retrieval.md compares the
embedders and says which is the default and why.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mnemo.ports import Embedder

if TYPE_CHECKING:
    from mnemo.config import Settings


def default_embedder() -> Embedder:
    """The process's packaged static embedder (``static``; its model loads on first use)."""
    from mnemo.embedding.static import shared_embedder

    return shared_embedder()


NAMES = ("static", "minilm", "openai", "bedrock", "none")


def build_embedder(name: str, cfg: Settings | None = None) -> Embedder | None:
    """The embedder ``MNEMO_EMBEDDER`` names; ``cfg`` carries the remote ones' settings."""
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
