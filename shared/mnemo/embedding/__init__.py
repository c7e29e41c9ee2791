"""Embedders: text → a vector of meaning (the ``Embedder`` port of ``mnemo.ports``).

``MNEMO_EMBEDDER`` chooses one per process: ``static`` (the default, ``mnemo.embedding.static``:
no network, no native code), ``none`` (words only: recall's ``mode`` falls back to ``lexical``), or
``module:callable``, a factory of the deployment's own (e.g. one calling Amazon Bedrock) that
returns an object with ``model``, ``dim`` and ``embed``. docs/retrieval.md compares the embedders
that can run here and says why ``static`` is the default.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence

from mnemo.ports import Embedder


def default_embedder() -> Embedder:
    """The process's packaged static embedder (``static``; its model loads on first use)."""
    from mnemo.embedding.static import shared_embedder

    return shared_embedder()


def build_embedder(name: str) -> Embedder | None:
    """The embedder ``MNEMO_EMBEDDER`` names (None for ``none``)."""
    if name == "none":
        return None
    if name == "static":
        return default_embedder()
    module, sep, attr = name.partition(":")
    if not sep:
        raise ValueError(f"MNEMO_EMBEDDER must be 'static', 'none' or 'module:callable', not {name!r}")
    factory = getattr(importlib.import_module(module), attr)
    embedder: Embedder = factory()
    return embedder


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors (0 when either is all zeros)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
