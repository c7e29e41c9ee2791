"""The vector search of the embedded backend: cosine over a project's vectors, held in memory per
process as one float32 matrix (numpy), refreshed from the ``memories`` table by the project's
``vector_stamps``: rows written since the cache last looked are read again, and the whole matrix
only when many vectors have gone since (removals leave stale rows, which the candidate read skips,
so they cost a little memory, never a wrong answer).

A query reads one stamp row, multiplies, then reads the best candidates' records with the filter
applied in SQL, a chunk at a time, until ``limit`` pass or the cosine drops below ``min_score``.

**Approximate search where it pays.** The product is linear in the project's size
(bench/vectors.py measures it). A project of ``ann_min`` vectors or more also gets an HNSW
graph (usearch, int8-quantised, keys = document numbers), built on a background thread the first
time the project is searched (exact search answers meanwhile) and kept up to date as rows are
absorbed. A query then asks the graph for ``max(2 x limit, 128)`` neighbours, scores them exactly
from the matrix and reads them through the same filtered chunks; it falls back to the exact
product when those leave fewer than ``limit`` hits while every neighbour still clears
``min_score`` (a selective filter: more may lie beyond the neighbours), so a filter never loses
what exact search finds — only the graph's approximation of the nearest can (measured ≤ 1 % of the
top 10, bench/vectors.py).

**Graphs kept on disk.** Building a graph costs about a minute and a half of CPU per 100,000 vectors,
once per process — and ``mnemo serve`` runs several worker processes. So a built graph is saved
beside the database (``<database>.ann/<project>/<model>-<dim>-<stamp>-<removed>.usearch``: one file,
written under a temporary name and renamed, its freshness in its name), and a process that needs a
graph loads the newest file instead of building one when it is of the same model and dimension and
not too far behind: it then adds the vectors written since the file's stamp and drops the documents
gone since. Older, corrupt or far-behind files are only a cost (a build), never a wrong answer;
the folder is a cache, safe to delete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.backends.sqlite.db import Database, record_of
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.ports import IndexHit, VectorQuery

#: candidates read per round trip after the first
CHUNK = 256
#: vectors removed since the last full load, beyond which the matrix is rebuilt (else stale rows
#: stay, skipped by the candidate read)
STALE_SHARE = 0.1
#: a project's vectors from which an HNSW graph serves its queries (None: exact always); below,
#: the exact product costs ≤ 3 ms and a graph would only cost its build
ANN_MIN = 20_000
#: neighbours asked of the graph: at least this many, and 2 x ``limit``
ANN_FETCH = 128
#: the graph's shape (usearch): edges per node, and the candidate lists of a build and a search
ANN_CONNECTIVITY = 16
ANN_EXPANSION_ADD = 64
ANN_EXPANSION_SEARCH = 128
#: how far behind the database a saved graph may be to be loaded rather than rebuilt: vectors
#: written (or removed) since it was saved, at most this share of the project's and ``ANN_BEHIND``
ANN_BEHIND_SHARE = 0.1
ANN_BEHIND = 5_000


@dataclass
class _Matrix:
    model: str
    dim: int
    stamp: int
    removed: int
    docs: Any  # numpy int64 [n]
    rows: Any  # numpy float32 [capacity, dim]; the first n are live
    n: int = 0
    at: dict[int, int] = field(default_factory=dict)
    #: the HNSW graph (usearch ``Index``) once built; keys are document numbers
    graph: Any = None
    #: a graph is being built: the documents absorbed meanwhile, added to it when it is done
    pending: list[int] | None = None
    #: where the graph came from: "built" here, or "loaded" from a saved file
    graph_source: str | None = None


class VectorSearch:
    def __init__(self, db: Database, *, ann_min: int | None = ANN_MIN, ann_dir: str | Path | None = None) -> None:
        self.db = db
        self.ann_min = ann_min
        #: where graphs are saved (None: nowhere); by default a folder beside the database file
        self.ann_dir = Path(ann_dir) if ann_dir else None if db.path == ":memory:" else Path(db.path + ".ann")
        self._lock = threading.Lock()
        self._cache: dict[str, _Matrix] = {}

    def similar(self, query: VectorQuery) -> list[IndexHit]:
        import numpy as np

        conn = self.db.conn()
        matrix = self._matrix(conn, query.scope.project_id, query.model, len(query.vector))
        if matrix is None or matrix.n == 0 or query.limit <= 0:
            return []
        q = np.asarray(query.vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0:
            return []
        q = q / norm
        where, params = filter_sql(query.filter)
        scoped = (
            " FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value"
            f" WHERE m.workspace_id = ? AND m.project_id = ? AND m.vec_model = ? AND {where}"
        )
        scope = (query.scope.workspace_id, query.scope.project_id, query.model, *params)
        size = max(query.limit * 4, 32)
        if matrix.graph is not None:
            found = self._approximate(conn, matrix, q, query, scoped, scope)
            if found is not None:
                return found
        scores = matrix.rows[: matrix.n] @ q
        docs = matrix.docs[: matrix.n]
        hits: list[IndexHit] = []
        first = next(_best_first(scores, docs, query.min_score, size), None)
        if first is None or _take(conn, scoped, scope, docs[first].tolist(), scores[first].tolist(), hits, query.limit):
            return hits
        # The filter passed too few of the nearest: which rows pass it at all, read once, so only
        # those are read after (slice after slice of candidates cost a query per ~30 rows: a time
        # window or a tag that few memories hold read every row, 40 ms at 10,000 memories,
        # bench/results/supersession.md)
        passing = np.fromiter(
            (
                row[0]
                for row in conn.execute(
                    "SELECT m.seq FROM memories m WHERE m.workspace_id = ? AND m.project_id = ? AND m.vec_model = ?"
                    f" AND {where}",
                    scope,
                )
            ),
            np.int64,
        )
        keep = np.isin(docs, passing)
        keep[first] = False
        rest = np.where(keep, scores, -np.inf)
        for chunk in _best_first(rest, docs, query.min_score, size):
            if _take(conn, scoped, scope, docs[chunk].tolist(), scores[chunk].tolist(), hits, query.limit):
                break
        return hits

    def _approximate(
        self, conn: sqlite3.Connection, matrix: _Matrix, q: Any, query: VectorQuery, scoped: str, scope: tuple
    ) -> list[IndexHit] | None:
        """The hits among the graph's nearest neighbours, scored exactly; None when exact search
        must answer (fewer than ``limit`` passed while every neighbour clears ``min_score``)."""
        import numpy as np

        graph = matrix.graph
        count = min(max(2 * query.limit, ANN_FETCH), len(graph))
        keys = graph.search(q, count, threads=1).keys
        rows = np.fromiter((matrix.at[int(k)] for k in keys), np.int64, len(keys))
        scores = matrix.rows[rows] @ q
        docs = matrix.docs[rows]
        keep = scores >= query.min_score
        order = np.lexsort((-docs[keep], -scores[keep]))
        hits: list[IndexHit] = []
        if _take(conn, scoped, scope, docs[keep][order].tolist(), scores[keep][order].tolist(), hits, query.limit):
            return hits
        if len(keys) == len(graph) or not keep.all():
            return hits  # every vector was a neighbour, or the neighbours ran below min_score
        return None

    def ann_ready(self, project_id: str) -> bool:
        """Whether the project's cached vectors are searched through a graph (benches wait on it)."""
        return self.ann_source(project_id) is not None

    def ann_source(self, project_id: str) -> str | None:
        """Where the project's graph came from ("built", "loaded"), None while it has none."""
        with self._lock:
            cached = self._cache.get(project_id)
            return cached.graph_source if cached is not None and cached.graph is not None else None

    def _matrix(self, conn: sqlite3.Connection, project_id: str, model: str, dim: int) -> _Matrix | None:
        import numpy as np

        stamp_row = conn.execute(
            "SELECT stamp, removed FROM vector_stamps WHERE project_id = ?", (project_id,)
        ).fetchone()
        if stamp_row is None:
            return None
        stamp, removed = stamp_row
        with self._lock:
            cached = self._cache.get(project_id)
            if cached is not None and cached.model == model and cached.dim == dim and cached.stamp == stamp:
                return cached
            stale = cached is None or cached.model != model or cached.dim != dim
            if not stale and cached is not None:
                stale = removed - cached.removed > max(1000, STALE_SHARE * cached.n)
            if stale:
                rows = conn.execute(
                    "SELECT seq, vec FROM memories WHERE project_id = ? AND vec_model = ?", (project_id, model)
                ).fetchall()
                matrix = _Matrix(model, dim, stamp, removed, np.zeros(0, np.int64), np.zeros((0, dim), np.float32))
            else:
                assert cached is not None
                matrix = cached
                rows = conn.execute(
                    "SELECT seq, vec FROM memories WHERE project_id = ? AND vec_model = ? AND vec_stamp > ?",
                    (project_id, model, matrix.stamp),
                ).fetchall()
                matrix.stamp = stamp
            self._absorb(matrix, rows)
            self._cache[project_id] = matrix
            if self._wants_graph(matrix):
                matrix.pending = []
                docs, vectors = matrix.docs[: matrix.n].copy(), matrix.rows[: matrix.n].copy()
                args = (project_id, matrix, docs, vectors, stamp, removed)
                threading.Thread(target=self._build, args=args, daemon=True).start()
            return matrix

    def _wants_graph(self, matrix: _Matrix) -> bool:
        """Whether to start building the matrix's graph now (under the lock)."""
        if self.ann_min is None or matrix.n < self.ann_min or matrix.graph is not None or matrix.pending is not None:
            return False
        return _usearch_available()

    def _build(self, project_id: str, matrix: _Matrix, docs: Any, vectors: Any, stamp: int, removed: int) -> None:
        """Load the project's saved graph or build one from a snapshot of the matrix (outside the
        lock: seconds per 100,000 vectors), then add what was absorbed meanwhile, and publish it."""
        from usearch.index import Index

        graph, patched = self._load(project_id, matrix, docs, vectors, stamp, removed)
        source = "loaded"
        if patched:  # the file brought up to date: the next process patches less, and deleted
            self._save(project_id, matrix, graph, stamp, removed)  # memories' vectors leave the disk
        if graph is None:
            graph = Index(
                ndim=matrix.dim,
                metric="cos",
                dtype="i8",
                connectivity=ANN_CONNECTIVITY,
                expansion_add=ANN_EXPANSION_ADD,
                expansion_search=ANN_EXPANSION_SEARCH,
            )
            graph.add(docs, vectors, threads=1)
            source = "built"
            self._save(project_id, matrix, graph, stamp, removed)
        with self._lock:
            for seq in dict.fromkeys(matrix.pending or ()):
                _graph_put(graph, seq, matrix.rows[matrix.at[seq]])
            matrix.graph, matrix.pending, matrix.graph_source = graph, None, source

    def _files(self, project_id: str, model: str, dim: int) -> list[tuple[int, int, Path]]:
        """The project's saved graphs of this model and dimension: (stamp, removed, path), newest last."""
        folder = self.ann_dir / project_id if self.ann_dir else None
        if folder is None or not folder.is_dir():
            return []
        prefix = f"{_model_key(model)}-{dim}-"
        found = []
        for path in folder.glob(prefix + "*.usearch"):
            stamp, _, removed = path.name[len(prefix) : -len(".usearch")].partition("-")
            if stamp.isdigit() and removed.isdigit():
                found.append((int(stamp), int(removed), path))
        return sorted(found)

    def _load(
        self, project_id: str, matrix: _Matrix, docs: Any, vectors: Any, stamp: int, removed: int
    ) -> tuple[Any, bool]:
        """The newest saved graph brought up to the snapshot (``docs``/``vectors`` at ``stamp``),
        or None when there is none usable (then the caller builds one); and whether it changed."""
        import numpy as np
        from usearch.index import Index

        usable = [f for f in self._files(project_id, matrix.model, matrix.dim) if f[0] <= stamp and f[1] <= removed]
        if not usable:
            return None, False
        saved_stamp, saved_removed, path = usable[-1]
        conn = self.db.conn()
        changed = [
            seq
            for (seq,) in conn.execute(
                "SELECT seq FROM memories WHERE project_id = ? AND vec_model = ? AND vec_stamp > ? AND vec_stamp <= ?",
                (project_id, matrix.model, saved_stamp, stamp),
            )
        ]
        behind = len(changed) + removed - saved_removed
        if behind > min(ANN_BEHIND, ANN_BEHIND_SHARE * len(docs)):
            return None, False  # cheaper, and better connected, to build again
        try:
            graph = Index.restore(str(path), expansion_add=ANN_EXPANSION_ADD, expansion_search=ANN_EXPANSION_SEARCH)
        except (OSError, ValueError, RuntimeError):
            return None, False  # a damaged or foreign file costs a build, nothing else
        if graph is None or graph.ndim != matrix.dim:
            return None, False
        gone = np.setdiff1d(np.asarray(graph.keys, dtype=np.int64), docs, assume_unique=True)
        if gone.size:
            graph.remove(gone)
        at = {int(seq): i for i, seq in enumerate(docs)}
        for seq in changed:
            if seq in at:
                _graph_put(graph, seq, vectors[at[seq]])
        return graph, bool(gone.size or changed)

    def _save(self, project_id: str, matrix: _Matrix, graph: Any, stamp: int, removed: int) -> None:
        """Save a freshly built graph for the next process (best effort: a full disk or a read-only
        folder only means the next process builds its own), and drop the older files."""
        if self.ann_dir is None:
            return
        folder = self.ann_dir / project_id
        name = f"{_model_key(matrix.model)}-{matrix.dim}-{stamp}-{removed}.usearch"
        temporary = folder / f".{name}.{os.getpid()}.{threading.get_ident()}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            graph.save(str(temporary))
            os.replace(temporary, folder / name)
            for _, _, older in self._files(project_id, matrix.model, matrix.dim)[:-1]:
                older.unlink(missing_ok=True)
        except (OSError, RuntimeError):
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)

    @staticmethod
    def _absorb(matrix: _Matrix, rows: list[sqlite3.Row]) -> None:
        import numpy as np

        fresh = [(seq, vec) for seq, vec in rows if len(vec) == 4 * matrix.dim]
        new = [seq for seq, _ in fresh if seq not in matrix.at]
        need = matrix.n + len(new)
        if need > matrix.rows.shape[0]:
            capacity = max(need, 2 * matrix.rows.shape[0], 64)
            grown = np.zeros((capacity, matrix.dim), np.float32)
            grown[: matrix.n] = matrix.rows[: matrix.n]
            docs = np.zeros(capacity, np.int64)
            docs[: matrix.n] = matrix.docs[: matrix.n]
            matrix.rows, matrix.docs = grown, docs
        for seq, vec in fresh:
            at = matrix.at.get(seq)
            if at is None:
                at = matrix.at[seq] = matrix.n
                matrix.docs[at] = seq
                matrix.n += 1
            matrix.rows[at] = np.frombuffer(vec, dtype="<f4")
            if matrix.graph is not None:
                _graph_put(matrix.graph, seq, matrix.rows[at])
            elif matrix.pending is not None:
                matrix.pending.append(seq)


def _graph_put(graph: Any, seq: int, vector: Any) -> None:
    """Add (or replace) one document's vector in the graph."""
    if seq in graph:
        graph.remove(seq)
    graph.add(seq, vector, threads=1)


def _model_key(model: str) -> str:
    """A file-name-safe key of a model's name."""
    return hashlib.sha256(model.encode()).hexdigest()[:16]


def _usearch_available() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:  # an install without it searches exactly, as before
        return False
    return True


def _take(
    conn: sqlite3.Connection,
    scoped: str,
    scope: tuple,
    wanted: list[int],
    scores: list[float],
    hits: list[IndexHit],
    limit: int,
) -> bool:
    """Add to ``hits`` the records of ``wanted`` (best first, with their ``scores``) that pass the
    filter, until ``limit``; whether ``limit`` is reached.

    One read per slice: the records of the next ``need + need / 4 + 8`` candidates that pass the
    filter (``need``: the hits still missing), so a filter that passes most memories costs one
    read of a few more rows than asked for. (It was a read of every candidate's number through the
    filter — 4 x ``limit`` of them — then one of the best passing ones' records: recall spent
    about 2 ms of CPU there at 10,000 memories, bench/results/2026-12-03-callsplit-after-1.md.)"""
    scored = list(zip(wanted, scores, strict=True))
    start = 0
    while start < len(scored) and len(hits) < limit:
        need = limit - len(hits)
        part = scored[start : start + need + need // 4 + 8]
        start += len(part)
        found = {
            row["seq"]: row
            for row in conn.execute("SELECT m.seq, m.body" + scoped, (json.dumps([d for d, _ in part]), *scope))
        }
        for doc, score in part:
            if doc in found:
                hits.append(IndexHit(record_of(found[doc]), score))
                if len(hits) == limit:
                    break
    return len(hits) == limit


def _best_first(scores: Any, docs: Any, min_score: float, size: int) -> Iterator[Any]:
    """Row numbers at ``min_score`` or more, best first and equal scores newest first (a larger
    document number is a later write), ``size`` in the first chunk and ``CHUNK`` in each after.
    Only what is asked for is ordered: each chunk is the rows scoring at least the chunk's last
    score (``np.partition``), every row tied with it included, so the order is exact."""
    import numpy as np

    left = np.flatnonzero(scores >= min_score)
    while left.size:
        if left.size > size:
            kth = np.partition(scores[left], left.size - size)[left.size - size]
            top = scores[left] >= kth
            chunk, left = left[top], left[~top]
        else:
            chunk, left = left, left[:0]
        yield chunk[np.lexsort((-docs[chunk], -scores[chunk]))]
        size = CHUNK
