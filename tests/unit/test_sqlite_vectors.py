"""The embedded backend's vector ranking (``mnemo.backends.sqlite.vectors``): the chunks it reads
are the full best-first order (ties newest first) cut up, whatever the sizes and ties."""

from __future__ import annotations

import numpy as np
import pytest
from mnemo.backends.sqlite.vectors import CHUNK, _best_first


@pytest.mark.parametrize("seed", range(20))
def test_chunks_are_the_full_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3 * CHUNK))
    # few distinct values: many ties, some across a chunk's edge
    scores = rng.integers(0, 12, n).astype(np.float32) / 10
    docs = rng.permutation(10 * n + 1)[:n].astype(np.int64)
    min_score = float(rng.choice([0.0, 0.35, 0.9]))
    size = int(rng.integers(1, 80))
    chunks = list(_best_first(scores, docs, min_score, size))
    kept = np.flatnonzero(scores >= min_score)
    expected = kept[np.lexsort((-docs[kept], -scores[kept]))]
    got = np.concatenate(chunks) if chunks else np.zeros(0, np.int64)
    assert got.tolist() == expected.tolist()
    if chunks:
        assert chunks[0].size >= min(size, kept.size)
        for chunk in chunks[1:-1]:
            assert chunk.size >= CHUNK
