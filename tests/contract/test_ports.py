"""The ports' finer semantics that the tools rely on, on every backend: the index's matching modes,
LIKE filters, prefixes and working-first ranking; the rate limiter's GCRA decisions. The same
data must give the same answers on SQLite and on DynamoDB + OpenSearch."""

from __future__ import annotations

from datetime import timedelta

import pytest
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexQuery, MemoryFilter, Scope
from mnemo.text import MAX_QUERY_TERMS, QueryTerm, query_terms

from tests.support.records import memory_record


@pytest.fixture
def scope(tenant) -> Scope:
    return Scope(tenant.workspace_id, tenant.project.id)


@pytest.fixture
def put(ports, scope):
    """Store and index a record directly through the ports (no tool, no rate limit)."""
    clock = [utc_now() - timedelta(minutes=5)]

    def put(content: str, **fields) -> MemoryRecord:
        clock[0] += timedelta(milliseconds=10)
        record = memory_record(content, scope=scope, at=clock[0], **fields)
        with ports.store.unit_of_work():
            ports.store.create(record)
            ports.index.upsert(record)
        return record

    return put


def search(ports, scope, terms, mode="all", limit=10, prefer_working=False, **flt):
    query = IndexQuery(scope, terms, mode, MemoryFilter(now=utc_now(), **flt), limit, prefer_working)
    return [hit.record.id for hit in ports.index.search(query)]


def test_mode_all_needs_every_term_in_any_field(ports, scope, put):
    both = put("deploy window", tags=["friday"])
    put("deploy checklist")

    assert search(ports, scope, query_terms("deploy friday")) == [both.id]


def test_mode_any_needs_one_term(ports, scope, put):
    a = put("alpha note")
    b = put("beta note")
    put("gamma note")

    assert set(search(ports, scope, query_terms("alpha beta"), mode="any")) == {a.id, b.id}


def test_a_prefix_term_matches_longer_words_and_a_plain_term_does_not(ports, scope, put):
    wanted = put("kubernetes upgrade")

    assert search(ports, scope, [QueryTerm("kube", prefix=True)]) == [wanted.id]
    assert search(ports, scope, [QueryTerm("kube")]) == []


def test_path_like_is_case_insensitive_with_wildcards_and_escapes(ports, scope, put):
    decisions = put("pricing rule", path="Acme/Pricing/Decisions")
    put("pricing rule", path="acme/sales")
    literal = put("pricing rule", path="acme/100%_sure")

    assert search(ports, scope, query_terms("pricing"), path_like="acme/pricing/%") == [decisions.id]
    assert search(ports, scope, query_terms("pricing"), path_like="ACME/PRICIN_/DECISIONS") == [decisions.id]
    assert search(ports, scope, query_terms("pricing"), path_like="acme/100\\%\\_sure") == [literal.id]


def test_kind_like_treats_opensearch_wildcards_as_literals(ports, scope, put):
    star = put("odd kind", kind="a*b")
    put("odd kind", kind="axxb")

    assert search(ports, scope, query_terms("odd"), kind_like="a*b") == [star.id]
    assert len(search(ports, scope, query_terms("odd"), kind_like="a%b")) == 2


def test_prefer_working_ranks_working_memories_first(ports, scope, put):
    put("roadmap roadmap roadmap review", kind="decision")
    working = put("roadmap draft", kind="working")

    assert search(ports, scope, query_terms("roadmap"), prefer_working=True)[0] == working.id


def test_content_outranks_tags_and_path(ports, scope, put):
    in_path = put("unrelated words", path="billing")
    in_content = put("billing question")

    assert search(ports, scope, query_terms("billing")) == [in_content.id, in_path.id]


def test_team_narrowing_hides_unteamed_and_other_teams(ports, scope, put):
    red = put("team plan", team_id="red")
    put("team plan", team_id="blue")
    put("team plan")

    assert search(ports, scope, query_terms("plan"), visible_teams=frozenset({"red"}), include_unteamed=False) == [
        red.id
    ]


def test_recent_lists_newest_first_with_kind_and_tags(ports, scope, put):
    put("one", kind="note", tags=["x"])
    two = put("two", kind="note", tags=["x", "y"])
    three = put("three", kind="note", tags=["y", "x"])
    put("four", kind="other", tags=["x", "y"])

    found = ports.store.recent(scope, MemoryFilter(now=utc_now(), kind="NOTE", tags_all=("x", "y")), 10)

    assert [r.id for r in found] == [three.id, two.id]


def test_the_bucket_admits_its_capacity_then_says_when_to_retry(ports, tenant):
    decisions = [ports.limiter.acquire(tenant.workspace_id, "write", 3) for _ in range(4)]

    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert 1 <= decisions[-1].retry_after_s <= 20
    assert decisions[0].reset_s == 20


def test_peeking_at_a_bucket_reports_its_level_and_takes_nothing(ports, tenant):
    ws = tenant.workspace_id
    fresh = ports.limiter.peek(ws, "write", 3)
    assert (fresh.allowed, fresh.limit, fresh.remaining, fresh.reset_s, fresh.retry_after_s) == (True, 3, 3, 0, 0)

    taken = [ports.limiter.acquire(ws, "write", 3) for _ in range(2)]
    first, second = ports.limiter.peek(ws, "write", 3), ports.limiter.peek(ws, "write", 3)
    assert first.remaining == second.remaining == taken[-1].remaining == 1
    assert first.allowed and 20 <= first.reset_s <= 40
    assert ports.limiter.acquire(ws, "write", 3).allowed  # peeking took nothing: the third call still fits

    empty = ports.limiter.peek(ws, "write", 3)
    assert (empty.allowed, empty.remaining) == (False, 0)
    assert 1 <= empty.retry_after_s <= 20 and 40 <= empty.reset_s <= 60
    assert ports.limiter.peek(ws, "search", 3).remaining == 3  # the classes are separate buckets


def test_a_prefix_match_is_ranked_by_term_frequency_like_any_other(ports, scope, put):
    dense = put("billing billing retries")
    put("billing exports and the finance retries bucket alongside plenty of other words")

    terms = query_terms("billing retries", latin_prefix=True)

    assert search(ports, scope, terms, mode="any")[0] == dense.id


def test_the_longest_forgiving_query_still_answers(ports, scope, put):
    wanted = put("w1 w2 w3 zebra")
    words = " ".join(f"w{i}" for i in range(1, 80))

    terms = query_terms(words, latin_prefix=True)

    assert len(terms) == MAX_QUERY_TERMS
    assert search(ports, scope, terms, mode="any") == [wanted.id]
