"""The SQLite index's top-k engine (``backends/sqlite/topk/``) on its own: pure Python over a
posting source, here lists in memory. Whatever the round sizes and budgets, an exact search
answers what scoring every document answers; the best-effort ``any`` search stays within its
budgets of reads and lookups."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from mnemo.backends.sqlite.topk import Budgets, Term, top_k
from mnemo.backends.sqlite.topk import search as search_module
from mnemo.backends.sqlite.topk.search import Search

CEILING = 30_000


@dataclass
class ListPostings:
    """A posting source over lists: ``lists`` key → {doc: impact}; ``passes`` the documents whose
    records pass the filter, with their ``updated_at``. Counts what the engine reads."""

    lists: dict[int, dict[int, int]]
    passes: dict[int, str]
    postings_read: int = 0
    looked_up: set[int] = field(default_factory=set)

    def read(self, key: int, offset: int, count: int) -> list[tuple[int, int]]:
        ordered = sorted(((doc, impact) for doc, impact in self.lists.get(key, {}).items()), key=lambda p: (p[1], p[0]))
        rows = list(reversed(ordered))[offset : offset + count]
        self.postings_read += len(rows)
        return rows

    def _best(self, doc: int, keys: Sequence[int]) -> int | None:
        held = [self.lists[k][doc] for k in keys if doc in self.lists.get(k, {})]
        return max(held) if held else None

    def cooccurring(
        self, driver: Sequence[int], joined: Sequence[Sequence[int]], required: int, *, every: bool
    ) -> Iterable[Sequence[Any]]:
        for key in driver:
            for doc, impact in self.lists.get(key, {}).items():
                found = [self._best(doc, keys) for keys in joined]
                needed = found[:required]
                if (every and all(f is not None for f in needed)) or (not every and any(f is not None for f in needed)):
                    yield (doc, impact, *found)

    def filtered(self, docs: Sequence[int]) -> Iterable[tuple[int, str]]:
        return [(doc, self.passes[doc]) for doc in docs if doc in self.passes]

    def impacts(
        self, docs: Sequence[int], terms: Sequence[Sequence[int]], *, every: bool
    ) -> Iterable[tuple[int, str, int | None, int | None]]:
        self.looked_up.update(docs)
        keys = list(dict.fromkeys(key for term in terms for key in term))
        for doc in docs:
            if doc not in self.passes:
                continue
            held = [(key, self.lists[key][doc]) for key in keys if doc in self.lists.get(key, {})]
            for key, impact in held or [(None, None)]:
                yield (doc, self.passes[doc], key, impact)

    def passing_at_most(self, most: int) -> int:
        return min(len(self.passes), most)

    def matching(self, keys: Sequence[int]) -> Iterable[tuple[int, str, int, int]]:
        for key in keys:
            for doc, impact in self.lists.get(key, {}).items():
                if doc in self.passes:
                    yield (doc, self.passes[doc], key, impact)


def _corpus(seed: int, docs: int = 300, keys: int = 6) -> tuple[ListPostings, list[Term]]:
    """Terms of one key each (the last two share a third key, as a prefix does), each held by a
    random share of the documents with random impacts; a third of the documents fail the filter."""
    rng = random.Random(seed)
    lists: dict[int, dict[int, int]] = {}
    for key in range(keys + 1):
        share = rng.choice([0.02, 0.1, 0.4, 0.9])
        lists[key] = {doc: rng.randint(1, 22_000) for doc in range(docs) if rng.random() < share}
    passes = {doc: f"2026-01-01T00:{doc // 60:02d}:{doc % 60:02d}" for doc in range(docs) if rng.random() > 0.33}
    terms = [Term(f"t{k}", {k: len(lists[k])}) for k in range(keys - 2)]
    terms += [Term(f"t{k}", {k: len(lists[k]), keys: len(lists[keys])}) for k in (keys - 2, keys - 1)]
    for term in terms:
        term.idf = 1.0 + random.Random(seed + len(term.text)).random()
    return ListPostings(lists, passes), terms


def reference(source: ListPostings, terms: list[Term], mode: str, limit: int) -> list[tuple[int, float]]:
    """Every passing document scored: per term its best impact among the term's keys × the IDF."""
    scored = []
    for doc, updated_at in source.passes.items():
        impacts = [source._best(doc, list(t.keys)) or 0 for t in terms]
        if (mode == "all" and not all(impacts)) or not any(impacts):
            continue
        scored.append((sum(t.idf * i for t, i in zip(terms, impacts, strict=True)), updated_at, doc))
    scored.sort(reverse=True)
    return [(doc, round(score, 6)) for score, _, doc in scored[:limit]]


#: (mode, budgets) under which a search is exact: ``all`` always (past ``max_size`` it reads its
#: rarest term to the end); ``any`` (recall, best effort) when its budgets never run out
EXACT = {
    "all-small-rounds": ("all", Budgets(min_size=2, max_size=8)),  # many rounds, then the fallbacks
    "all-no-drive": ("all", Budgets(min_size=2, max_size=64, drive=0)),
    "all-defaults": ("all", Budgets()),
    "any-small-rounds": ("any", Budgets(min_size=2, max_size=10**6, max_total=10**9, max_lookups=10**9)),
    "any-no-co-occurrence-lookups": (
        "any",
        Budgets(min_size=4, max_size=10**6, max_total=10**9, max_lookups=10**9, drive=0),
    ),
    "any-default-sizes": ("any", Budgets(max_size=10**6, max_total=10**9, max_lookups=10**9)),
}


@pytest.mark.parametrize("bounds", ["loop", "arrays"])
@pytest.mark.parametrize("case", EXACT)
@pytest.mark.parametrize("seed", range(12))
def test_an_exact_search_answers_what_scoring_every_document_answers(
    seed: int, case: str, bounds: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mode, budgets = EXACT[case]
    # (read documents bounded one at a time, or over arrays, whatever their number)
    monkeypatch.setattr(search_module, "ARRAYS_FROM", 10**9 if bounds == "loop" else 0)
    # Given postings of six terms over 300 documents, a third of which fail the filter
    source, terms = _corpus(seed)
    for n in (1, 2, 3, 6):
        for limit in (1, 5, 20):
            # When the engine answers a query of the first n terms
            hits = top_k(source, terms[:n], mode=mode, limit=limit, docs=300, ceiling=CEILING, budgets=budgets)
            # Then it is the reference's answer: same documents, same scores, same order
            assert [(doc, round(score, 6)) for doc, score, _ in hits] == reference(source, terms[:n], mode, limit)


def test_each_hit_names_the_terms_it_holds() -> None:
    # Given a document holding the first term only and one holding both
    source = ListPostings({0: {1: 100, 2: 50}, 1: {2: 70}}, {1: "a", 2: "b"})
    terms = [Term("alpha", {0: 2}, 1.0), Term("beta", {1: 1}, 2.0)]
    # When they are searched with either term
    hits = top_k(source, terms, mode="any", limit=5, docs=2, ceiling=CEILING)
    # Then each hit names the terms it holds, best score first
    assert hits == [(2, 50 + 2 * 70, ("alpha", "beta")), (1, 100.0, ("alpha",))]


def test_terms_no_document_holds_answer_nothing_without_reading() -> None:
    source = ListPostings({0: {1: 5}}, {1: "a"})
    assert top_k(source, [Term("gone", {})], mode="any", limit=5, docs=1, ceiling=CEILING) == []
    assert source.postings_read == 0


def test_ties_go_to_the_newest() -> None:
    # Given three documents of the same score, updated at different times
    source = ListPostings({0: {1: 10, 2: 10, 3: 10}}, {1: "2026-01-02", 2: "2026-01-03", 3: "2026-01-01"})
    # When the best two are asked for
    hits = top_k(source, [Term("t", {0: 3}, 1.0)], mode="all", limit=2, docs=3, ceiling=CEILING)
    # Then the newest two win, newest first
    assert [doc for doc, _, _ in hits] == [2, 1]


def test_a_best_effort_search_keeps_to_its_budgets() -> None:
    # Given sixteen common terms over 2,000 documents
    rng = random.Random(7)
    lists = {k: {doc: rng.randint(1, 22_000) for doc in range(2000) if rng.random() < 0.6} for k in range(16)}
    source = ListPostings(lists, {doc: f"{doc:05d}" for doc in range(2000)})
    terms = [Term(f"t{k}", {k: len(lists[k])}, 0.3) for k in range(16)]
    budgets = Budgets(min_size=8, max_size=4096, max_total=256, max_lookups=32)
    # When recall's mode searches them
    hits = top_k(source, terms, mode="any", limit=10, docs=2000, ceiling=CEILING, budgets=budgets)
    # Then it answers from at most max_total postings (each key at least min_size), and looks up
    # at most max_lookups documents at random
    assert len(hits) == 10
    assert source.postings_read <= max(budgets.max_total, 16 * budgets.min_size)
    assert len(source.looked_up) <= budgets.max_lookups


@pytest.mark.parametrize("mode", ["any", "all"])
@pytest.mark.parametrize("seed", range(6))
def test_a_filter_that_passes_few_scores_them_all_without_reading_postings(seed: int, mode: str) -> None:
    # Given 300 documents of which the filter passes 20 (a time window, a rare tag)
    source, terms = _corpus(seed)
    source.passes = dict(list(source.passes.items())[:20])
    for n in (1, 3, 6):
        # When the engine answers, with the default budgets (few: at most 256, an eighth of 300 = 37)
        hits = top_k(source, terms[:n], mode=mode, limit=5, docs=300, ceiling=CEILING)
        # Then it is the exact answer, and no posting list was read in impact order
        assert [(doc, round(score, 6)) for doc, score, _ in hits] == reference(source, terms[:n], mode, 5)
    assert source.postings_read == 0


def _read_state(rng: random.Random) -> tuple[Search, list[int], list[float]]:
    """A search as judging finds it: documents read with random impacts (most terms not read for a
    document), caps (some 0: read to the end), terms of one or two keys, CJK character pairs that
    make groups, and often ``several`` and a ``common`` group known."""
    n, count = rng.randint(1, 18), rng.randint(1, 80)
    terms = []
    for i in range(n):
        word = "基" + chr(0x4E00 + i) if rng.random() < 0.4 else f"t{i}"
        keys = {i: 100} | ({1000 + i: 5} if rng.random() < 0.3 else {})
        terms.append(Term(word, keys, rng.uniform(0.5, 9.0)))
    search = Search.start(ListPostings({}, {}), terms, rng.random() < 0.3, CEILING)
    for doc in range(count):
        search.reads.partial[doc] = [rng.choice([0, 0, 0, rng.randint(1, 22_000)]) for _ in range(n)]
    caps = [rng.choice([0.0, rng.uniform(0, 60_000)]) for _ in range(n)]
    if len(search.groups) > 1 and rng.random() < 0.6:
        search.several = set(rng.sample(range(count), count // 3)) if rng.random() < 0.8 else set()
        if len(search.groups) > 2 and rng.random() < 0.5:
            search.common = search.groups[rng.randrange(len(search.groups))]
    return search, list(range(count)), caps


@pytest.mark.parametrize("seed", range(4))
def test_bounding_documents_over_arrays_gives_what_the_loop_gives(seed: int) -> None:
    """The two ways ``Search.bounds`` takes (a loop per document for few, arrays for many) give
    the same bounds to the bit, the same exactness and the same documents left out."""
    rng = random.Random(seed)
    for _ in range(200):
        # Given documents read as a search judges them
        search, docs, caps = _read_state(rng)
        # When they are bounded one at a time and over arrays
        looped, failing = search._bounds_each(docs, caps)
        arrays, failing_too = search._bounds_arrays(docs, caps)
        # Then each document gets the same (most, least, exact), floats equal to the bit
        assert sorted(arrays) == sorted(looped)
        assert sorted(failing_too) == sorted(failing)
