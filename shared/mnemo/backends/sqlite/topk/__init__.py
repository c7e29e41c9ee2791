"""The top-k engine of the SQLite index, Python (numpy for the bounds of many documents at once)
over a :class:`PostingSource`: ``engine`` (the
threshold algorithm's strategy and its ``Budgets``, ``top_k``), ``search`` (one search's
thresholds and judging), ``reads`` (its read state), ``verdicts`` (its judged state) and
``source`` (what it works on). The names the index and the tests use are here."""

from mnemo.backends.sqlite.topk.engine import (
    COMMON_SHARE,
    DRIVE,
    DRIVE_AFTER,
    FEW,
    MAX_LOOKUPS,
    MAX_SIZE,
    MAX_TOTAL,
    MIN_SIZE,
    Budgets,
    top_k,
)
from mnemo.backends.sqlite.topk.source import Hit, PostingSource, Scored, Term

__all__ = [
    "COMMON_SHARE",
    "DRIVE",
    "DRIVE_AFTER",
    "FEW",
    "MAX_LOOKUPS",
    "MAX_SIZE",
    "MAX_TOTAL",
    "MIN_SIZE",
    "Budgets",
    "Hit",
    "PostingSource",
    "Scored",
    "Term",
    "top_k",
]
