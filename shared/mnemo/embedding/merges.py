"""The tokenizer's byte-pair merges as token ids: the one piece of the embedder that
``scripts/embedder_data.py`` runs at build time. Standard library only, and importing nothing of
``mnemo``: the layer build (``sam build`` with a plain python3.11, docs/aws.md) loads this file by
its path, without the package's dependencies (pydantic, PyStemmer)."""

from __future__ import annotations

import sys
from array import array


def merge_ids(spec: dict[str, object]) -> bytes:
    """The spec's byte-pair merges in rank order as little-endian uint16 triples (left, right,
    merged), as ``scripts/embedder_data.py`` stores them beside the tokenizer (``merges.u16``)."""
    model = spec["model"]
    assert isinstance(model, dict)
    vocab: dict[str, int] = model["vocab"]
    if len(vocab) > 0xFFFF:
        raise ValueError("the tokenizer's vocabulary does not fit 16-bit ids")
    ids = array("H")
    for merge in model["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        ids.extend((vocab[left], vocab[right], vocab[left + right]))
    if sys.byteorder != "little":  # pragma: no cover
        ids.byteswap()
    return ids.tobytes()
