"""Vectors at scale (issue 25 item 4): one project of 100,000 memories with 384-dimension vectors,
hybrid ``recall`` in process, and the top-10 overlap of approximate against exact vector search.

    python -m bench.vectors                       # SQLite, 100,000 memories
    python -m bench.vectors --size 20000 --queries 100
    python -m bench.vectors --backends half       # the vector half alone, no store: minutes
    python -m bench.vectors --backends node --node-size 50000   # the OpenSearch test node alone

* The memories' text is the latency corpus (``bench.corpus.generate``), so the word half of
  hybrid recall does its usual work; the vectors are the bench's own (:class:`BenchEmbedder`, 384
  dimensions), in two sets over the same memories:

  - **random**: independent random unit vectors, and random queries — the latency case: no vector
    clears recall's similarity floor (0.35), so the vector half finds nothing, yet exact search
    scores every vector to know it;
  - **clustered**: ``CLUSTERS`` centres, each memory its centre plus noise (cosine ≈ 0.7 to its
    centre, ≈ 0.5 to its cluster's other memories), each query a centre plus noise: ≈ 50 close
    neighbours of nearly equal similarity, the hard case for an approximate search's recall.

* **latency**: ``Service.invoke("recall", …)`` (hybrid, the default), wall clock and process CPU
  (the machine is shared: CPU is what the call cost, wall what it waited), p50 / p99. The process
  freezes what it holds once the service is built (``mnemo.coldstart.freeze``), as a warm ``mnemo
  serve`` worker does: a full collection over it would otherwise land on about one query in 75.
* **modes**: the same queries on the clustered set with the graph through each of ``recall``'s
  modes (``lexical``, ``semantic``, ``hybrid``): what each half costs alone.
* **overlap**: for each query of the clustered set, the share of exact search's top 10 (the
  vector search alone, ``VectorSearch`` with ``ann_min=None``) that the backend's own vector search
  also returns in its top 10 — the loss is 1 − overlap. On AWS the exact search is the
  ``script_score`` query over the same index.

The store is filled through the backend's own port (``store.create``, which on SQLite indexes the
record in its transaction), in one unit of work; the clustered set replaces the vectors through
``store.set_embedding`` (the cleanup job's re-embedding path), under another model name, so both
sets are the same memories.

``--backends node`` measures the OpenSearch side on the test node directly (``run_node``): exact
``script_score`` against the Lucene HNSW ``knn`` query with its filter, same documents.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import corpus
from bench.stats import summary_ms

DIM = 384
SIZE = 100_000
CLUSTERS = 2_000
#: the noise's norm against a unit centre: cosine ≈ 1 / sqrt(1 + NOISE²) to the centre
NOISE = 1.0
SEED = 11
TOP = 10
#: recall's similarity floor (docs/retrieval.md): the overlap is measured as recall asks
FLOOR = 0.35
#: recall's modes, each measured on the clustered set with the graph (``modes`` in the output)
MODES = ("lexical", "semantic", "hybrid")


def _unit(v: Any) -> Any:
    import numpy as np

    return v / np.linalg.norm(v, axis=-1, keepdims=True)


class VectorSet:
    """The memories' vectors and the queries' of one set (``random`` or ``clustered``)."""

    def __init__(self, name: str, size: int, seed: int = SEED) -> None:
        import numpy as np

        self.name = name
        rng = np.random.default_rng(seed)
        self.centres = _unit(rng.standard_normal((CLUSTERS, DIM)).astype(np.float32))
        noise = rng.standard_normal((size, DIM)).astype(np.float32) * (NOISE / DIM**0.5)
        if name == "random":
            self.memories = _unit(rng.standard_normal((size, DIM)).astype(np.float32))
        else:
            self.memories = _unit(self.centres[rng.integers(0, CLUSTERS, size)] + noise)

    def query(self, text: str) -> list[float]:
        """A query's vector, fixed by its text."""
        import numpy as np

        rng = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
        if self.name == "random":
            v = rng.standard_normal(DIM).astype(np.float32)
        else:
            v = self.centres[rng.integers(0, CLUSTERS)] + rng.standard_normal(DIM).astype(np.float32) * (
                NOISE / DIM**0.5
            )
        return [float(x) for x in _unit(v)]


class BenchEmbedder:
    """The ``Embedder`` port over a :class:`VectorSet`: a query's vector costs no model."""

    def __init__(self, vectors: VectorSet) -> None:
        self.vectors = vectors

    @property
    def model(self) -> str:
        return f"bench-{self.vectors.name}-{DIM}"

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vectors.query(t) for t in texts]


def load(ports: Any, size: int, vectors: VectorSet) -> tuple[Any, Any]:
    """A workspace whose one project holds ``size`` memories of the latency corpus with
    ``vectors``; (the workspace, the project)."""
    from mnemo.models.records import Embedding, MemoryRecord, RateLimits
    from mnemo.service import tenancy
    from ulid import ULID

    workspace, project = tenancy.create_workspace(ports, "vectors")
    ports.tenants.set_limits(workspace.id, RateLimits(search=corpus.MAX_PER_MINUTE, write=corpus.MAX_PER_MINUTE))
    tenancy.create_key(
        ports, workspace.id, label="bench", scopes=["memory:read", "memory:write"], plain=corpus.BENCH_KEY
    )
    model = BenchEmbedder(vectors).model
    rng = random.Random(size)
    docs = corpus.generate(corpus.CorpusParams(size, SEED))
    with ports.store.unit_of_work():
        for doc, vector in zip(docs, vectors.memories, strict=True):
            ulid_bytes = int(doc.created_at.timestamp() * 1000).to_bytes(6, "big") + rng.randbytes(10)
            record = MemoryRecord(
                id=f"mem_{ULID.from_bytes(ulid_bytes)}",
                workspace_id=workspace.id,
                project_id=project.id,
                content=doc.content,
                kind=doc.kind,
                tags=doc.tags,
                path=doc.path,
                source="bench",
                version=1,
                created_at=doc.created_at,
                updated_at=doc.created_at,
                embedding=Embedding.of(model, vector.tolist()),
            )
            ports.store.create(record)  # (SQLite indexes the record in the same transaction)
    return workspace, project


def revector(ports: Any, workspace: Any, project: Any, vectors: VectorSet) -> None:
    """Give every memory of the project its vector of ``vectors`` (another model name)."""
    from mnemo.models.records import Embedding
    from mnemo.ports import Scope

    model = BenchEmbedder(vectors).model
    records = []
    cursor = None
    while True:
        page = ports.store.scan_project(Scope(workspace.id, project.id), cursor=cursor, limit=1000)
        records.extend(page.items)
        cursor = page.cursor
        if not cursor:
            break
    # (which memory gets which vector does not matter: any one-to-one assignment is the set)
    with ports.store.unit_of_work():
        for record, vector in zip(records, vectors.memories, strict=False):
            changed = record.model_copy(update={"embedding": Embedding.of(model, vector.tolist())})
            ports.store.set_embedding(changed)  # (SQLite's vector search reads the table: no re-index)


def latency(svc: Any, caller: Any, queries: list[str], warmup: int, **arguments: Any) -> dict[str, Any]:
    for q in queries[:warmup]:
        svc.invoke("recall", caller, {"query": q, **arguments})
    wall, cpu = [], []
    for q in queries:
        started, cpu_started = time.perf_counter(), time.process_time()
        svc.invoke("recall", caller, {"query": q, **arguments})
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return {"wall": summary_ms(wall), "cpu": summary_ms(cpu)}


def overlap(approximate: Any, exact: Any, scope: Any, embedder: BenchEmbedder, queries: list[str]) -> dict[str, Any]:
    """Mean share of exact search's top 10 that ``approximate`` also returns (recall's floor
    and the project's own filter, as recall asks), and the worst query's."""
    from mnemo.models.common import utc_now
    from mnemo.ports import MemoryFilter, VectorQuery

    shares = []
    for q in queries:
        query = VectorQuery(scope, embedder.embed([q])[0], embedder.model, MemoryFilter(now=utc_now()), TOP, FLOOR)
        want = [h.record.id for h in exact(query)]
        if not want:
            continue
        got = {h.record.id for h in approximate(query)}
        shares.append(sum(1 for i in want if i in got) / len(want))
    return {
        "queries": len(shares),
        "mean": round(sum(shares) / max(1, len(shares)), 4),
        "worst": min(shares, default=float("nan")),
        "below_1": sum(1 for s in shares if s < 1),
    }


def run_sqlite(workdir: Path, size: int, n_queries: int, ann_min: int | None = None) -> dict[str, Any]:
    from mnemo import coldstart
    from mnemo.backends.sqlite.vectors import VectorSearch
    from mnemo.ports import Scope
    from mnemo.service.pipeline import Service

    from bench.quality import backend_ports

    queries = [q for _, q in corpus.queries(SEED, n_queries)]
    out: dict[str, Any] = {}
    random_set, clustered = VectorSet("random", size), VectorSet("clustered", size)
    with backend_ports("sqlite", workdir, "vectors-") as ports:
        started = time.perf_counter()
        workspace, project = load(ports, size, random_set)
        out["load_s"] = round(time.perf_counter() - started, 1)
        caller = None
        for vectors in (random_set, clustered):
            if vectors is clustered:
                started = time.perf_counter()
                revector(ports, workspace, project, clustered)
                out["revector_s"] = round(time.perf_counter() - started, 1)
            embedder = BenchEmbedder(vectors)
            svc = Service(ports, embedder=embedder)
            caller = svc.authenticate(f"Bearer {corpus.BENCH_KEY}")
            coldstart.freeze()  # as a warm ``mnemo serve`` worker does before its first request
            search = ports.index.vectors
            if ann_min is not None:
                search.ann_min = ann_min
            if search.ann_min is None or size < search.ann_min:
                raise SystemExit(f"{size} vectors stay under the graph's threshold ({search.ann_min}): see --ann-min")
            exact_search = VectorSearch(ports.db, ann_min=None)
            # exact: a fresh VectorSearch without a graph, swapped in for the measurement
            ports.index.vectors = exact_search
            exact = latency(svc, caller, queries, warmup=20)
            ports.index.vectors = search
            svc.invoke("recall", caller, {"query": queries[0]})  # loads the matrix, starts the graph
            started = time.perf_counter()
            while not search.ann_ready(project.id):
                if time.perf_counter() - started > 1800:
                    raise RuntimeError("the graph was not built in 30 minutes")
                time.sleep(0.5)
            build_s = round(time.perf_counter() - started, 1)
            approx = latency(svc, caller, queries, warmup=20)
            row: dict[str, Any] = {"exact": exact, "approximate": approx, "graph_build_wall_s": build_s}
            if vectors is clustered:
                scope = Scope(workspace.id, project.id)
                row["overlap"] = overlap(search.similar, exact_search.similar, scope, embedder, queries)
                # each half alone against both, the same queries (recall's ``mode``): whose the time is
                row["modes"] = {mode: latency(svc, caller, queries, warmup=0, mode=mode) for mode in MODES}
            out[vectors.name] = row
    return out


def run_vector_half(size: int, n_queries: int) -> dict[str, Any]:
    """The vector half alone, at ``size``, on the clustered set, with the same parts and
    parameters as ``mnemo.backends.sqlite.vectors`` but no database: the exact product and partial
    sort against the graph's neighbours re-scored from the matrix — CPU per query, the graph's
    build, and the top-10 overlap at recall's floor. (Filling a store with 100,000 memories
    through the ports takes about an hour on the shared 2-core machine; this takes minutes.)"""
    import numpy as np
    from mnemo.backends.sqlite import vectors as sqlite_vectors
    from usearch.index import Index

    vectors = VectorSet("clustered", size)
    matrix = vectors.memories
    queries = [np.asarray(vectors.query(q), np.float32) for _, q in corpus.queries(SEED, n_queries)]
    pool = 100  # recall's POOL: what the vector half asks for
    started = time.process_time()
    graph = Index(
        ndim=DIM,
        metric="cos",
        dtype="i8",
        connectivity=sqlite_vectors.ANN_CONNECTIVITY,
        expansion_add=sqlite_vectors.ANN_EXPANSION_ADD,
        expansion_search=sqlite_vectors.ANN_EXPANSION_SEARCH,
    )
    graph.add(np.arange(size), matrix, threads=1)
    build_cpu = time.process_time() - started
    # what another process pays instead of that build: loading the graph the first one saved
    # (mnemo.backends.sqlite.vectors keeps built graphs beside the database)
    with tempfile.TemporaryDirectory(prefix="bench-graph-") as tmp:
        path = str(Path(tmp) / "graph.usearch")
        graph.save(path)
        saved_bytes = Path(path).stat().st_size
        started, started_wall = time.process_time(), time.perf_counter()
        loaded = Index.restore(path)
        load_cpu, load_wall = time.process_time() - started, time.perf_counter() - started_wall
        assert loaded is not None and len(loaded) == size
        same = all(
            list(loaded.search(q, TOP, threads=1).keys) == list(graph.search(q, TOP, threads=1).keys)
            for q in queries[:20]
        )
    exact_cpu, graph_cpu, shares = [], [], []
    for q in queries:
        started = time.process_time()
        scores = matrix @ q
        top = np.argpartition(scores, -pool)[-pool:]
        top = top[np.argsort(-scores[top])]
        exact_cpu.append(time.process_time() - started)
        started = time.process_time()
        keys = graph.search(q, max(2 * pool, sqlite_vectors.ANN_FETCH), threads=1).keys
        near = matrix[keys] @ q
        got = keys[np.argsort(-near)]
        graph_cpu.append(time.process_time() - started)
        want = [int(i) for i in top[:TOP] if scores[i] >= FLOOR]
        if want:
            kept = {int(i) for i in got[:TOP]}
            shares.append(sum(1 for i in want if i in kept) / len(want))
    return {
        "size": size,
        "graph_build_cpu_s": round(build_cpu, 1),
        "graph_load": {
            "cpu_ms": round(load_cpu * 1000, 1),
            "wall_ms": round(load_wall * 1000, 1),
            "file_mb": round(saved_bytes / 1e6, 1),
            "same_neighbours": same,
        },
        "exact_cpu": summary_ms(exact_cpu),
        "graph_cpu": summary_ms(graph_cpu),
        "overlap": {
            "queries": len(shares),
            "mean": round(sum(shares) / max(1, len(shares)), 4),
            "worst": min(shares, default=float("nan")),
            "below_1": sum(1 for s in shares if s < 1),
        },
    }


def run_node(
    size: int, n_queries: int, graphs: Sequence[tuple[int, int]] | None = None, ks: Sequence[int] | None = None
) -> dict[str, Any] | str:
    """On the test node (local, one 512 MB-heap JVM on this machine): the clustered set in an
    index of the ``exact`` layout, searched by ``script_score``, and in one ``hnsw`` index per
    graph of ``graphs`` ((m, ef_construction); default the code's, ``mapping.HNSW_M`` /
    ``HNSW_EF_CONSTRUCTION``), searched by the k-NN query with its efficient ``filter`` (workspace
    and project inside the query) for each ``k`` of ``ks`` (default ``query.KNN_K``) — and the
    top-10 overlap of each against exact, with each query's latency (wall, as the client sees it,
    and OpenSearch's own ``took``). The overlap is given over every top-10 slot (``overlap``) and
    over the slots exact search fills above recall's similarity floor (``overlap_at_floor``: what
    ``recall`` can return). Half the documents belong to another project, so the filter has work
    to do. The mappings are the code's own (``mapping.vector_mapping``)."""
    from mnemo.backends.aws.mapping import HNSW_EF_CONSTRUCTION, HNSW_M, KNN_K, vector_mapping
    from opensearchpy import OpenSearch, helpers

    from tests.support.opensearch_node import OpenSearchNode, available, fetch

    ok, reason = available()
    if not ok:
        return reason
    fetch()
    graphs = list(graphs or [(HNSW_M, HNSW_EF_CONSTRUCTION)])
    ks = list(ks or [KNN_K])
    vectors = VectorSet("clustered", size)
    queries = [vectors.query(q) for _, q in corpus.queries(SEED, n_queries)]
    props = {"workspace_id": {"type": "keyword"}, "project_id": {"type": "keyword"}}
    settings = {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"}
    out: dict[str, Any] = {"size": size, "node": "local test node (OpenSearch 2.19.1 + k-NN, 512 MB heap)"}
    node = OpenSearchNode().start()
    try:
        client = OpenSearch(node.url, timeout=120)
        indexes = {"exact": {"settings": settings, "mappings": {"properties": {**props, "v": vector_mapping(DIM)}}}}
        for m, ef_construction in graphs:
            field = vector_mapping(DIM, "hnsw")
            field["method"]["parameters"] = {"m": m, "ef_construction": ef_construction}
            indexes[f"hnsw-m{m}-ef{ef_construction}"] = {
                "settings": {**settings, "index.knn": True},
                "mappings": {"properties": {**props, "v": field}},
            }
        load: dict[str, float] = {}
        for index, body in indexes.items():
            started = time.perf_counter()
            client.indices.create(index=index, body=body)
            actions = (
                {
                    "_index": index,
                    "_id": str(i),
                    "_routing": f"p{i % 2}",
                    "_source": {"workspace_id": "w", "project_id": f"p{i % 2}", "v": vectors.memories[i].tolist()},
                }
                for i in range(size)
            )
            helpers.bulk(client, actions, chunk_size=500, request_timeout=300)
            client.indices.put_settings(index=index, body={"refresh_interval": "1s"})
            client.indices.refresh(index=index)
            client.indices.forcemerge(index=index, max_num_segments=1, request_timeout=1800)
            load[index] = round(time.perf_counter() - started, 1)
            print(json.dumps({"loaded": index, "s": load[index]}), flush=True)
        out["load_s"] = load
        scope = [{"term": {"workspace_id": "w"}}, {"term": {"project_id": "p0"}}]

        def exact(q: list[float]) -> dict[str, Any]:
            script = {"source": "cosineSimilarity(params.q, doc['v']) + 1.0", "params": {"q": q}}
            body = {"size": TOP, "query": {"script_score": {"query": {"bool": {"filter": scope}}, "script": script}}}
            return client.search(index="exact", body=body, routing="p0")

        def approximate(index: str, k: int) -> Any:
            def search(q: list[float]) -> dict[str, Any]:
                knn = {"v": {"vector": q, "k": k, "filter": {"bool": {"filter": scope}}}}
                return client.search(index=index, body={"size": TOP, "query": {"knn": knn}}, routing="p0")

            return search

        searches = {"exact": exact}
        for index in indexes:
            if index != "exact":
                searches.update({f"{index}-k{k}": approximate(index, k) for k in ks})
        for q in queries[:20]:
            for search in searches.values():
                search(q)
        timings: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in searches}
        shares: dict[str, list[float]] = {name: [] for name in searches if name != "exact"}
        floor_shares: dict[str, list[float]] = {name: [] for name in shares}
        for q in queries:
            answers = {}
            for name, search in searches.items():
                started = time.perf_counter()
                answers[name] = search(q)
                timings[name][0].append(time.perf_counter() - started)
                timings[name][1].append(answers[name]["took"] / 1000)
            exact_hits = answers["exact"]["hits"]["hits"]
            want = [h["_id"] for h in exact_hits]
            # script_score's score is cosine + 1
            above = [h["_id"] for h in exact_hits if h["_score"] - 1.0 >= FLOOR]
            for name in shares:
                got = {h["_id"] for h in answers[name]["hits"]["hits"]}
                shares[name].append(sum(1 for i in want if i in got) / max(1, len(want)))
                if above:
                    floor_shares[name].append(sum(1 for i in above if i in got) / len(above))
        for name, (wall, took) in timings.items():
            out[name] = {"wall": summary_ms(wall), "took": summary_ms(took)}
        for name in shares:
            out[name]["overlap"] = _overlap(shares[name])
            out[name]["overlap_at_floor"] = _overlap(floor_shares[name])
    finally:
        node.stop()
    return out


def _overlap(shares: list[float]) -> dict[str, Any]:
    return {
        "queries": len(shares),
        "mean": round(sum(shares) / max(1, len(shares)), 4),
        "worst": min(shares, default=float("nan")),
        "below_1": sum(1 for s in shares if s < 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--backends", default="sqlite", help="sqlite, half (the vector half alone), node")
    parser.add_argument("--node-size", type=int, default=None, help="documents on the node (default: --size)")
    parser.add_argument("--ann-min", type=int, default=None, help="the SQLite graph's threshold (default: the code's)")
    parser.add_argument(
        "--graphs", default=None, help="node: HNSW graphs to compare, m:ef_construction,… (default: the code's)"
    )
    parser.add_argument("--k", default=None, help="node: the knn query's k values to compare, comma-separated")
    parser.add_argument("--out", type=Path, default=None, help="write the figures (JSON) here too")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"size": args.size, "dim": DIM, "queries": args.queries}
    with tempfile.TemporaryDirectory(prefix="bench-vectors-") as tmp:
        for name in args.backends.split(","):
            if name == "sqlite":
                result[name] = run_sqlite(Path(tmp), args.size, args.queries, args.ann_min)
            elif name == "half":
                result[name] = run_vector_half(args.size, args.queries)
            else:
                graphs = [tuple(int(x) for x in g.split(":")) for g in args.graphs.split(",")] if args.graphs else None
                ks = [int(k) for k in args.k.split(",")] if args.k else None
                result[name] = run_node(args.node_size or args.size, args.queries, graphs, ks)  # type: ignore[arg-type]
            print(json.dumps({name: result[name]}, indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
