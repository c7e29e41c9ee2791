"""The embedder alone, on the labelled quality set: how well the nearest vectors find what each
query should find (recall@5 per class, by cosine over every memory, no words), and what it costs
(data size, load time in a fresh process, embed time per memory). docs/retrieval.md quotes it
beside the other embedders measured on the same set.

    python -m bench.embedders            # the configured embedder (MNEMO_EMBEDDER, default static)
    MNEMO_EMBEDDER=minilm python -m bench.embedders
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import quality_set

ROOT = Path(__file__).resolve().parent.parent
K = 5


def load_seconds() -> float:
    """Import and first embed in a fresh interpreter (the model loads on the first text)."""
    code = (
        "import time; t = time.perf_counter(); from mnemo.embedding import build_embedder; "
        "from mnemo.config import Settings; e = build_embedder(Settings().embedder); e.embed(['x']); "
        "print(time.perf_counter() - t)"
    )
    runs = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(3)]
    return sorted(runs)[1]


def run() -> dict[str, Any]:
    import numpy as np
    from mnemo.config import Settings
    from mnemo.embedding import build_embedder

    embedder = build_embedder(Settings().embedder)
    if embedder is None:
        return {"status": "not run", "reason": "MNEMO_EMBEDDER=none"}
    data = quality_set.load()
    ids = [m["id"] for m in data["memories"]]
    embedder.embed(["warm"])
    # a query goes through embed_queries when the model treats queries apart (e5's "query: ", bge's
    # instruction), as the service does (mnemo.service.vectors.embed_query)
    embed_query = getattr(embedder, "embed_queries", embedder.embed)
    started = time.perf_counter()
    matrix = np.asarray(embedder.embed([m["content"] for m in data["memories"]]), dtype=np.float32)
    per_memory_ms = (time.perf_counter() - started) / len(ids) * 1e3
    rows: dict[str, list[float]] = defaultdict(list)
    for query in data["queries"]:
        if not query["query"].strip():
            continue  # what changed: no meaning to compare
        vector = np.asarray(embed_query([query["query"]])[0], dtype=np.float32)
        best = [ids[i] for i in np.argsort(-(matrix @ vector), kind="stable")[:K]]
        wanted = set(query["relevant"])
        rows[query["class"]].append(len(wanted & set(best)) / len(wanted))
        if query["class"] == "paraphrase":
            rows[f"paraphrase {query['lang']}"].append(len(wanted & set(best)) / len(wanted))
    data_dir = ROOT / "shared" / "mnemo" / "embedding" / "data"
    files = getattr(sys.modules[type(embedder).__module__], "DATA_FILES", ())
    return {
        "model": embedder.model,
        "dim": embedder.dim,
        "data_mb": round(sum((data_dir / f).stat().st_size for f in files) / 1e6, 1) if files else None,
        "load_s": round(load_seconds(), 3),
        "embed_ms_per_memory": round(per_memory_ms, 3),
        "recall_at_5": {cls: round(sum(v) / len(v), 3) for cls, v in sorted(rows.items())},
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
