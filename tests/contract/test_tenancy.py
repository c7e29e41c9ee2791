"""Keys, scopes, teams, project resolution and rate-limit figures (docs/contract.md §1, §5), on every backend.

Tools are taken from the registry at run time, so "every write tool" includes tools added later."""

from __future__ import annotations

import pytest
from mnemo.errors import Conflict, Forbidden, InvalidRequest, NotFound, RateLimited, Unauthorized
from mnemo.models.records import RateLimits
from mnemo.service import tenancy
from mnemo.service.catalog import TOOLS
from mnemo.service.identity import ADMIN, DELETE, READ, WRITE

from tests.contract.conftest import new_tenant
from tests.contract.tool_args import arguments_for, dumped, read_tools, write_tools

# ---- keys -----------------------------------------------------------------------------------


def test_a_revoked_key_is_refused_on_its_very_next_call(tenant):
    plain = tenant.secret([READ])
    tenant.call("memory_search", tenant.svc.authenticate(f"Bearer {plain}"), q="")

    tenancy.revoke_key(tenant.svc.ports, tenant.workspace_id, tenant.svc.authenticate(f"Bearer {plain}").key_id)

    with pytest.raises(Unauthorized):
        tenant.svc.authenticate(f"Bearer {plain}")


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer mnemo_not-a-key-of-anyone-at-all"],
)
def test_missing_malformed_and_unknown_keys_are_unauthorized(tenant, authorization):
    with pytest.raises(Unauthorized):
        tenant.svc.authenticate(authorization)


def test_a_key_with_one_character_changed_is_unauthorized(tenant):
    plain = tenant.secret([READ])
    altered = plain[:-1] + ("A" if plain[-1] != "A" else "B")

    with pytest.raises(Unauthorized):
        tenant.svc.authenticate(f"Bearer {altered}")
    assert tenant.svc.authenticate(f"bearer   {plain}  ").workspace_id == tenant.workspace_id


def test_the_store_keeps_only_a_salted_hash_of_a_key(tenant):
    import hashlib

    plain = tenant.secret([READ])
    key_id = tenant.svc.authenticate(f"Bearer {plain}").key_id

    stored = tenant.svc.ports.tenants.get_key(key_id)

    assert plain not in stored.model_dump_json()
    assert stored.secret_hash != hashlib.sha256(plain.encode()).hexdigest()
    other = tenant.svc.ports.tenants.get_key(tenant.admin.key_id)
    assert stored.salt != other.salt


def test_registering_the_same_plain_key_twice_is_a_conflict(tenant):
    tenant.secret([READ], plain="a-chosen-key-0123456789")

    with pytest.raises(Conflict):
        tenant.secret([READ], plain="a-chosen-key-0123456789")


def test_a_key_of_another_workspace_cannot_be_revoked_and_keeps_working(svc, tenant):
    other = new_tenant(svc, "other")
    theirs = other.secret([READ])
    their_id = svc.authenticate(f"Bearer {theirs}").key_id

    with pytest.raises(NotFound):
        tenancy.revoke_key(svc.ports, tenant.workspace_id, their_id)

    assert svc.authenticate(f"Bearer {theirs}").workspace_id == other.workspace_id


# ---- scopes ---------------------------------------------------------------------------------


def test_a_read_only_key_gets_403_on_every_write_tool_and_changes_nothing(tenant):
    reader = tenant.key([READ])
    memory = tenant.call("memory_add", content="keep me").memory
    assert write_tools(), "the registry has write tools"

    for tool in write_tools():
        arguments = arguments_for(tool, memory_id=memory.id, content="changed")
        with pytest.raises(Forbidden):
            tenant.call(tool.name, reader, **arguments)

    assert tenant.call("memory_get", reader, id=memory.id).memory == memory
    assert [m.id for m in tenant.call("memory_search", reader, q="").memories] == [memory.id]


def test_a_key_without_read_scope_gets_403_on_every_read_tool(tenant):
    writer = tenant.key([WRITE])
    memory = tenant.call("memory_add", content="a note").memory

    for tool in read_tools():
        with pytest.raises(Forbidden):
            tenant.call(tool.name, writer, **arguments_for(tool, memory_id=memory.id, text="note"))


def test_a_delete_scope_allows_exactly_the_deleting_tools(tenant):
    deleter = tenant.key([DELETE])

    for tool in write_tools():
        memory = tenant.call("memory_add", content="to delete").memory
        arguments = arguments_for(tool, memory_id=memory.id, content="x")
        if DELETE in tool.scopes:
            tenant.call(tool.name, deleter, **arguments)
            with pytest.raises(NotFound):
                tenant.call("memory_get", id=memory.id)
        else:
            with pytest.raises(Forbidden):
                tenant.call(tool.name, deleter, **arguments)


# ---- teams ----------------------------------------------------------------------------------


@pytest.fixture
def teams(tenant):
    """A workspace with a red-team memory, a public one, and keys inside and outside the team."""
    member = tenant.key([READ, WRITE], team_ids=["red"])
    outsider = tenant.key([READ, WRITE, DELETE], team_ids=["blue"])
    secret = tenant.call("memory_add", member, content="roadmap red launch plan", team_id="red").memory
    public = tenant.call("memory_add", member, content="roadmap public launch plan").memory
    return member, outsider, secret, public


def test_a_key_outside_a_team_never_sees_its_memories_on_any_read_tool(tenant, teams):
    _, outsider, secret, _ = teams

    for tool in read_tools():
        for text in ("roadmap", "red launch", "roadmap red launch plan"):
            arguments = arguments_for(tool, memory_id=secret.id, text=text)
            try:
                result = tenant.call(tool.name, outsider, **arguments)
            except NotFound:
                assert "id" in arguments or "reference" in arguments
                continue
            assert secret.id not in dumped(result), tool.name
            assert "roadmap red" not in dumped(result), tool.name


def test_a_key_outside_a_team_can_neither_change_nor_delete_its_memories(tenant, teams):
    _, outsider, secret, _ = teams

    for tool in write_tools():
        if tool.name == "memory_add":
            with pytest.raises(Forbidden):
                tenant.call("memory_add", outsider, content="x", team_id="red")
            continue
        with pytest.raises(NotFound):
            tenant.call(tool.name, outsider, **arguments_for(tool, memory_id=secret.id, content="hijacked"))

    assert tenant.call("memory_get", id=secret.id).memory == secret


def test_team_members_and_admin_keys_see_team_memories(tenant, teams):
    member, _, secret, public = teams

    assert {m.id for m in tenant.call("memory_search", member, q="roadmap").memories} == {secret.id, public.id}
    assert {m.id for m in tenant.call("memory_search", q="roadmap").memories} == {secret.id, public.id}
    assert tenant.call("memory_get", member, id=secret.id).memory == secret


def test_a_team_filter_narrows_and_never_widens(tenant, teams):
    member, outsider, secret, _ = teams
    filtering = [t for t in read_tools() if "team_id" in t.args_model.model_fields]
    if not filtering:
        pytest.skip("no registered read tool takes a team_id filter")

    for tool in filtering:
        narrowed = tenant.call(tool.name, member, **arguments_for(tool, text="roadmap", team_id="red"))
        assert secret.id in dumped(narrowed)
        assert "roadmap public" not in dumped(narrowed)
        with pytest.raises(Forbidden):
            tenant.call(tool.name, outsider, **arguments_for(tool, text="roadmap", team_id="red"))


# ---- project resolution ---------------------------------------------------------------------


@pytest.fixture
def projects(tenant):
    ports = tenant.svc.ports
    alpha = tenancy.create_project(ports, tenant.workspace_id, "alpha")
    beta = tenancy.create_project(ports, tenant.workspace_id, "beta")
    return alpha, beta


def _resolved(tenant, caller=None, **arguments):
    return tenant.call("memory_search", caller, q="", **arguments).project


def test_with_nothing_given_the_workspace_default_project_is_used(tenant, projects):
    assert _resolved(tenant).id == tenant.project.id


def test_the_keys_default_project_beats_the_workspace_default(tenant, projects):
    alpha, _ = projects
    keyed = tenant.key([READ], default_project="alpha")

    assert _resolved(tenant, keyed).id == alpha.id


def test_the_x_project_header_beats_the_keys_default(tenant, projects):
    alpha, beta = projects
    keyed = tenant.key([READ], default_project=alpha.id)

    assert _resolved(tenant, keyed, project_header="beta").id == beta.id
    assert _resolved(tenant, keyed, project_header=beta.id).id == beta.id


def test_the_argument_beats_the_header_by_slug_or_id(tenant, projects):
    _, beta = projects
    keyed = tenant.key([READ], default_project="alpha")

    assert _resolved(tenant, keyed, project="default", project_header="beta").id == tenant.project.id
    assert _resolved(tenant, keyed, project=beta.id, project_header="alpha").id == beta.id


def test_an_unknown_project_never_falls_back_to_the_next_rule(tenant, projects):
    with pytest.raises(NotFound):
        _resolved(tenant, project="gamma", project_header="alpha")
    with pytest.raises(NotFound):
        _resolved(tenant, project_header="gamma")


def test_another_workspaces_project_is_404_exactly_like_a_missing_one(svc, tenant):
    other = new_tenant(svc, "other")
    theirs = tenancy.create_project(svc.ports, other.workspace_id, "theirs")
    missing = "prj_01ARZ3NDEKTSV4RRFFQ69G5FAV"

    errors = {}
    for label, ref in [("theirs", theirs.id), ("missing", missing), ("their-slug", "theirs")]:
        with pytest.raises(NotFound) as caught:
            _resolved(tenant, project=ref)
        errors[label] = caught.value
        with pytest.raises(NotFound):
            _resolved(tenant, project_header=ref)

    def shape(error, ref):
        return error.status, error.code, error.message.replace(ref, "<ref>")

    assert shape(errors["theirs"], theirs.id) == shape(errors["missing"], missing)
    assert shape(errors["their-slug"], "theirs") == shape(errors["missing"], missing)


def test_every_tool_acts_in_and_names_the_resolved_project(tenant, projects):
    alpha, _ = projects
    keyed = tenant.key([READ, WRITE], default_project="alpha")
    memory = tenant.call("memory_add", keyed, content="a note in alpha").memory

    for tool in TOOLS.values():
        if tool.name == "memory_add":
            continue
        arguments = arguments_for(tool, memory_id=memory.id, text="note", content="a note in alpha, edited")
        result = tenant.call(tool.name, keyed, **arguments)
        assert (result.project.id, result.project.slug) == (alpha.id, "alpha"), tool.name
        if TOOLS[tool.name].destructive:
            memory = tenant.call("memory_add", keyed, content="a note in alpha").memory
    with pytest.raises(NotFound):
        tenant.call("memory_get", keyed, id=memory.id, project="default")


def test_a_key_default_project_must_be_in_the_keys_workspace(svc, tenant):
    other = new_tenant(svc, "other")

    with pytest.raises(NotFound):
        tenant.key([READ], default_project=other.project.id)


# ---- rate-limit figures ---------------------------------------------------------------------


def test_default_figures_are_120_search_and_60_write_a_minute(tenant):
    limits, custom = tenancy.effective_limits(tenant.svc.ports, tenant.workspace_id, tenant.svc.default_limits)

    assert (limits.search, limits.write, custom) == (120, 60, False)
    search = tenant.svc.invoke("memory_search", tenant.admin, {"q": ""}).rate
    write = tenant.svc.invoke("memory_add", tenant.admin, {"content": "x"}).rate
    assert (search.limit, write.limit) == (120, 60)


def test_a_lowered_limit_takes_effect_on_the_next_call(svc, tenant):
    other = new_tenant(svc, "other")
    tenant.call("memory_search", q="")

    tenancy.set_limits(svc.ports, tenant.workspace_id, RateLimits(search=2, write=60))

    # The bucket keeps the half second the first call used at 120 a minute, less the time since:
    # the second call fits at 2 a minute only if that much time has passed (a loaded machine), so
    # one or two calls are admitted before a refusal, never three (each costs 30 s at 2 a minute)
    tenant.call("memory_search", q="")
    with pytest.raises(RateLimited) as caught:
        tenant.call("memory_search", q="")
        tenant.call("memory_search", q="")
    assert caught.value.retry_after >= 1
    assert caught.value.headers["RateLimit-Policy"] == '"search";q=2;w=60'
    tenant.call("memory_add", content="writes keep their own figure")
    other.call("memory_search", q="")


def test_a_reset_to_the_defaults_refills_at_the_default_rate_from_the_next_call(tenant):
    ports = tenant.svc.ports
    tenancy.set_limits(ports, tenant.workspace_id, RateLimits(search=1, write=1))
    tenant.call("memory_search", q="")
    with pytest.raises(RateLimited) as slow:
        tenant.call("memory_search", q="")
    assert slow.value.retry_after > 30  # one call a minute

    tenancy.set_limits(ports, tenant.workspace_id, None)

    # The bucket stays as empty as it was, but now refills at 120 a minute: the next call is
    # admitted, or refused with a wait of a second instead of a minute.
    try:
        rate = tenant.svc.invoke("memory_search", tenant.admin, {"q": ""}).rate
        assert rate.limit == 120
    except RateLimited as refused:
        assert refused.retry_after == 1
        assert refused.headers["RateLimit-Policy"] == '"search";q=120;w=60'
    assert tenancy.effective_limits(ports, tenant.workspace_id, tenant.svc.default_limits) == (RateLimits(), False)


# ---- admin operations (HTTP /v1/admin) ------------------------------------------------------


def _admin(tenant, name, caller=None, arguments=None, **params):
    return tenant.svc.invoke(name, caller or tenant.admin, arguments or {}, params=params).result


def test_admin_operations_need_the_admin_scope(tenant):
    from mnemo.service.catalog import ADMIN_OPERATIONS

    member = tenant.key([READ, WRITE, DELETE])
    admin_only = [name for name, op in ADMIN_OPERATIONS.items() if op.scopes == {ADMIN}]
    assert set(ADMIN_OPERATIONS) - set(admin_only) == {"whoami"}
    for name in admin_only:
        with pytest.raises(Forbidden):
            _admin(tenant, name, member, {"label": "x", "scopes": [ADMIN], "slug": "x"}, key_id=member.key_id)

    assert [k.label for k in _admin(tenant, "admin_keys_list").keys if k.revoked] == []


def test_an_admin_creates_uses_lists_and_revokes_a_key(tenant, projects):
    created = _admin(
        tenant,
        "admin_key_create",
        arguments={"label": "ci-bot", "scopes": [READ], "default_project": "alpha", "team_ids": ["red"]},
    )
    caller = tenant.svc.authenticate(f"Bearer {created.secret}")
    assert tenant.call("memory_search", caller, q="").project.slug == "alpha"

    listed = {k.id: k for k in _admin(tenant, "admin_keys_list").keys}
    assert listed[created.key.id] == created.key
    assert created.secret not in dumped(_admin(tenant, "admin_keys_list"))
    assert "salt" not in created.key.model_dump() and "secret_hash" not in created.key.model_dump()

    revoked = _admin(tenant, "admin_key_revoke", key_id=created.key.id).key
    assert revoked.revoked
    with pytest.raises(Unauthorized):
        tenant.svc.authenticate(f"Bearer {created.secret}")


@pytest.mark.parametrize(
    "arguments",
    [
        {"label": "x", "scopes": []},
        {"label": "x", "scopes": ["root"]},
        {"label": "", "scopes": [READ]},
        {"label": "x", "scopes": [READ], "workspace_id": "ws_other"},
        {"label": "x", "scopes": [READ], "team_ids": ["has space"]},
    ],
)
def test_invalid_key_specifications_are_400(tenant, arguments):
    with pytest.raises(InvalidRequest):
        _admin(tenant, "admin_key_create", arguments=arguments)


def test_an_admin_key_of_one_workspace_can_never_manage_another(svc, tenant):
    other = new_tenant(svc, "other")
    theirs = other.secret([READ])
    their_key_id = svc.authenticate(f"Bearer {theirs}").key_id
    their_project = tenancy.create_project(svc.ports, other.workspace_id, "theirs")

    with pytest.raises(NotFound):
        _admin(tenant, "admin_key_revoke", key_id=their_key_id)
    with pytest.raises(NotFound):
        _admin(tenant, "admin_key_create", arguments={"label": "x", "scopes": [READ], "default_project": "theirs"})
    with pytest.raises(NotFound):
        _admin(
            tenant, "admin_key_create", arguments={"label": "x", "scopes": [READ], "default_project": their_project.id}
        )
    assert their_key_id not in {k.id for k in _admin(tenant, "admin_keys_list").keys}
    assert their_project.id not in {p.id for p in _admin(tenant, "admin_projects_list").projects}
    created = _admin(tenant, "admin_project_create", arguments={"slug": "theirs"}).project
    assert created.id != their_project.id
    assert svc.authenticate(f"Bearer {theirs}").workspace_id == other.workspace_id
    assert svc.ports.tenants.get_project(other.workspace_id, "theirs") == their_project


def test_an_admin_creates_and_lists_projects_and_slugs_are_unique(tenant):
    created = _admin(tenant, "admin_project_create", arguments={"slug": "docs", "name": "Documentation"}).project

    listed = _admin(tenant, "admin_projects_list").projects
    assert [(p.slug, p.default) for p in listed] == [("default", True), ("docs", False)]
    assert listed[1] == created
    with pytest.raises(Conflict):
        _admin(tenant, "admin_project_create", arguments={"slug": "docs"})
    with pytest.raises(InvalidRequest):
        _admin(tenant, "admin_project_create", arguments={"slug": "Not A Slug"})


def test_an_admin_sees_the_workspace_limits_and_the_buckets_levels(tenant):
    shown = _admin(tenant, "admin_limits_get").model_dump()
    levels = shown.pop("levels")
    assert shown == {"workspace_id": tenant.workspace_id, "search": 120, "write": 60, "custom": False}
    assert levels["write"] == {"limit": 60, "remaining": 60, "full_in_s": 0, "retry_after_s": 0}
    assert levels["search"]["remaining"] == 119  # this call took one

    tenancy.set_limits(tenant.svc.ports, tenant.workspace_id, RateLimits(search=7, write=3))
    for slug in ("one", "two"):
        _admin(tenant, "admin_project_create", arguments={"slug": slug})
    after = _admin(tenant, "admin_limits_get")
    assert (after.search, after.custom) == (7, True)
    assert (after.levels.write.limit, after.levels.write.remaining) == (3, 1)
    assert 30 <= after.levels.write.full_in_s <= 40 and after.levels.write.retry_after_s == 0
    _admin(tenant, "admin_project_create", arguments={"slug": "three"})
    empty = _admin(tenant, "admin_limits_get").levels.write
    assert (empty.remaining, 1 <= empty.retry_after_s <= 20) == (0, True)


# ---- whoami ---------------------------------------------------------------------------------


def test_whoami_tells_any_key_what_it_is_and_may_do_and_never_its_secret(tenant, projects):
    plain = tenant.secret([READ], label="reader", default_project="alpha", team_ids=["red"])
    reader = tenant.svc.authenticate(f"Bearer {plain}")

    me = tenant.svc.invoke("whoami", reader).result

    assert (me.key.id, me.key.label, me.key.scopes, me.key.team_ids) == (reader.key_id, "reader", [READ], ["red"])
    assert me.key.default_project_id == projects[0].id
    assert (me.workspace.id, me.workspace.default_project_id) == (tenant.workspace_id, tenant.project.id)
    assert [(p.slug, p.default) for p in me.projects] == [("default", True), ("alpha", False), ("beta", False)]
    read_tools_names = [name for name, op in TOOLS.items() if READ in op.scopes]
    assert me.operations == [*read_tools_names, "whoami"]
    stored = tenant.svc.ports.tenants.get_key(reader.key_id)
    dumped_me = me.model_dump_json()
    assert plain not in dumped_me and stored.salt not in dumped_me and stored.secret_hash not in dumped_me


def test_whoami_lists_every_operation_for_an_admin_and_the_deleting_ones_for_a_delete_key(tenant):
    from mnemo.service.catalog import REGISTRY

    assert tenant.svc.invoke("whoami", tenant.admin).result.operations == [op.name for op in REGISTRY]
    deleter = tenant.key([DELETE])
    assert tenant.svc.invoke("whoami", deleter).result.operations == ["memory_delete", "forget", "whoami"]


# ---- export over HTTP -----------------------------------------------------------------------


def test_the_export_pages_through_a_project_exactly_like_mnemo_export(tenant, projects):
    from datetime import timedelta

    from mnemo.models.common import utc_now
    from mnemo.service import transfer

    alpha = projects[0]
    ids = [tenant.call("memory_add", content=f"export me {n}", project="alpha").memory.id for n in range(5)]
    tenant.call("memory_add", content="another project's", project="beta")
    soon = tenant.call(
        "memory_add", content="expires", project="alpha", expires_at=(utc_now() + timedelta(hours=1)).isoformat()
    ).memory
    later = utc_now() + timedelta(hours=2)  # the last one has expired by then

    pages, cursor = [], None
    while True:
        arguments = {"project": "alpha", "limit": 2, **({"cursor": cursor} if cursor else {})}
        page = tenant.svc.invoke("admin_project_export", tenant.admin, arguments, now=later).result
        pages.append(page)
        cursor = page.cursor
        if cursor is None:
            break

    exported = [m for page in pages for m in page.memories]
    assert [m.id for m in exported] == sorted(ids)
    assert soon.id not in {m.id for m in exported}
    assert all(page.project.slug == "alpha" and len(page.memories) <= 2 for page in pages)
    lines = [r.model_dump() for r in transfer.export_project(tenant.svc.ports, alpha, now=later)]
    assert [m.model_dump() for m in exported] == [{**line} for line in lines]


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"project": "default", "cursor": "not-a-memory-id"},
        {"project": "default", "limit": 0},
        {"project": "default", "limit": 501},
        {"project": "default", "since": "yesterday"},
    ],
)
def test_bad_export_arguments_are_400(tenant, arguments):
    with pytest.raises(InvalidRequest):
        _admin(tenant, "admin_project_export", arguments=arguments)


def test_an_export_of_another_workspaces_project_is_404(svc, tenant):
    other = new_tenant(svc, "other")
    other.call("memory_add", content="not yours")

    with pytest.raises(NotFound):
        _admin(tenant, "admin_project_export", arguments={"project": other.project.id})


def test_admin_operations_are_rate_limited_by_their_class(tenant):
    tenancy.set_limits(tenant.svc.ports, tenant.workspace_id, RateLimits(search=120, write=1))
    _admin(tenant, "admin_project_create", arguments={"slug": "one"})

    with pytest.raises(RateLimited):
        _admin(tenant, "admin_project_create", arguments={"slug": "two"})
    assert len(_admin(tenant, "admin_projects_list").projects) == 2


@pytest.mark.parametrize(("name", "slug"), [("", "default"), ("x" * 129, "default"), ("a\nb", "default"), ("ok", "No")])
def test_invalid_workspace_names_and_slugs_are_refused(svc, name, slug):
    before = len(svc.ports.tenants.list_workspaces())

    with pytest.raises(InvalidRequest):
        tenancy.create_workspace(svc.ports, name, project_slug=slug)
    assert len(svc.ports.tenants.list_workspaces()) == before
