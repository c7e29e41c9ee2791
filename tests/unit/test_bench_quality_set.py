"""The labelled quality set kept in the repository is exactly what its generator makes, small, and
labelled by its own rules (no timing here; the benchmark itself is ``bench/quality.py``)."""

from __future__ import annotations

import json
from collections import Counter

from bench import quality, quality_set


def test_the_committed_set_is_what_the_generator_makes() -> None:
    assert quality_set.DATA.read_text(encoding="utf-8") == quality_set.dump(quality_set.generate())


def test_the_set_is_under_a_mebibyte_and_as_large_as_the_issue_asks() -> None:
    data = quality_set.load()
    assert quality_set.DATA.stat().st_size < 1 << 20
    assert len(data["memories"]) >= 2000
    assert len(data["queries"]) >= 200
    languages = Counter(m["lang"] for m in data["memories"])
    assert languages["zh"] >= 200 and languages["ja"] >= 200
    classes = Counter(q["class"] for q in data["queries"])
    assert set(classes) == {"exact", "inflected", "partial", "cjk", "filtered", "recency", "paraphrase"}
    assert min(classes.values()) >= 30
    paraphrase = [q for q in data["queries"] if q["class"] == "paraphrase"]
    assert {lang for q in paraphrase for lang in [q["lang"]]} == {"en", "zh", "ja"}
    # hundreds of distractors carrying the queries' everyday words
    assert len(data["memories"]) - 2400 - len(paraphrase) >= 300


def test_a_paraphrase_shares_no_term_with_the_memory_it_should_find() -> None:
    """By Mnemo's own analysis (stems, CJK pairs): the word search cannot find the target."""
    from mnemo import text

    data = quality_set.load()
    by_id = {m["id"]: m for m in data["memories"]}
    for query in (q for q in data["queries"] if q["class"] == "paraphrase"):
        (target,) = [by_id[i] for i in query["relevant"]]
        held = set(text.terms(" ".join([target["content"], *target["tags"], target["path"]])))
        asked = text.query_terms(query["query"])
        assert asked and not any(text.matching_words(term, held) for term in asked), query["query"]
        # while distractors do hold its words
        carriers = [
            m for m in data["memories"] if any(text.matching_words(t, set(text.terms(m["content"]))) for t in asked)
        ]
        assert len(carriers) >= 5, query["query"]


def test_every_query_names_one_to_five_memories_that_follow_its_class_rule() -> None:
    data = quality_set.load()
    by_id = {m["id"]: m for m in data["memories"]}
    for query in data["queries"]:
        relevant = [by_id[i] for i in query["relevant"]]
        assert 1 <= len(relevant) <= quality_set.MAX_RELEVANT, query["id"]
        words = query["query"].split()
        if query["class"] in ("exact", "inflected", "filtered"):
            assert all(quality_set.holds(quality_set.words_of(m), words) for m in relevant), query["id"]
        if query["class"] == "inflected":
            assert all(w in quality_set.FAMILY_OF for w in words)
        if query["class"] == "partial":
            assert not any(quality_set.holds(quality_set.words_of(m), words) for m in data["memories"])
        if query["class"] == "cjk":
            assert all(quality_set.holds_text(m, words) for m in relevant)
        if query["class"] == "recency":
            after, before = query.get("updated_after", ""), query.get("updated_before", "9")
            assert all(after <= m["updated_at"] < before for m in relevant)


def test_the_independent_strict_checker_reads_stems_and_cjk_pairs() -> None:
    memory = {"content": "Deploys freeze on Fridays; 数据库迁移", "tags": [], "path": "infra/db"}
    assert quality.holds_every_term(memory, "deployment friday 数据库")
    assert not quality.holds_every_term(memory, "deployment frozen")
    assert not quality.holds_every_term(memory, "库迁数")  # the pair 迁数 is not in it
    assert json.dumps(quality.strict_terms("Deployments 数据库")) == json.dumps([["deploy"], ["数据", "据库"]])
