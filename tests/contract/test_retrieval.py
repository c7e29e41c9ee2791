"""search_memory, recall, recall_context and forget (docs/contract.md §3, issue 4), on every backend."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from mnemo.errors import Forbidden, InvalidRequest, NotFound
from mnemo.service.retrieval.packing import TRUNCATION_MARK
from mnemo.text import estimate_tokens


def add(tenant, content, caller=None, **fields):
    return tenant.call("memory_add", caller, content=content, **fields).memory


def refs(result):
    return [item.reference for item in result.results]


# ---- search_memory: strict ----------------------------------------------------------------


def test_search_memory_finds_the_memory_holding_every_term(tenant):
    wanted = add(tenant, "Reddit r/SaaS ignores self-promo; reply with help first.", kind="insight")
    add(tenant, "Reddit ads are expensive")

    result = tenant.call("search_memory", query="REDDIT help")

    assert result.matched is True
    assert refs(result) == [wanted.id]
    item = result.results[0]
    assert (item.content, item.kind, item.location, item.explanation) == (wanted.content, "insight", None, None)
    assert result.no_match is None


def test_terms_only_in_different_memories_are_no_match_for_search_but_recall_returns_both(tenant):
    pricing = add(tenant, "Acme pays annually by invoice")
    launch = add(tenant, "The launch date moved to March")

    strict = tenant.call("search_memory", query="invoice launch")
    forgiving = tenant.call("recall", query="invoice launch")

    assert strict.matched is False
    assert strict.results == []
    assert strict.no_match.cause == "split_across_memories"
    assert "different memories" in strict.no_match.reason
    assert forgiving.matched is True
    assert set(refs(forgiving)) == {pricing.id, launch.id}


def test_no_match_says_when_no_memory_holds_any_term(tenant):
    add(tenant, "Acme pays annually by invoice")

    result = tenant.call("search_memory", query="zebra giraffe")

    assert (result.matched, result.results) == (False, [])
    assert result.no_match.cause == "no_term_matched"
    assert result.no_match.missing_terms == ["zebra", "giraffe"]


def test_no_match_names_the_term_no_memory_holds(tenant):
    add(tenant, "Acme pays annually by invoice")

    result = tenant.call("search_memory", query="invoice zebra")

    assert result.no_match.cause == "term_missing"
    assert result.no_match.missing_terms == ["zebra"]
    assert "'zebra'" in result.no_match.reason


def test_no_match_says_when_filters_exclude_the_matches(tenant):
    add(tenant, "Acme pays annually by invoice", path="acme/billing", kind="fact")

    by_path = tenant.call("search_memory", query="invoice", path_filter="other/%")
    by_kind = tenant.call("search_memory", query="invoice", memory_type="decision")

    assert by_path.no_match.cause == "filtered_out"
    assert "path_filter" in by_path.no_match.reason
    assert "memory_type" not in by_path.no_match.reason
    assert by_kind.no_match.cause == "filtered_out"
    assert "memory_type" in by_kind.no_match.reason


def test_a_query_without_words_is_no_match(tenant):
    add(tenant, "anything at all")

    result = tenant.call("search_memory", query="?! …")

    assert (result.matched, result.no_match.cause) == (False, "no_terms")


def test_search_memory_respects_limit(tenant):
    for i in range(4):
        add(tenant, f"standup note number {i}")

    assert len(tenant.call("search_memory", query="standup", limit=3).results) == 3
    assert len(tenant.call("search_memory", query="standup").results) == 4


# ---- LIKE filters ---------------------------------------------------------------------------


def test_path_filter_is_a_prefix_pattern_not_a_substring(tenant):
    inside = add(tenant, "pricing rule one", path="acme/pricing")
    add(tenant, "pricing rule two", path="other/acme")
    add(tenant, "pricing rule three")

    result = tenant.call("search_memory", query="pricing", path_filter="acme/%")

    assert refs(result) == [inside.id]


def test_path_filter_is_case_insensitive(tenant):
    inside = add(tenant, "pricing rule", path="Acme/Pricing")

    assert refs(tenant.call("search_memory", query="pricing", path_filter="ACME/pricing")) == [inside.id]


def test_an_escaped_percent_matches_only_a_literal_percent(tenant):
    literal = add(tenant, "discount table", path="sales/100%/q1")
    add(tenant, "discount table", path="sales/1000/q1")

    escaped = tenant.call("search_memory", query="discount", path_filter="sales/100\\%/%")
    unescaped = tenant.call("search_memory", query="discount", path_filter="sales/100%/%")

    assert refs(escaped) == [literal.id]
    assert len(unescaped.results) == 2


def test_underscore_is_one_character_and_escaped_underscore_is_literal(tenant):
    snake = add(tenant, "queue depth alarm", kind="work_item")
    dashed = add(tenant, "queue depth alarm", kind="work-item")
    add(tenant, "queue depth alarm", kind="work--item")

    one_char = tenant.call("search_memory", query="queue", memory_type="work_item", limit=10)
    literal = tenant.call("search_memory", query="queue", memory_type="work\\_item", limit=10)

    assert set(refs(one_char)) == {snake.id, dashed.id}
    assert refs(literal) == [snake.id]


def test_memory_type_patterns_match_kinds_case_insensitively(tenant):
    decision = add(tenant, "rollout plan", kind="Decision")
    add(tenant, "rollout plan", kind="decisions-draft")
    kindless = add(tenant, "rollout plan")

    exact = tenant.call("search_memory", query="rollout", memory_type="decision", limit=10)
    everything = tenant.call("search_memory", query="rollout", memory_type="%", limit=10)
    some_kind = tenant.call("search_memory", query="rollout", memory_type="_%", limit=10)

    assert refs(exact) == [decision.id]
    assert len(everything.results) == 3
    assert kindless.id not in refs(some_kind) and len(some_kind.results) == 2


@pytest.mark.parametrize("field", ["path_filter", "memory_type"])
@pytest.mark.parametrize("tool", ["search_memory", "recall", "recall_context"])
def test_a_pattern_ending_in_a_lone_backslash_is_400(tenant, tool, field):
    with pytest.raises(InvalidRequest) as raised:
        tenant.call(tool, query="x", **{field: "acme\\"})

    assert raised.value.details[0]["loc"] == [field]


def test_an_escaped_backslash_matches_a_literal_backslash(tenant):
    windows = add(tenant, "share path note", path="c:\\shares")
    add(tenant, "share path note", path="c:/shares")

    assert refs(tenant.call("search_memory", query="share", path_filter="c:\\\\%")) == [windows.id]


# ---- prefer_working -------------------------------------------------------------------------


def test_prefer_working_puts_a_lower_scoring_working_memory_first(tenant):
    strong = add(tenant, "cache cache cache: the cache is the cache", kind="decision")
    working = add(
        tenant,
        "currently reviewing the incident timeline, the on-call handover notes, the dashboards and the cache",
        kind="working",
    )

    plain = tenant.call("search_memory", query="cache")
    preferred = tenant.call("search_memory", query="cache", prefer_working=True, explain=True)
    recalled = tenant.call("recall", query="cache", prefer_working=True)

    assert refs(plain) == [strong.id, working.id]  # the working memory scores lower
    assert refs(preferred) == [working.id, strong.id]
    assert refs(recalled) == [working.id, strong.id]
    assert "prefer_working" in preferred.results[0].explanation.reason


# ---- explain --------------------------------------------------------------------------------


def test_explain_names_the_matched_terms_and_fields_of_an_english_query(tenant):
    memory = add(tenant, "Reply with help first on Reddit", tags=["reddit", "community"], path="growth/reddit")

    item = tenant.call("search_memory", query="reddit help", explain=True).results[0]

    assert item.reference == memory.id
    explanation = item.explanation
    assert explanation.matched_terms == ["reddit", "help"]
    assert explanation.unmatched_terms == []
    assert explanation.fields.content == ["reddit", "help"]
    assert explanation.fields.tags == ["reddit"]
    assert explanation.fields.path == ["reddit"]
    assert explanation.rank == 1
    assert "all 2 terms matched" in explanation.reason


@pytest.mark.parametrize(
    ("query", "terms"),
    [("延迟", ["延迟"]), ("数据库", ["数据", "据库"]), ("缓存 latency", ["缓存", "latency"])],
)
def test_explain_names_the_matched_terms_of_a_chinese_query(tenant, query, terms):
    add(tenant, "数据库延迟很高，需要加缓存 (latency)")

    explanation = tenant.call("search_memory", query=query, explain=True).results[0].explanation

    assert explanation.matched_terms == terms
    assert explanation.fields.content == terms


def test_explain_in_recall_lists_unmatched_terms_and_why_a_result_ranks_lower(tenant):
    both = add(tenant, "invoice the launch partner")
    one = add(tenant, "the launch moved")

    results = tenant.call("recall", query="invoice launch", explain=True, mode="lexical").results

    assert [r.reference for r in results] == [both.id, one.id]
    second = results[1].explanation
    assert (second.rank, second.matched_terms, second.unmatched_terms) == (2, ["launch"], ["invoice"])
    assert second.matched_by == "words" and second.similarity is None
    assert "lower relevance score than rank 1" in second.reason


# ---- recall: forgiving ----------------------------------------------------------------------


def test_recall_matches_latin_prefixes_where_search_memory_does_not(tenant):
    memory = add(tenant, "Deployment checklist lives in the wiki")

    assert refs(tenant.call("recall", query="deplo")) == [memory.id]
    assert refs(tenant.call("recall", query="deploym")) == [memory.id]  # longer than the stem, "deploy"
    assert tenant.call("search_memory", query="deplo").matched is False


# ---- inflection: every tool matches English words by their stem --------------------------


def test_recall_finds_inflected_forms_of_the_words_stored(tenant):
    memory = add(tenant, "Deploys freeze on Fridays")
    add(tenant, "The frozen lake is closed")  # an irregular form is another word to a stemmer

    for query in ("deployments", "freezes", "deployed", "friday", "DEPLOYING"):
        assert refs(tenant.call("recall", query=query, mode="lexical")) == [memory.id], query
        # hybrid adds what is near in meaning (the frozen lake, to "freezes"), never above it
        assert refs(tenant.call("recall", query=query))[0] == memory.id, query
    assert tenant.call("recall_context", query="deployments freezes", mode="lexical").references == [memory.id]


def test_strict_tools_match_every_term_by_its_stem_and_still_refuse_a_missing_term(tenant):
    memory = add(tenant, "Databases are backed up nightly")
    add(tenant, "The backup of the wiki runs weekly")

    assert refs(tenant.call("search_memory", query="database backed")) == [memory.id]
    assert [m.id for m in tenant.call("memory_search", q="database nightly").memories] == [memory.id]
    strict = tenant.call("search_memory", query="database weekly")
    assert (strict.matched, strict.no_match.cause) == (False, "split_across_memories")


def test_explain_says_when_a_term_matched_through_its_stem(tenant):
    add(tenant, "Deploys freeze on Fridays", tags=["deployment"])

    item = tenant.call("search_memory", query="deployments fridays", explain=True).results[0]

    assert item.explanation.matched_terms == ["deployments", "fridays"]
    assert item.explanation.via_stem == {"deployments": ["deployment", "deploys"]}
    assert item.explanation.fields.content == ["deployments", "fridays"]
    assert item.explanation.fields.tags == ["deployments"]
    assert "'deployments' as 'deployment' / 'deploys', by stem" in item.explanation.reason


def test_exact_spelling_needs_no_stem_and_cjk_is_not_stemmed(tenant):
    english = add(tenant, "fridays are quiet")
    chinese = add(tenant, "部署在周五冻结")

    exact = tenant.call("search_memory", query="fridays", explain=True).results[0]
    assert (exact.reference, exact.explanation.via_stem) == (english.id, {})
    assert "via_stem" not in exact.explanation.model_dump(mode="json")  # said only when a stem did it
    assert refs(tenant.call("search_memory", query="冻结")) == [chinese.id]
    assert tenant.call("search_memory", query="冻").matched is True  # a lone CJK character: a prefix
    assert tenant.call("search_memory", query="结冻").matched is False


def test_recall_with_nothing_matching_is_no_match(tenant):
    add(tenant, "Acme pays annually by invoice", path="acme")

    nothing = tenant.call("recall", query="zebra")
    filtered = tenant.call("recall", query="invoice", path_filter="other%")

    assert (nothing.matched, nothing.results, nothing.no_match.cause) == (False, [], "no_term_matched")
    assert (filtered.matched, filtered.no_match.cause) == (False, "filtered_out")


def test_recall_applies_path_and_type_filters(tenant):
    wanted = add(tenant, "budget review notes", path="acme/finance", kind="decision")
    add(tenant, "budget review notes", path="acme/finance", kind="insight")
    add(tenant, "budget review notes", path="other/finance", kind="decision")

    result = tenant.call("recall", query="budget", path_filter="acme/%", memory_type="decision")

    assert refs(result) == [wanted.id]


# ---- recall_context -------------------------------------------------------------------------

ENGLISH = [
    "The billing service retries failed card payments three times over five days before it emails "
    "the customer, and after that it pauses the subscription until someone updates the card.",
    "Billing exports run nightly at two in the morning UTC and land in the finance bucket as CSV files "
    "that the accounting team imports into their ledger every Monday.",
    "When billing disputes arrive, support has forty eight hours to respond with the invoice, the "
    "delivery proof and the customer's signed order form.",
]
CHINESE = [
    "数据库延迟在高峰期很高，我们决定先加一层缓存，再评估是否需要读写分离，负责人是王工。",
    "缓存的过期时间设为十分钟，热点数据单独预热，避免缓存击穿导致数据库压力过大。",
    "上周的事故是因为缓存集群扩容时配置错误，数据库连接数被打满，已经补充了变更检查清单。",
]


def assert_never_cut_silently(result, contents, max_tokens):
    """Every packed memory is whole in the block, or cut and marked; the flag says so, and so
    does the block unless the budget cannot hold even the mark."""
    context = result.context
    for content in contents:
        if content in context:
            continue
        head = content[:10]
        if head in context:
            start = context.index(head)
            end = context.index(TRUNCATION_MARK, start)
            assert content.startswith(context[start:end])
    if any(content not in context for content in contents):
        assert result.truncated is True
        if max_tokens >= estimate_tokens(TRUNCATION_MARK):
            assert context.endswith(TRUNCATION_MARK)
        else:
            assert context == ""


@pytest.mark.parametrize(("contents", "query"), [(ENGLISH, "billing"), (CHINESE, "数据库 缓存")], ids=["en", "zh"])
def test_recall_context_stays_within_50_tokens_and_says_it_truncated(tenant, contents, query):
    for content in contents:
        add(tenant, content)

    result = tenant.call("recall_context", query=query, max_tokens=50)

    assert result.used_tokens <= 50
    assert estimate_tokens(result.context) == result.used_tokens
    assert result.truncated is True
    assert TRUNCATION_MARK in result.context
    assert result.references  # something useful fits
    assert_never_cut_silently(result, contents, 50)


@pytest.mark.parametrize("max_tokens", [1, 3, 4, 9, 20, 37, 64, 120, 400])
def test_recall_context_never_exceeds_the_budget(tenant, max_tokens):
    for content in ENGLISH + CHINESE:
        add(tenant, content, kind="fact", tags=["ops"], path="acme/ops")

    result = tenant.call("recall_context", query="billing 缓存 数据库", max_tokens=max_tokens, max_items=100)

    assert result.used_tokens <= max_tokens
    assert estimate_tokens(result.context) == result.used_tokens
    assert_never_cut_silently(result, ENGLISH + CHINESE, max_tokens)


def test_recall_context_that_fits_holds_every_memory_whole_in_rank_order(tenant):
    first = add(tenant, "billing billing retries")
    second = add(tenant, "billing exports and the finance retries bucket alongside plenty of other words")

    result = tenant.call("recall_context", query="billing retries")

    assert result.truncated is False
    assert TRUNCATION_MARK not in result.context
    assert result.references == [first.id, second.id]
    assert result.context.index(first.content) < result.context.index(second.content)
    assert first.id in result.context  # the block names each memory's reference


def test_recall_context_respects_max_items(tenant):
    for content in ENGLISH:
        add(tenant, content)

    result = tenant.call("recall_context", query="billing", max_items=2)

    assert len(result.references) == 2
    assert result.truncated is False


def test_recall_context_packs_identical_contents_once(tenant):
    add(tenant, "Ship the beta on Friday")
    add(tenant, "ship the  beta on friday")
    other = add(tenant, "The beta needs a feature flag")

    result = tenant.call("recall_context", query="beta")

    assert len(result.references) == 2
    assert other.id in result.references
    assert result.context.casefold().count("on friday") == 1


def test_recall_context_output_json_returns_items_instead_of_context(tenant):
    memory = add(tenant, "billing retries three times", kind="fact", tags=["billing"], path="acme/billing")

    result = tenant.call("recall_context", query="billing", output_json=True)

    assert result.context is None
    assert "context" not in result.model_dump(mode="json")
    [item] = result.items
    assert (item.reference, item.content, item.kind, item.tags, item.location, item.truncated) == (
        memory.id,
        memory.content,
        "fact",
        ["billing"],
        "acme/billing",
        False,
    )
    assert result.references == [memory.id]
    assert 0 < item.tokens <= result.used_tokens


def test_recall_context_output_json_marks_a_cut_item(tenant):
    add(tenant, ENGLISH[0])

    result = tenant.call("recall_context", query="billing", output_json=True, max_tokens=30)

    [item] = result.items
    assert item.truncated is True and result.truncated is True
    assert item.content.endswith(TRUNCATION_MARK)
    assert ENGLISH[0].startswith(item.content.removesuffix(TRUNCATION_MARK))


def test_recall_context_with_nothing_to_recall_is_empty(tenant):
    add(tenant, "unrelated")

    result = tenant.call("recall_context", query="zebra")

    assert (result.context, result.references, result.used_tokens, result.truncated) == ("", [], 0, False)
    assert result.no_match.cause == "no_term_matched"


# ---- team visibility ------------------------------------------------------------------------


@pytest.fixture
def teams(tenant):
    member = tenant.key(["memory:read", "memory:write"], team_ids=["red", "blue"])
    outsider = tenant.key(["memory:read", "memory:write"])
    red = add(tenant, "roadmap for red", member, team_id="red")
    blue = add(tenant, "roadmap for blue", member, team_id="blue")
    public = add(tenant, "roadmap for everyone", member)
    return member, outsider, red, blue, public


def test_team_memories_stay_invisible_to_other_keys_in_every_read(tenant, teams):
    member, outsider, red, blue, public = teams

    assert refs(tenant.call("search_memory", outsider, query="roadmap", limit=10)) == [public.id]
    assert refs(tenant.call("recall", outsider, query="roadmap", limit=10)) == [public.id]
    assert tenant.call("recall_context", outsider, query="roadmap").references == [public.id]
    assert tenant.call("search_memory", outsider, query="red").matched is False
    assert set(refs(tenant.call("recall", member, query="roadmap", limit=10))) == {red.id, blue.id, public.id}


def test_team_id_narrows_search_memory_to_that_team(tenant, teams):
    member, _, red, blue, public = teams

    everything = tenant.call("search_memory", member, query="roadmap", limit=10)
    narrowed = tenant.call("search_memory", member, query="roadmap", team_id="red", limit=10)

    assert set(refs(everything)) == {red.id, blue.id, public.id}
    assert refs(narrowed) == [red.id]


def test_team_id_narrowing_explains_what_it_excluded(tenant, teams):
    member = teams[0]

    result = tenant.call("search_memory", member, query="everyone", team_id="red")

    assert result.no_match.cause == "filtered_out"
    assert "team_id" in result.no_match.reason


def test_team_id_the_key_lacks_is_403(tenant, teams):
    member, outsider, *_ = teams

    with pytest.raises(Forbidden):
        tenant.call("search_memory", member, query="roadmap", team_id="green")
    with pytest.raises(Forbidden):
        tenant.call("search_memory", outsider, query="roadmap", team_id="red")


def test_forget_cannot_reach_another_teams_memory(tenant, teams):
    _, outsider, red, *_ = teams

    with pytest.raises(NotFound):
        tenant.call("forget", outsider, reference=red.id)

    assert tenant.call("memory_get", id=red.id).memory == red


# ---- forget ---------------------------------------------------------------------------------


def test_forget_one_of_two_near_identical_memories_leaves_the_other_searchable(tenant):
    first = add(tenant, "Acme prefers email updates")
    second = add(tenant, "Acme prefers email updates.")

    result = tenant.call("forget", reference=first.id, reason="duplicate")

    assert result.forgotten.reference == first.id
    assert result.project.id == tenant.project.id
    assert refs(tenant.call("search_memory", query="acme email")) == [second.id]
    assert refs(tenant.call("recall", query="acme email")) == [second.id]
    assert tenant.call("memory_get", id=second.id).memory == second
    with pytest.raises(NotFound):
        tenant.call("memory_get", id=first.id)


@pytest.mark.parametrize("reference", ["", "mem_", "mem_123", "not-a-reference", "MEM_01ARZ3NDEKTSV4RRFFQ69G5FAV"])
def test_forget_with_a_malformed_reference_is_400(tenant, reference):
    kept = add(tenant, "keep me")

    with pytest.raises(InvalidRequest):
        tenant.call("forget", reference=reference)

    assert tenant.call("memory_get", id=kept.id).memory == kept


def test_forget_of_an_unknown_reference_is_404_and_touches_nothing(tenant):
    kept = add(tenant, "keep me")

    with pytest.raises(NotFound):
        tenant.call("forget", reference="mem_01ARZ3NDEKTSV4RRFFQ69G5FAV")

    assert tenant.call("memory_get", id=kept.id).memory == kept


def test_forget_twice_is_404_the_second_time(tenant):
    memory = add(tenant, "temporary")
    tenant.call("forget", reference=memory.id)

    with pytest.raises(NotFound):
        tenant.call("forget", reference=memory.id)


def test_forget_needs_write_or_delete_scope(tenant):
    memory = add(tenant, "scoped")
    reader = tenant.key(["memory:read"])
    deleter = tenant.key(["memory:delete"])

    with pytest.raises(Forbidden):
        tenant.call("forget", reader, reference=memory.id)
    tenant.call("forget", deleter, reference=memory.id)

    assert tenant.call("search_memory", query="scoped").matched is False


def test_reads_need_the_read_scope(tenant):
    writer = tenant.key(["memory:delete"])

    for tool in ("search_memory", "recall", "recall_context"):
        with pytest.raises(Forbidden):
            tenant.call(tool, writer, query="x")


# ---- time: updated_after / updated_before, and an empty query (what changed) ---------------


def _three(tenant, content="release note", **fields):
    """Three memories updated a few milliseconds apart (timestamps carry milliseconds)."""
    out = []
    for i in range(3):
        out.append(add(tenant, f"{content} {i}", **fields))
        time.sleep(0.005)
    return out


def test_a_window_keeps_only_the_memories_updated_in_it_on_every_tool(tenant):
    a, b, c = _three(tenant)
    window = {"updated_after": b.updated_at.isoformat(), "updated_before": c.updated_at.isoformat()}

    assert [m.id for m in tenant.call("memory_search", q="release", **window).memories] == [b.id]
    assert refs(tenant.call("search_memory", query="release note", **window)) == [b.id]
    assert refs(tenant.call("recall", query="releases", **window)) == [b.id]
    assert tenant.call("recall_context", query="release", **window).references == [b.id]
    # the window is half-open: at or after updated_after, before updated_before
    since_a = {"updated_after": a.updated_at.isoformat()}
    assert refs(tenant.call("search_memory", query="release", **since_a)) == [c.id, b.id, a.id]


def test_an_empty_query_lists_what_changed_in_the_window_newest_first(tenant):
    a, b, c = _three(tenant)
    since_b = {"updated_after": b.updated_at.isoformat()}

    assert refs(tenant.call("search_memory", query="", **since_b)) == [c.id, b.id]
    assert refs(tenant.call("recall", **since_b)) == [c.id, b.id]
    assert tenant.call("recall_context", query=" ", **since_b).references == [c.id, b.id]
    assert [m.id for m in tenant.call("memory_search", **since_b).memories] == [c.id, b.id]
    # an update is a change: it moves the memory into the window, to the front
    time.sleep(0.005)
    tenant.call("memory_update", id=a.id, tags=["touched"])
    assert refs(tenant.call("recall", **since_b)) == [a.id, c.id, b.id]
    assert refs(tenant.call("search_memory", updated_after=a.created_at.isoformat())) == [a.id, c.id, b.id]


@pytest.mark.parametrize("query", [None, "", "   "])
def test_search_memory_without_a_query_or_a_window_is_refused_and_changes_nothing(tenant, query):
    memory = add(tenant, "release notes for the spring launch")
    asked = {} if query is None else {"query": query}

    with pytest.raises(InvalidRequest) as refused:
        tenant.call("search_memory", **asked)

    assert (refused.value.code, refused.value.details[0]["loc"]) == ("invalid_request", ["query"])
    assert refs(tenant.call("recall", query="release")) == [memory.id]


def test_an_empty_query_honours_the_filters_and_explains_the_order(tenant):
    _three(tenant, kind="note", path="acme/notes")
    decision = add(tenant, "ship it", kind="decision", path="acme/decisions")
    working = add(tenant, "drafting the plan", kind="working", path="acme/notes")
    time.sleep(0.005)
    newest = add(tenant, "newest note", kind="note", path="acme/notes")

    listed = tenant.call("search_memory", memory_type="decision", updated_before="2999-01-01T00:00:00Z")
    assert refs(listed) == [decision.id]
    ranked = tenant.call("recall", path_filter="acme/notes", prefer_working=True, explain=True, limit=2).results
    assert [r.reference for r in ranked] == [working.id, newest.id]
    assert "working memory, listed before the rest" in ranked[0].explanation.reason
    assert (
        ranked[1].explanation.reason == "rank 2: no query, so the most recently updated first; not a working "
        "memory, so after rank 1 (prefer_working)"
    )
    assert ranked[0].explanation.matched_terms == []


def test_a_window_nothing_was_updated_in_is_no_match_and_says_so(tenant):
    (memory,) = _three(tenant)[:1]
    later = (memory.updated_at + timedelta(days=1)).isoformat()

    listed = tenant.call("search_memory", updated_after=later)
    packed = tenant.call("recall_context", updated_after=later, memory_type="decision")
    searched = tenant.call("search_memory", query="release", updated_after=later)

    assert (listed.matched, listed.results, listed.no_match.cause) == (False, [], "nothing_listed")
    assert f"was updated at or after {later[:19]}" in listed.no_match.reason
    assert (packed.references, packed.no_match.cause) == ([], "nothing_listed")
    assert "that passes memory_type" in packed.no_match.reason
    assert searched.no_match.cause == "filtered_out"
    assert "updated_after excludes them" in searched.no_match.reason


def test_a_window_that_ends_before_it_starts_is_refused(tenant):
    with pytest.raises(InvalidRequest) as refused:
        tenant.call(
            "recall", query="x", updated_after="2026-02-01T00:00:00Z", updated_before="2026-01-31T00:00:00+01:00"
        )
    assert refused.value.details[0]["loc"] == ["updated_before"]
    with pytest.raises(InvalidRequest):
        tenant.call("memory_search", updated_after="2026-02-01T00:00:00")  # no offset: ambiguous
