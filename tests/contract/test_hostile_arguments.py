"""Hostile arguments at the service, on every backend: query syntax of SQL LIKE, FTS5 and
OpenSearch is plain text, wildcards in exact filters are literal, the 4096-byte content edge
holds for multi-byte characters, and a rejected call leaves the store as it was."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mnemo import text
from mnemo.errors import ContentTooLarge, InvalidRequest, MnemoError
from mnemo.like import MAX_LIKE_ANY_ONE_AFTER_RUN, MAX_LIKE_ANY_RUNS, MAX_LIKE_LENGTH, like_matches, like_problem
from mnemo.models.records import RateLimits
from mnemo.service import tenancy
from mnemo.service.catalog import TOOLS

from tests.contract.conftest import Tenant
from tests.hardening.spec import ODD_QUERIES
from tests.support.fuzz import examples

pytestmark = [pytest.mark.fuzz]

SEEDS = [
    ("alpha beta gamma", "insight", ["seed"], "acme/pricing"),
    ("100% sure_thing: a\\b path* (draft) -not ^boost", "decision", ["100%", "a_b"], "acme/100%"),
    ('say "NEAR" AND mean it OR NOT', "working", ["near"], "acme/a_b"),
    ("数据库延迟很高", None, ["数据"], "acme/axb"),
    ("content:alpha scope:x {content}: beta", None, [], "back\\slash"),
]


@pytest.fixture
def seeded(tenant: Tenant) -> Tenant:
    for content, kind, tags, path in SEEDS:
        tenant.call("memory_add", content=content, kind=kind, tags=tags, path=path)
    return tenant


def snapshot(tenant: Tenant) -> list[Any]:
    return tenant.call("memory_search", q="", limit=100).memories


def terms_of(memory: Any) -> set[str]:
    return set(text.terms(" ".join([memory.content, *memory.tags, memory.path or ""])))


def rejected(tenant: Tenant, error: type[MnemoError], tool: str, arguments: Any) -> MnemoError:
    before = snapshot(tenant)
    with pytest.raises(error) as caught:
        tenant.svc.invoke(tool, tenant.admin, arguments)
    assert snapshot(tenant) == before
    return caught.value


@pytest.mark.parametrize("query", ODD_QUERIES)
def test_query_syntax_is_plain_text(seeded, query):
    before = snapshot(seeded)
    terms = text.query_terms(query)
    expected = {m.id for m in before if terms and all(text.term_matches(t, terms_of(m)) for t in terms)}

    found = seeded.call("memory_search", q=query, limit=100).memories

    assert {m.id for m in found} == expected
    assert snapshot(seeded) == before


@pytest.mark.parametrize("value", ["%", "_", "\\", "*", '"', "(", ":", "AND", "a%b", "' OR 1=1 --", "100%", "a_b"])
def test_wildcards_in_exact_filters_are_literal(seeded, value):
    marked = seeded.call("memory_add", content="filter target", kind=value, tags=[value]).memory

    by_kind = seeded.call("memory_search", kind=value, limit=100).memories
    by_tag = seeded.call("memory_search", tags=[value], limit=100).memories

    assert [m.id for m in by_kind] == [marked.id]
    assert {m.id for m in by_tag} == {m.id for m in snapshot(seeded) if value in m.tags}
    assert marked.id in {m.id for m in by_tag}


@pytest.mark.parametrize(
    ("char", "size"), [("a", 1), ("é", 2), ("€", 3), ("😀", 4)], ids=["1-byte", "2-byte", "3-byte", "4-byte"]
)
def test_the_4096_byte_edge_holds_for_every_utf8_width(tenant, char, size):
    count, rest = divmod(4096, size)
    fits = char * count + "a" * rest
    assert len(fits.encode()) == 4096

    stored = tenant.call("memory_add", content=fits).memory
    error = rejected(tenant, ContentTooLarge, "memory_add", {"content": fits + "a"})

    assert tenant.call("memory_get", id=stored.id).memory.content == fits
    assert error.code == "content_too_large"
    rejected(tenant, ContentTooLarge, "memory_update", {"id": stored.id, "content": fits + "a"})
    assert tenant.call("memory_get", id=stored.id).memory == stored


@pytest.mark.parametrize("arguments", [[], "content", None, 42, [("content", "x")]], ids=repr)
def test_arguments_that_are_not_an_object_are_invalid(tenant, arguments):
    rejected(tenant, InvalidRequest, "memory_add", arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        {"content": "a\x00b"},
        {"content": "\ud800"},
        {"content": "x", "kind": "\x00"},
        {"content": "x", "tags": ["a\x00"]},
        {"content": "x", "path": "\x07bell"},
        {"content": "x", "tags": [f"t{i}" for i in range(10_000)]},
        {"content": "x", "tags": ["t" * 65]},
        {"content": "x", "kind": "k" * 65},
        {"content": "x", "path": "p" * 513},
        {"content": "x", "team_id": "../../etc"},
    ],
    ids=[
        "NUL content",
        "surrogate",
        "NUL kind",
        "NUL tag",
        "BEL path",
        "10k tags",
        "long tag",
        "long kind",
        "long path",
        "team",
    ],
)
def test_malformed_fields_are_invalid_and_write_nothing(tenant, arguments):
    error = rejected(tenant, InvalidRequest, "memory_add", arguments)
    assert error.details


@pytest.mark.parametrize(
    ("arguments", "loc"),
    [
        ({"content": "x", "kind": "k" * 65}, ["kind"]),
        ({"content": "x", "kind": 5}, ["kind"]),
        ({"content": "x", "session": "s" * 129}, ["session"]),
        ({"content": "x", "tags": ["t" * 65]}, ["tags", 0]),
    ],
    ids=["long kind", "kind a number", "long session", "long tag"],
)
def test_an_optional_fields_refusal_names_the_field_alone(tenant, arguments, loc):
    """The details name the field the caller sent (what the console shows), never a union branch's tag."""
    error = rejected(tenant, InvalidRequest, "memory_add", arguments)
    assert [d["loc"] for d in error.details] == [loc]


@pytest.mark.parametrize(
    "pattern",
    ["acme/100\\%", "acme/a\\_b", "acme/a_b", "ACME/%", "back\\\\slash", "%\\", "\\", "%%%", "_%_"],
)
def test_like_patterns_follow_the_spec(seeded, pattern):
    """search_memory's path_filter: ``%`` any run, ``_`` one character, ``\\`` escapes,
    case-insensitive; a malformed pattern is a 400, never a crash."""
    if "search_memory" not in TOOLS:
        pytest.skip("search_memory is not registered yet")
    paths = {m.id: m.path for m in snapshot(seeded)}
    try:
        result = seeded.call("search_memory", query="a", path_filter=pattern, limit=50)
    except InvalidRequest:
        return  # a pattern ending in a lone escape may be refused
    assert {item.reference for item in result.results} <= {mid for mid, p in paths.items() if _like(pattern, p)}


def _like(pattern: str, value: str | None) -> bool:
    import re

    out, escaped = [], False
    for ch in pattern:
        if escaped:
            out.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    if escaped:
        out.append(re.escape("\\"))
    return re.fullmatch("".join(out), (value or "").casefold(), re.DOTALL | re.IGNORECASE) is not None


#: paths and kinds over few letters (one whose case folding doubles it), so random patterns match
LIKE_VALUES = ["a/b", "ab/ba", "A/ß", "ss/a", "a_b", "a%b", "b\\a", "aaaa/bbbb", "ß/ss/ß", "", "a" * 64]
LIKE_TOKENS = ["a", "b", "s", "ß", "/", "A", "%", "_", "\\%", "\\_", "\\\\"]

#: at the bounds, shaped after what costs OpenSearch's automaton most (bench/results/like.md)
_ONES, _RUNS, _LONGEST = MAX_LIKE_ANY_ONE_AFTER_RUN, MAX_LIKE_ANY_RUNS, MAX_LIKE_LENGTH
WORST_PATTERNS = [
    ("%a" + "_" * _ONES + "b" * _LONGEST)[:_LONGEST],
    ("%a" + "_" * _ONES + "%b" * (_RUNS - 1) + "b" * _LONGEST)[:_LONGEST],
    "%" + "b" * (_LONGEST - 2) + "%",
    "%" + "ΐ" * (_LONGEST - 2) + "%",  # each folds to three characters
    ("%a_" * _ONES + "%b" * (_RUNS - _ONES) + "ab" * _LONGEST)[:_LONGEST],
    ("_" * (_LONGEST - 2 * _RUNS - _ONES) + "%a" + "_" * _ONES + "%b" * (_RUNS - 1))[:_LONGEST],
]


@pytest.fixture
def like_seeded(tenant: Tenant) -> Tenant:
    # hundreds of searches in make fuzz: the workspace's bucket must not be what answers
    tenancy.set_limits(tenant.svc.ports, tenant.workspace_id, RateLimits(search=1_000_000, write=1_000_000))
    for i, value in enumerate(LIKE_VALUES):
        tenant.call("memory_add", content=f"likeseed {i}", path=value or None, kind=LIKE_VALUES[-1 - i] or None)
    return tenant


@settings(
    max_examples=examples("hostile_arguments"),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    path_filter=st.lists(st.sampled_from(LIKE_TOKENS), min_size=1, max_size=10).map("".join),
    memory_type=st.one_of(st.just("%"), st.lists(st.sampled_from(LIKE_TOKENS), min_size=1, max_size=6).map("".join)),
)
@example(path_filter=WORST_PATTERNS[0], memory_type=WORST_PATTERNS[1])
@example(path_filter=WORST_PATTERNS[2], memory_type=WORST_PATTERNS[3])
@example(path_filter=WORST_PATTERNS[4], memory_type=WORST_PATTERNS[5])
def test_every_valid_pattern_filters_exactly_as_the_reference_matcher(like_seeded, path_filter, memory_type):
    """Each backend's own translation (SQLite LIKE, an OpenSearch wildcard query) selects exactly the
    memories ``mnemo.like.like_matches`` selects, and a pattern within the schema's bounds — the
    costliest shapes included — is never refused by the engine; one outside them is a 400."""
    problems = [like_problem(path_filter), like_problem(memory_type)]
    arguments = {"query": "likeseed", "path_filter": path_filter, "memory_type": memory_type, "limit": 50}
    if any(problems):
        with pytest.raises(InvalidRequest):
            like_seeded.svc.invoke("search_memory", like_seeded.admin, arguments)
        return
    memories = snapshot(like_seeded)
    expected = {m.id for m in memories if like_matches(path_filter, m.path) and like_matches(memory_type, m.kind)}

    found = like_seeded.svc.invoke("search_memory", like_seeded.admin, arguments).result

    assert {item.reference for item in found.results} == expected
    assert found.matched is bool(expected)
