"""memory_add's ``similar``: the memories of the project a new memory may repeat or contradict, so
the agent can choose to supersede them (docs/contract.md, memory_add). Nothing is changed here.

By words, through the index: the new content's meaningful terms (``text.query_terms``) as an
``any`` query with the caller's visibility filter (superseded memories left out, as the searches
leave them); a candidate's similarity is the share of the new memory's meaningful stems (those of
its first ``MAX_QUERY_TERMS`` distinct terms, stop words left out) that it holds, and those at ``THRESHOLD`` or
more are listed, at most ``MAX_SIMILAR``, most similar first. Words, not the embedder's meaning:
with the local transformer a memory's vector is made after the answer, so the new one has none
yet; on labelled pairs the static model's cosine did worse than the words, and its mean with them
only a little better than this share, for a second model and its vectors on every add
(bench/similar.py: bench/results/similar.md, with the cost on memory_add). The same on both
backends: the index's ``any`` query and a function of the two contents. Best effort: the memory
is stored before the index is asked, so an index that cannot answer (OpenSearch down or refusing
the function) costs the add nothing and lists nothing.
"""

from __future__ import annotations

from mnemo import text
from mnemo.errors import IndexUnavailable
from mnemo.models.records import MemoryRecord
from mnemo.models.tools import SimilarMemory
from mnemo.observability import logger
from mnemo.ports import IndexQuery
from mnemo.service.context import CallContext

#: the most memories ``similar`` lists
MAX_SIMILAR = 3
#: a memory is listed at this similarity (share of the new memory's stems it holds) or more: the
#: best F1 on the labelled pairs of bench/data/similar.json, and on each half of them
#: (bench/results/similar.md)
THRESHOLD = 0.35
#: the index's best matches scored (the new memory and exact duplicates among them are skipped)
CANDIDATES = 10


def stems(content: str) -> frozenset[str]:
    """The distinct stems of the content's meaningful terms (all its terms when it has only stop
    words)."""
    analysed = text.terms(content)
    meaningful = [t for t in analysed if not text.is_stop_word(t)] or analysed
    return frozenset(text.stems(meaningful))


def similarity(new: frozenset[str], old: frozenset[str]) -> float:
    """The share of ``new``'s stems that ``old`` holds: 1 when it holds them all, 0 for none."""
    return len(new & old) / len(new) if new else 0.0


def near(ctx: CallContext, record: MemoryRecord) -> list[SimilarMemory]:
    """The project's memories visible to the caller most similar to ``record`` (just stored), at
    ``THRESHOLD`` or more, at most ``MAX_SIMILAR``: never ``record`` itself, nor a memory it
    duplicates exactly (same content, kind, path and team: what dedup would have returned)."""
    terms = text.query_terms(record.content)
    if not terms:
        return []
    try:
        hits = ctx.ports.index.search(IndexQuery(ctx.scope, terms, "any", ctx.memory_filter(), CANDIDATES + 1))
    except IndexUnavailable as exc:
        # the memory stands (it is stored, and the stream or cleanup indexes it): only the hint is lost
        logger.warning("similar skipped: the index is unavailable; the memory is stored", extra={"cause": exc.cause})
        return []
    # the new memory's stems: those of its query terms (its first MAX_QUERY_TERMS distinct ones)
    stem_of = {term.text: term.stem for term in terms}
    new = frozenset(stem_of.values())
    same = text.fingerprint(record.content, record.kind, record.path, record.team_id)
    scored: list[tuple[float, MemoryRecord]] = []
    for hit in hits:
        old = hit.record
        if old.id == record.id or text.fingerprint(old.content, old.kind, old.path, old.team_id) == same:
            continue
        # the index says which terms the candidate matched (by stem): no need to analyse it again
        matched = hit.matched
        held = stems(old.content) if matched is None else frozenset(stem_of[t] for t in matched if t in stem_of)
        score = similarity(new, held)
        if score >= THRESHOLD:
            scored.append((score, old))
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))
    return [
        SimilarMemory(reference=old.id, similarity=round(score, 3), content=old.content)
        for score, old in scored[:MAX_SIMILAR]
    ]
