"""The vector search of the embedded backend: brute-force cosine over a project's vectors, held in
memory per process as one float32 matrix (numpy), refreshed from the ``memories`` table by the
project's ``vector_stamps``: rows written since the cache last looked are read again, and the
whole matrix only when many vectors have gone since (removals leave stale rows, which the
candidate read skips, so they cost a little memory, never a wrong answer).

A query reads one stamp row, multiplies, then reads the best candidates' records with the filter
applied in SQL, a chunk at a time, until ``limit`` pass or the cosine drops below ``min_score``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mnemo.backends.sqlite.db import Database, record_of
from mnemo.backends.sqlite.filters import filter_sql
from mnemo.ports import IndexHit, VectorQuery

#: candidates read per round trip after the first
CHUNK = 256
#: vectors removed since the last full load, beyond which the matrix is rebuilt (else stale rows
#: stay, skipped by the candidate read)
STALE_SHARE = 0.1


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


class VectorSearch:
    def __init__(self, db: Database) -> None:
        self.db = db
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
        scores = matrix.rows[: matrix.n] @ (q / norm)
        where, params = filter_sql(query.filter)
        scoped = (
            " FROM json_each(?) AS c CROSS JOIN memories m ON m.seq = c.value"
            f" WHERE m.workspace_id = ? AND m.project_id = ? AND m.vec_model = ? AND {where}"
        )
        scope = (query.scope.workspace_id, query.scope.project_id, query.model, *params)
        hits: list[IndexHit] = []
        size = max(query.limit * 4, 32)
        for chunk in _best_first(scores, matrix.docs[: matrix.n], query.min_score, size):
            wanted = matrix.docs[chunk].tolist()
            # which pass the filter (numbers only), then the records of the best of those
            passing = {seq for (seq,) in conn.execute("SELECT m.seq" + scoped, (json.dumps(wanted), *scope))}
            best = [(doc, score) for doc, score in zip(wanted, scores[chunk].tolist(), strict=True) if doc in passing]
            while best and len(hits) < query.limit:
                now, best = best[: query.limit - len(hits)], best[query.limit - len(hits) :]
                found = {
                    row["seq"]: row
                    for row in conn.execute("SELECT m.seq, m.body" + scoped, (json.dumps([d for d, _ in now]), *scope))
                }
                # a record gone (or changed) since the first read is skipped, as one gone before it
                hits.extend(IndexHit(record_of(found[doc]), score) for doc, score in now if doc in found)
            if len(hits) == query.limit:
                break
        return hits

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
            return matrix

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
