"""memory_add / get / update / delete / search (docs/contract.md §2–3), on every backend."""

from __future__ import annotations

import time

import pytest
from mnemo.errors import Conflict, ContentTooLarge, Forbidden, InvalidRequest, NotFound

REDDIT = "Reddit r/SaaS ignores self-promo; reply with help first."


def test_add_returns_the_stored_record_and_the_project(tenant):
    result = tenant.call("memory_add", content=REDDIT, kind="insight", tags=["reddit", "rules", "reddit"])

    assert result.project.id == tenant.project.id
    assert result.project.slug == "default"
    memory = result.memory
    assert memory.id.startswith("mem_") and len(memory.id) == 30
    assert memory.content == REDDIT
    assert memory.tags == ["reddit", "rules"]
    assert memory.source == "admin"
    assert memory.version == 1
    assert memory.created_at == memory.updated_at


def test_get_returns_what_add_stored(tenant):
    added = tenant.call("memory_add", content="  verbatim\n content  ", path="acme/pricing").memory

    got = tenant.call("memory_get", id=added.id).memory

    assert got == added
    assert got.content == "  verbatim\n content  "


def test_search_finds_by_every_term_case_insensitively(tenant):
    wanted = tenant.call("memory_add", content=REDDIT, kind="insight").memory
    tenant.call("memory_add", content="Reddit ads are expensive", kind="insight")

    found = tenant.call("memory_search", q="REDDIT help", kind="insight", limit=10).memories

    assert [m.id for m in found] == [wanted.id]


def test_search_filters_by_exact_kind_and_all_tags(tenant):
    a = tenant.call("memory_add", content="pricing note one", kind="decision", tags=["a", "b"]).memory
    tenant.call("memory_add", content="pricing note two", kind="decision", tags=["a"])
    tenant.call("memory_add", content="pricing note three", kind="insight", tags=["a", "b"])

    found = tenant.call("memory_search", q="pricing", kind="decision", tags=["b", "a"]).memories

    assert [m.id for m in found] == [a.id]


def test_empty_query_lists_newest_first(tenant):
    ids = []
    for i in range(3):
        ids.append(tenant.call("memory_add", content=f"note {i}").memory.id)
        time.sleep(0.002)  # timestamps have millisecond precision: keep them distinct
    tenant.call("memory_update", id=ids[0], content="note 0 edited")

    listed = tenant.call("memory_search", q="", limit=2).memories

    assert [m.id for m in listed] == [ids[0], ids[2]]


@pytest.mark.parametrize(
    ("content", "query"),
    [
        ("数据库延迟很高，需要加缓存", "延迟"),
        ("数据库延迟很高，需要加缓存", "加缓存"),
        ("東京の会議は金曜日に移動しました", "会議"),
        ("이번 배포는 금요일로 연기되었습니다", "배포"),
        ("Mixed 中文 and English：部署失败", "部署失败 mixed"),
    ],
)
def test_cjk_queries_of_two_or_more_characters_find_the_memory(tenant, content, query):
    wanted = tenant.call("memory_add", content=content).memory
    tenant.call("memory_add", content="完全无关的内容 unrelated")

    found = tenant.call("memory_search", q=query).memories

    assert [m.id for m in found] == [wanted.id]


def test_a_cjk_query_does_not_match_memories_without_it(tenant):
    tenant.call("memory_add", content="数据库延迟很高")

    assert tenant.call("memory_search", q="缓存").memories == []


def test_update_is_searchable_at_once_and_old_words_are_gone(tenant):
    memory = tenant.call("memory_add", content="the launch moved to tuesday").memory

    updated = tenant.call("memory_update", id=memory.id, content="the launch moved to friday", if_version=1).memory

    assert updated.version == 2
    assert updated.updated_at >= memory.updated_at
    assert [m.id for m in tenant.call("memory_search", q="friday").memories] == [memory.id]
    assert tenant.call("memory_search", q="tuesday").memories == []


def test_update_keeps_fields_left_out_and_clears_fields_set_to_null(tenant):
    memory = tenant.call("memory_add", content="x", kind="insight", tags=["t"], path="a/b").memory

    updated = tenant.call("memory_update", id=memory.id, kind=None, tags=["u"]).memory

    assert (updated.content, updated.kind, updated.tags, updated.path) == ("x", None, ["u"], "a/b")


def test_update_with_a_stale_version_is_a_conflict_and_changes_nothing(tenant):
    memory = tenant.call("memory_add", content="first").memory
    tenant.call("memory_update", id=memory.id, content="second")

    with pytest.raises(Conflict):
        tenant.call("memory_update", id=memory.id, content="third", if_version=1)

    assert tenant.call("memory_get", id=memory.id).memory.content == "second"


def test_delete_makes_the_memory_unsearchable_at_once(tenant):
    memory = tenant.call("memory_add", content="ephemeral detail").memory

    result = tenant.call("memory_delete", id=memory.id)

    assert result.deleted.id == memory.id
    assert tenant.call("memory_search", q="ephemeral").memories == []
    assert tenant.call("memory_search", q="").memories == []
    with pytest.raises(NotFound):
        tenant.call("memory_get", id=memory.id)
    with pytest.raises(NotFound):
        tenant.call("memory_delete", id=memory.id)


def test_unknown_and_malformed_ids(tenant):
    with pytest.raises(NotFound):
        tenant.call("memory_get", id="mem_01ARZ3NDEKTSV4RRFFQ69G5FAV")
    with pytest.raises(InvalidRequest):
        tenant.call("memory_get", id="not-an-id")


def test_content_over_4096_bytes_is_413_and_exactly_4096_is_fine(tenant):
    four_byte = "😀"  # 4 bytes of UTF-8
    ok = tenant.call("memory_add", content=four_byte * 1024).memory
    assert len(ok.content.encode()) == 4096

    with pytest.raises(ContentTooLarge):
        tenant.call("memory_add", content=four_byte * 1024 + "x")
    with pytest.raises(ContentTooLarge):
        tenant.call("memory_update", id=ok.id, content="é" * 2049)

    assert tenant.call("memory_search", q="").memories == [ok]


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"content": ""},
        {"content": 5},
        {"content": "x", "tags": ["t"] * 21},
        {"content": "x", "tags": [""]},
        {"content": "x", "kind": "k" * 65},
        {"content": "x", "unknown": 1},
        {"content": "x", "expires_at": "2020-01-01T00:00:00Z"},
        {"content": "x", "expires_at": "tomorrow"},
        {"content": "x\x00y"},
    ],
)
def test_invalid_add_arguments_are_400_and_store_nothing(tenant, arguments):
    with pytest.raises(InvalidRequest):
        tenant.call("memory_add", **arguments)

    assert tenant.call("memory_search", q="").memories == []


@pytest.mark.parametrize("limit", [0, 101, -1, "ten"])
def test_search_limit_out_of_range_is_400(tenant, limit):
    with pytest.raises(InvalidRequest):
        tenant.call("memory_search", q="x", limit=limit)


def test_expired_memories_are_hidden_from_every_read(tenant):
    from datetime import timedelta

    from mnemo.models.common import utc_now

    memory = tenant.call("memory_add", content="short lived fact", expires_at=utc_now() + timedelta(hours=1)).memory
    later = utc_now() + timedelta(hours=2)

    def at_later(tool, **arguments):
        return tenant.svc.invoke(tool, tenant.admin, arguments, now=later).result

    assert at_later("memory_search", q="").memories == []
    assert at_later("memory_search", q="short").memories == []
    with pytest.raises(NotFound):
        at_later("memory_get", id=memory.id)
    assert [m.id for m in tenant.call("memory_search", q="short").memories] == [memory.id]


def test_idempotent_add_returns_the_first_result_and_writes_once(tenant):
    first = tenant.call("memory_add", content="pay invoices on friday", idempotency_key="k-1")
    again = tenant.call("memory_add", content="pay invoices on friday", idempotency_key="k-1")

    assert again == first
    assert len(tenant.call("memory_search", q="invoices").memories) == 1
    with pytest.raises(Conflict):
        tenant.call("memory_add", content="something else", idempotency_key="k-1")


def test_source_defaults_to_the_key_label_and_can_be_given(tenant):
    assert tenant.call("memory_add", content="a").memory.source == "admin"
    assert tenant.call("memory_add", content="b", source="claude-code").memory.source == "claude-code"


def test_read_only_keys_cannot_write(tenant):
    reader = tenant.key(["memory:read"])
    memory = tenant.call("memory_add", content="x").memory

    for tool, arguments in [
        ("memory_add", {"content": "y"}),
        ("memory_update", {"id": memory.id, "content": "z"}),
        ("memory_delete", {"id": memory.id}),
    ]:
        with pytest.raises(Forbidden):
            tenant.call(tool, reader, **arguments)

    assert tenant.call("memory_get", reader, id=memory.id).memory.content == "x"


def test_team_memories_are_invisible_outside_the_team(tenant):
    outsider = tenant.key(["memory:read", "memory:write"])
    member = tenant.key(["memory:read", "memory:write"], team_ids=["red"])
    secret = tenant.call("memory_add", member, content="red team roadmap", team_id="red").memory
    tenant.call("memory_add", member, content="public roadmap")

    assert [m.content for m in tenant.call("memory_search", outsider, q="roadmap").memories] == ["public roadmap"]
    assert {m.id for m in tenant.call("memory_search", member, q="roadmap").memories} >= {secret.id}
    with pytest.raises(NotFound):
        tenant.call("memory_get", outsider, id=secret.id)
    with pytest.raises(Forbidden):
        tenant.call("memory_add", outsider, content="x", team_id="red")


def test_workspaces_never_see_each_other(svc, tenant):
    from tests.contract.conftest import new_tenant

    other = new_tenant(svc, "other")
    theirs = other.call("memory_add", content="other workspace secret").memory

    assert tenant.call("memory_search", q="secret").memories == []
    assert tenant.call("memory_search", q="").memories == []
    with pytest.raises(NotFound):
        tenant.call("memory_get", id=theirs.id)
    with pytest.raises(NotFound):
        tenant.call("memory_search", q="", project=other.project.id)
