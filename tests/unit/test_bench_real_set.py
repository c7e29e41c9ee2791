"""The real-question set (``bench/real_set.py``) is small, licensed, big enough, and every question's
evidence is in its own project and session (the bench itself is ``bench/real_quality.py``)."""

from __future__ import annotations

from bench import real_set


def test_the_real_set_is_small_licensed_and_big_enough_in_both_languages():
    data = real_set.load()

    assert real_set.DATA.stat().st_size < 1 << 20
    assert len(data["memories"]) >= 3000 and len(data["queries"]) >= 500
    assert {q["lang"] for q in data["queries"]} == {"en", "zh"}
    assert set(data["provenance"]) == {"friendsqa", "dream", "c3"}
    for name in data["provenance"]:
        assert (real_set.DATA.parent / f"LICENSE-{name}.txt").read_text(encoding="utf-8").strip()


def test_every_question_has_evidence_in_its_project_and_one_session():
    data = real_set.load()
    ids = {m["id"]: m for m in data["memories"]}

    for query in data["queries"]:
        evidence = [ids[ref] for ref in query["relevant"]]
        assert evidence and {m["project"] for m in evidence} == {query["project"]}
        assert len({m["session"] for m in evidence}) == 1
        assert query.get("any", False) == (query["source"] != "friendsqa")
