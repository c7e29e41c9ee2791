"""The natural-language class kept in the repository is exactly what its generator makes, and the
public set derived from MemoryBank is small, licensed and labelled (the bench itself is
``bench/nl_quality.py``)."""

from __future__ import annotations

from bench import nl_set, public_set


def test_the_committed_class_is_what_the_generator_makes():
    assert nl_set.DATA.read_text(encoding="utf-8") == nl_set.dump(nl_set.generate())


def test_the_class_is_big_enough_in_both_languages_and_every_question_has_its_evidence():
    data = nl_set.load()
    ids = {m["id"]: m for m in data["memories"]}

    assert len(data["memories"]) >= 3000 and len(data["queries"]) >= 300
    assert {q["lang"] for q in data["queries"]} == {"en", "zh"}
    for query in data["queries"]:
        assert 1 <= len(query["relevant"]) <= 2
        assert all(ids[ref]["project"] == query["project"] for ref in query["relevant"])


def test_the_public_set_is_small_licensed_and_each_question_points_at_one_day_of_its_user():
    data = public_set.load()
    ids = {m["id"]: m for m in data["memories"]}

    assert public_set.DATA.stat().st_size < 1 << 20
    assert (public_set.DATA.parent / "LICENSE").read_text().startswith("MIT License")
    assert len(data["queries"]) >= 60
    for query in data["queries"]:
        days = {ids[ref]["created_at"][:10] for ref in query["relevant"]}
        assert len(days) == 1 and {ids[ref]["project"] for ref in query["relevant"]} == {query["project"]}
