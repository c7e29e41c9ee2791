"""search_memory, recall and recall_context (docs/contract.md §3): the retrieval family.

Everything here is written against the ports, so every backend behaves the same: the index only
finds and orders candidates (``IndexQuery`` mode ``all`` or ``any``, with the filters); which
terms matched where, the forgiving re-ranking, the ``no_match`` diagnosis, deduplication and
token packing are computed in Python from the records with :mod:`mnemo.text`. See
docs/retrieval.md for the rules as a user sees them.

Modules by job, recall's pipeline in order: ``candidates`` (both halves' pools), ``fusion`` (the
rule that ranks them as one, passed in by the service), ``explain`` (results and their reasons);
beside them ``matching`` (a hit against the query), ``diagnosis`` (``no_match``), ``packing``
(recall_context's block) and ``tools`` (the three tools, each the pipeline's entry).
"""

from mnemo.service.retrieval.tools import recall, recall_context, search_memory

__all__ = ["recall", "recall_context", "search_memory"]
