"""The labelled quality set kept in the repository is exactly what its generator makes, small, and
labelled by its own rules (no timing here; the benchmark itself is ``bench/quality.py``)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from bench import quality, quality_set

pytestmark = [pytest.mark.slow]


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


def _recall_terms(words: str) -> list[Any]:
    """The terms ``recall`` reads from these words, each word alone (so a stop word such as "can"
    stays a term): stems, and every Latin word of 3 letters or more as a prefix too (``cert``
    finds ``certificate``), CJK character pairs."""
    from mnemo import text

    return [t for word in words.split() for t in text.query_terms(word, latin_prefix=True)]


def _held(memory: dict[str, Any]) -> set[str]:
    from mnemo import text

    return set(text.terms(" ".join([memory["content"], *memory["tags"], memory["path"]])))


def test_a_paraphrase_shares_no_term_with_the_memory_it_should_find() -> None:
    """By recall's own analysis (stems, Latin prefixes, CJK pairs; content, tags and path): the
    word search cannot find the target."""
    from mnemo import text

    data = quality_set.load()
    by_id = {m["id"]: m for m in data["memories"]}
    for query in (q for q in data["queries"] if q["class"] == "paraphrase"):
        (target,) = [by_id[i] for i in query["relevant"]]
        asked = _recall_terms(query["query"])
        assert asked and not [t.text for t in asked if text.term_matches(t, _held(target))], query["query"]


def test_the_rule_is_recall_s_own_prefix_rule() -> None:
    """The check above would catch the words the first revision of the set let through."""
    from mnemo import text

    for word, memory in (("cert", "VPN certificate"), ("prod", "production secrets"), ("off", "office/notes")):
        assert any(text.term_matches(t, text.terms(memory)) for t in _recall_terms(word))


def test_paraphrase_distractors_share_everyday_words_and_no_topic_word() -> None:
    """Each query's distractors hold one of its everyday words (as recall reads them) and no topic
    word of any paraphrase query; every query word is one or the other (English) or a word too
    short to mean anything; every memory of the paraphrase block is a target or a distractor of
    exactly one query, and no two say the same thing."""
    from mnemo import text

    data = quality_set.load()
    by_id = {m["id"]: m for m in data["memories"]}
    paraphrase = [q for q in data["queries"] if q["class"] == "paraphrase"]
    topics = [t for q in paraphrase for t in _recall_terms(" ".join(q["topic"]))]
    block = [m["id"] for m in data["memories"][2400:]]
    assert sorted(i for q in paraphrase for i in [*q["relevant"], *q["distractors"]]) == sorted(block)
    assert len({text.dedupe_key(by_id[i]["content"]) for i in block}) == len(block)
    for query in paraphrase:
        if query["lang"] == "en":
            words = set(text.terms(query["query"]))
            assert words <= {*query["everyday"], *query["topic"], *quality_set.FUNCTION}, query["query"]
            assert not set(query["everyday"]) & set(query["topic"])
        else:
            assert all(w in query["query"] for w in [*query["everyday"], *query["topic"]]), query["query"]
        everyday = _recall_terms(" ".join(query["everyday"]))
        assert len(query["distractors"]) == quality_set.DISTRACTORS
        for memory in (by_id[i] for i in query["distractors"]):
            held = _held(memory)
            assert any(text.term_matches(t, held) for t in everyday), (query["query"], memory["content"])
            assert not [t.text for t in topics if text.term_matches(t, held)], memory["content"]


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


def test_the_independent_strict_checker_does_not_require_stop_words_unless_the_query_has_nothing_else() -> None:
    memory = {"content": "Caroline joined a support group in May", "tags": [], "path": None}
    assert quality.holds_every_term(memory, "When did Caroline go to the support group?")
    assert not quality.holds_every_term(memory, "When did Caroline go to the choir?")
    assert quality.strict_terms("什么时候 数据库") == ([], ["数据", "据库"])
    assert quality.strict_terms("the who") == (["the", "who"], [])
    assert not quality.holds_every_term(memory, "the who")
