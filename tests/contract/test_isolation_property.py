"""Property: a key of workspace A can never read, list, search, update, delete or forget anything
of workspace B, whatever ids, project slugs or ids, X-Project headers, team_id filters or
idempotency keys it sends, in any sequence of calls (docs/contract.md §1). On every backend.

Each test builds two fresh workspaces that look alike on purpose: both have a project with
the slug ``shared`` and memories of a team called ``red``, and B has used the idempotency key
that A will try. A then runs a random sequence of calls of the tools registered at run time,
with any of its keys. After every call:

* a call that named one of B's projects (as argument, or as header with no argument) or one of
  B's memories failed, with 400, 403 or 404 only (never 409, which would hint it exists);
* a successful answer holds none of B's memory ids, project ids or contents;
* A's first use of an idempotency key that B holds is neither B's stored answer nor a 409;

and after each sequence B's projects hold exactly the records they held before, found by the
same searches. The workspaces are built once per test and shared by its examples (A's side
drifts as sequences add, change and delete A's memories; B must not change at all).
Budget: ``examples("isolation")`` (tests/support/fuzz.py: 30 in ``make test``, more in ``make fuzz``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mnemo.errors import Forbidden, InvalidRequest, MnemoError, NotFound
from mnemo.ids import memory_id
from mnemo.models.records import RateLimits
from mnemo.service import tenancy, transfer
from mnemo.service.catalog import TOOLS
from mnemo.service.identity import DELETE, READ, WRITE

from tests.contract.conftest import new_tenant
from tests.contract.tool_args import arguments_for, dumped
from tests.support.fuzz import examples

pytestmark = [pytest.mark.fuzz]

MARKER = "zebrasecret"  # a word in every B memory, used by A's queries
SHARED_KEY = "shared-idempotency-key"

KEYS = ("admin", "writer", "red", "reader", "deleter")
MEMORY_REFS = ("b_plain", "b_red", "b_blue", "b_shared", "a_plain", "a_red", "a_latest", "unknown", None)
PROJECT_REFS = (
    None,
    "b_default_id",
    "b_shared_id",
    "b_only_slug",
    "b_only_id",
    "shared",
    "default",
    "a_shared_id",
    "unknown",
)
TEAMS = (None, "red", "blue", "green")
TEXTS = (MARKER, f"{MARKER} red", "", "note", "数据库", "launch plan")


@dataclass
class World:
    a: object
    b: object
    keys: dict
    memory_ids: dict
    projects: dict
    b_projects: list
    b_ids: set
    b_texts: list
    a_latest: list = field(default_factory=list)
    before: object = None
    b_answer: dict = field(default_factory=dict)


def build_world(svc) -> World:
    a, b = new_tenant(svc, "a"), new_tenant(svc, "b")
    ports = svc.ports
    tenancy.set_limits(ports, a.workspace_id, RateLimits(search=1_000_000, write=1_000_000))
    tenancy.set_limits(ports, b.workspace_id, RateLimits(search=1_000_000, write=1_000_000))
    a_shared = tenancy.create_project(ports, a.workspace_id, "shared")
    b_shared = tenancy.create_project(ports, b.workspace_id, "shared")
    b_only = tenancy.create_project(ports, b.workspace_id, "b-only")

    token = uuid.uuid4().hex  # appears only in B's contents, never in a query
    b_texts = []

    def b_add(**arguments):
        content = f"{MARKER} {arguments.pop('content')} {token}"
        b_texts.append(content)
        return b.call("memory_add", content=content, **arguments).memory.id

    memory_ids = {
        "b_plain": b_add(content="note launch plan 数据库"),
        "b_red": b_add(content="red launch plan", team_id="red"),
        "b_blue": b_add(content="blue note", team_id="blue", kind="working"),
        "b_shared": b_add(content="shared note", project="shared"),
    }
    b_add(content="b only note", project="b-only", idempotency_key=SHARED_KEY)
    b_add(content="note with the shared key", idempotency_key=SHARED_KEY + "-2")
    b.call("memory_add", content=f"{MARKER} idem {token}", project="shared", idempotency_key=SHARED_KEY + "-3")

    red = a.secret([READ, WRITE, DELETE], team_ids=["red"])
    memory_ids["a_plain"] = a.call("memory_add", content="a side note launch plan 数据库").memory.id
    memory_ids["a_red"] = a.call("memory_add", content="a side red launch plan", team_id="red").memory.id
    a.call("memory_add", content="a side note in shared", project="shared")

    keys = {
        "admin": a.admin,
        "writer": a.key([READ, WRITE]),
        "red": svc.authenticate(f"Bearer {red}"),
        "reader": a.key([READ]),
        "deleter": a.key([DELETE]),
    }
    projects = {
        "b_default_id": b.project.id,
        "b_shared_id": b_shared.id,
        "b_only_slug": "b-only",
        "b_only_id": b_only.id,
        "shared": "shared",
        "default": "default",
        "a_shared_id": a_shared.id,
        "unknown": "prj_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    }
    b_projects = [b.project, b_shared, b_only]
    b_ids = {r.id for p in b_projects for r in transfer.export_project(ports, p)}
    world = World(a, b, keys, memory_ids, projects, b_projects, b_ids, b_texts)
    world.before = b_state(world)
    world.b_answer = b.call("memory_get", id=memory_ids["b_plain"]).model_dump(mode="json")
    return world


def b_state(world: World):
    """B's records, and what B's own searches find, per project."""
    ports = world.b.svc.ports
    records = {p.id: list(transfer.export_project(ports, p, include_expired=True)) for p in world.b_projects}
    found = {
        p.id: sorted(m.id for m in world.b.call("memory_search", q=MARKER, project=p.id, limit=100).memories)
        for p in world.b_projects
    }
    return records, found


operations = st.lists(
    st.tuples(
        st.sampled_from(sorted(TOOLS)),
        st.sampled_from(KEYS),
        st.sampled_from(MEMORY_REFS),
        st.sampled_from(PROJECT_REFS),  # argument
        st.sampled_from(PROJECT_REFS),  # X-Project header
        st.sampled_from(TEAMS),
        st.sampled_from(TEXTS),
        st.booleans(),  # send B's idempotency key
    ),
    min_size=1,
    max_size=8,
)


@pytest.fixture
def world(svc) -> World:
    """Built once per test, shared by its examples: B must never change, so what B holds
    before the first example is what it must hold after each one; A's side may drift."""
    return build_world(svc)


@settings(
    max_examples=examples("isolation"),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations)
def test_a_key_of_one_workspace_never_reaches_another(world, ops):
    before = world.before
    world.a_latest.clear()
    leaks = [*world.b_ids, *(p.id for p in world.b_projects), *world.b_texts]
    # B holds a fresh idempotency key for this example, whose stored answer is one of B's
    # memories; A's first use of that key must neither replay it nor be refused (409) as reused,
    # and A's later uses in the sequence (the random calls may send it) replay A's own answer.
    b_key = f"{SHARED_KEY}-{uuid.uuid4().hex}"
    world.b.svc.ports.idempotency.run_once(world.b.workspace_id, b_key, "b-fingerprint", lambda: world.b_answer)
    first = world.a.svc.invoke("memory_add", world.keys["writer"], {"content": "a side note"}, idempotency_key=b_key)
    assert not [leak for leak in leaks if leak in dumped(first.result)], "A's first use of B's key replayed B"
    world.a_latest.append(first.result.memory.id)

    for tool_name, key, memory_ref, project_ref, header_ref, team, text, reuse_key in ops:
        tool = TOOLS[tool_name]
        target = world.memory_ids.get(memory_ref) if memory_ref else None
        if memory_ref == "a_latest":
            target = world.a_latest[-1] if world.a_latest else None
        if memory_ref == "unknown":
            target = memory_id()
        project = world.projects.get(project_ref) if project_ref else None
        header = world.projects.get(header_ref) if header_ref else None
        arguments = arguments_for(
            tool,
            memory_id=target,
            text=text,
            content=f"a side note {text}".strip(),
            project=project,
            team_id=team,
            idempotency_key=b_key if reuse_key else None,
        )
        effective = project_ref if project_ref is not None else header_ref  # docs/contract.md §1: argument first
        resolved_to_b = effective is not None and effective.startswith("b_")
        names_b_memory = target in world.b_ids and any(f in arguments for f in ("id", "reference"))

        try:
            result = world.a.svc.invoke(
                tool_name,
                world.keys[key],
                arguments,
                project_header=header,
                idempotency_key=b_key if reuse_key else None,
            ).result
        except MnemoError as error:
            if resolved_to_b or names_b_memory:
                assert isinstance(error, InvalidRequest | Forbidden | NotFound), (tool_name, error.code)
            assert not any(leak in error.message for leak in world.b_texts), (tool_name, error.message)
            continue

        answer = dumped(result)
        assert not resolved_to_b, f"{tool_name} acted in B's project {project_ref or header_ref}"
        assert not names_b_memory, f"{tool_name} reached B's memory {memory_ref}"
        assert not [leak for leak in leaks if leak in answer], (tool_name, answer)
        memory = getattr(result, "memory", None)
        if tool_name == "memory_add" and memory is not None:
            world.a_latest.append(memory.id)

    assert b_state(world) == before
