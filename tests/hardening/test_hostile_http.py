"""Hostile requests against a real ``mnemo serve``: each gets the answer of docs/contract.md §4 and changes nothing.

Every attack runs between two snapshots of the store (the whole project listed through the API);
a rejected request that wrote anything, or an odd query that broke the index, shows as a diff."""

from __future__ import annotations

import json
import socket

import pytest
from mnemo import text
from mnemo.service.catalog import TOOLS

from tests.contract.tool_args import arguments_for
from tests.hardening.conftest import MCP_META, Outcome, Reply, call, mcp_call, rest_call, send
from tests.hardening.spec import INTERNALS, ODD_QUERIES, assert_spec_error
from tests.support.server import RunningServer

pytestmark = [pytest.mark.slow]

ADD = "/v1/tools/memory_add"
SEARCH = "/v1/tools/memory_search"
KIB = 1024


def snapshot(server: RunningServer) -> list[dict]:
    """Every memory of the project as stored (the listing is capped at 100: stay under it)."""
    reply = call(server, "memory_search", {"q": "", "limit": 100})
    assert reply.status == 200, reply.raw
    memories = reply.body["memories"]
    assert len(memories) < 100, "the snapshot must see the whole project"
    return memories


def terms_of(memory: dict) -> set[str]:
    return set(text.terms(" ".join([memory["content"], *memory["tags"], memory["path"] or ""])))


@pytest.fixture(scope="module")
def seeded(hard_server: RunningServer) -> RunningServer:
    """A few memories (some with metacharacters in them) for the attacks to leave alone."""
    for content in [
        "alpha beta gamma",
        "100% sure_thing: a\\b path* (draft) -not ^boost",
        'say "NEAR" AND mean it OR NOT',
        "数据库延迟很高",
    ]:
        assert call(hard_server, "memory_add", {"content": content, "tags": ["seed"]}).status == 200
    return hard_server


def rejected(server: RunningServer, reply_of: object, status: int, code: str) -> Reply:
    """Run the attack between two snapshots; the reply is the error of docs/contract.md §4 and the
    store is untouched."""
    before = snapshot(server)
    reply = reply_of() if callable(reply_of) else reply_of
    assert isinstance(reply, Reply)
    assert reply.status == status, reply.raw[:300]
    assert_spec_error(reply.status, reply.raw, code)
    assert snapshot(server) == before
    return reply


NESTED = 30 * KIB  # deep, yet under the 64 KiB body limit, so the parser itself must cope

MALFORMED_BODIES = {
    "invalid UTF-8": b'{"content": "caf\xe9 \xff\xfe"}',
    "overlong UTF-8": b'{"content": "\xc0\xaf"}',
    "UTF-8 encoded surrogate (CESU)": b'{"content": "\xed\xa0\x80"}',
    "UTF-16 body": json.dumps({"content": "utf16"}).encode("utf-16"),
    "truncated JSON": b'{"content": "abc"',
    "single quotes": b"{'content': 'abc'}",
    "trailing garbage": b'{"content": "abc"} {"content": "def"}',
    "raw NUL inside a string": b'{"content": "a\x00b"}',
    "raw newline inside a string": b'{"content": "a\nb"}',
    "bare word": b"content",
    "deeply nested arrays": b"[" * NESTED + b"]" * NESTED,
    "unclosed deep nesting": b"[" * (60 * KIB),
    "deeply nested objects": b'{"a":' * 6000 + b"1" + b"}" * 6000,
    "deep nesting inside an argument": b'{"content": "x", "tags": ' + b"[" * NESTED + b"]" * NESTED + b"}",
    "duplicate keys": b'{"content": "first", "content": "second"}',
    "duplicate nested keys": b'{"content": "x", "expires_at": null, "expires_at": null}',
    "NaN": b'{"content": "x", "if_version": NaN}',
    "Infinity": b'{"content": "x", "limit": Infinity}',
    "integer of 5000 digits": b'{"content": "x", "limit": ' + b"9" * 5000 + b"}",
}


@pytest.mark.parametrize("body", MALFORMED_BODIES.values(), ids=MALFORMED_BODIES.keys())
def test_a_body_that_is_not_one_utf8_json_document_is_400(seeded, body):
    rejected(seeded, lambda: send(seeded, ADD, body), 400, "invalid_request")


NOT_OBJECTS = {"array": b"[]", "string": b'"content"', "number": b"1", "null": b"null", "true": b"true"}


@pytest.mark.parametrize("body", NOT_OBJECTS.values(), ids=NOT_OBJECTS.keys())
def test_a_body_that_is_not_a_json_object_is_400(seeded, body):
    rejected(seeded, lambda: send(seeded, ADD, body), 400, "invalid_request")


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"],
)
def test_a_body_that_is_not_json_by_content_type_is_400(seeded, content_type):
    body = json.dumps({"content": "sent as something else"}).encode()
    rejected(seeded, lambda: send(seeded, ADD, body, content_type=content_type), 400, "invalid_request")


def test_a_body_over_64_kib_is_413_even_when_it_is_valid_json(seeded):
    body = b'{"content": "padding follows"}'
    body += b" " * (64 * KIB + 1 - len(body))

    rejected(seeded, lambda: send(seeded, ADD, body), 413, "content_too_large")


def test_a_body_of_exactly_64_kib_is_accepted(hard_server):
    body = b'{"content": "exactly 64 KiB"}'
    body += b" " * (64 * KIB - len(body))

    reply = send(hard_server, ADD, body)

    assert reply.status == 200, reply.raw
    assert reply.body["memory"]["content"] == "exactly 64 KiB"


def test_a_body_far_over_the_limit_is_refused_before_it_is_read(seeded):
    """A Content-Length of 2 MiB is answered 413 at once, without waiting for (or reading) the body."""

    def announce_only() -> Reply:
        host, port = seeded.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                f"POST {ADD} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {seeded.key}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {2 * KIB * KIB}\r\n\r\n".encode()
            )
            head, _, body = sock.makefile("rb").read().partition(b"\r\n\r\n")
        status = int(head.split()[1])
        headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
        return Reply(status, {k.lower(): v for k, v in headers.items()}, body)

    rejected(seeded, announce_only, 413, "content_too_large")


#: (character, its UTF-8 size): content made of it exactly fills 4096 bytes, one more byte does not fit
EDGE_CHARACTERS = [("a", 1), ("é", 2), ("€", 3), ("😀", 4)]


def _content_of(char: str, size: int, total: int) -> str:
    count, rest = divmod(total, size)
    return char * count + "a" * rest


@pytest.mark.parametrize(("char", "size"), EDGE_CHARACTERS, ids=["1-byte", "2-byte", "3-byte", "4-byte"])
def test_content_of_exactly_4096_utf8_bytes_is_stored_verbatim(hard_server, char, size):
    content = _content_of(char, size, 4096)
    assert len(content.encode()) == 4096

    added = call(hard_server, "memory_add", {"content": content})

    assert added.status == 200, added.raw[:300]
    got = call(hard_server, "memory_get", {"id": added.body["memory"]["id"]})
    assert got.body["memory"]["content"] == content


@pytest.mark.parametrize(("char", "size"), EDGE_CHARACTERS, ids=["1-byte", "2-byte", "3-byte", "4-byte"])
def test_content_of_4097_utf8_bytes_is_413(seeded, char, size):
    content = _content_of(char, size, 4097)
    assert len(content.encode()) == 4097

    rejected(seeded, lambda: call(seeded, "memory_add", {"content": content}), 413, "content_too_large")


@pytest.mark.parametrize(("char", "size"), EDGE_CHARACTERS[1:], ids=["2-byte", "3-byte", "4-byte"])
def test_an_update_to_4097_utf8_bytes_is_413_and_keeps_the_old_content(hard_server, char, size):
    memory = call(hard_server, "memory_add", {"content": "before"}).body["memory"]

    rejected(
        hard_server,
        lambda: call(hard_server, "memory_update", {"id": memory["id"], "content": _content_of(char, size, 4097)}),
        413,
        "content_too_large",
    )
    assert call(hard_server, "memory_get", {"id": memory["id"]}).body["memory"] == memory


BAD_ARGUMENTS = {
    "NUL in content": {"content": "a\u0000b"},
    "NUL in kind": {"content": "x", "kind": "a\u0000"},
    "NUL in a tag": {"content": "x", "tags": ["a\u0000"]},
    "NUL in path": {"content": "x", "path": "a/\u0000"},
    "control character in source": {"content": "x", "source": "a\u001bb"},
    "lone surrogate in content": {"content": "\ud800"},
    "lone surrogate in a tag": {"content": "x", "tags": ["\udfff"]},
    "21 tags": {"content": "x", "tags": [f"t{i}" for i in range(21)]},
    "5000 tags": {"content": "x", "tags": [f"t{i}" for i in range(5000)]},
    "a tag of 65 characters": {"content": "x", "tags": ["t" * 65]},
    "an empty tag": {"content": "x", "tags": [""]},
    "tags not a list": {"content": "x", "tags": "a,b"},
    "kind of 65 characters": {"content": "x", "kind": "k" * 65},
    "path of 513 characters": {"content": "x", "path": "p" * 513},
    "empty content": {"content": ""},
    "content not a string": {"content": 42},
    "content an object": {"content": {"$ne": ""}},
    "unknown argument": {"content": "x", "contnet": "typo"},
    "team id with spaces": {"content": "x", "team_id": "a b"},
    "expires_at without offset": {"content": "x", "expires_at": "2999-01-01T00:00:00"},
    "expires_at in the past": {"content": "x", "expires_at": "2001-01-01T00:00:00Z"},
    "expires_at not a date": {"content": "x", "expires_at": "tomorrow"},
    "project of 65 characters": {"content": "x", "project": "p" * 65},
}


@pytest.mark.parametrize("arguments", BAD_ARGUMENTS.values(), ids=BAD_ARGUMENTS.keys())
def test_bad_arguments_to_memory_add_are_400(seeded, arguments):
    reply = rejected(seeded, lambda: call(seeded, "memory_add", arguments), 400, "invalid_request")
    assert reply.body.get("details") or "expires_at" in reply.body["message"]


BAD_SEARCHES = {
    "query over 4096 characters": {"q": "x" * 4097},
    "limit 0": {"limit": 0},
    "limit 101": {"limit": 101},
    "limit negative": {"limit": -1},
    "limit fractional": {"limit": 1.5},
    "limit huge": {"limit": 10**30},
    "limit a boolean": {"limit": True},
    "limit a numeric string": {"limit": "10"},
    "query not a string": {"q": ["alpha"]},
    "tags filter of 21": {"tags": [f"t{i}" for i in range(21)]},
    "kind filter with NUL": {"kind": "a\u0000"},
}


@pytest.mark.parametrize("arguments", BAD_SEARCHES.values(), ids=BAD_SEARCHES.keys())
def test_bad_arguments_to_memory_search_are_400(seeded, arguments):
    rejected(seeded, lambda: call(seeded, "memory_search", arguments), 400, "invalid_request")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search_memory", {"query": "alpha", "explain": "yes"}),
        ("search_memory", {"query": "alpha", "prefer_working": 1}),
        ("recall", {"query": "alpha", "limit": True}),
        ("recall_context", {"query": "alpha", "max_tokens": "2000"}),
        ("memory_update", {"id": "mem_" + "0" * 26, "if_version": True}),
    ],
    ids=[
        "explain a string",
        "prefer_working a number",
        "limit a boolean",
        "max_tokens a string",
        "if_version a boolean",
    ],
)
def test_scalars_of_the_wrong_json_type_are_400(seeded, tool, arguments):
    reply = rejected(seeded, lambda: call(seeded, tool, arguments), 400, "invalid_request")
    assert [d["loc"] for d in reply.body["details"]] == [[next(k for k in arguments if k not in ("id", "query"))]]


@pytest.mark.parametrize(
    "if_version",
    [10**30, 2**63, 2**64 + 1],
    ids=["10^30", "2^63", "2^64+1"],
)
def test_a_huge_if_version_is_a_conflict_not_a_crash(hard_server, if_version):
    memory = call(hard_server, "memory_add", {"content": "guarded"}).body["memory"]

    reply = call(hard_server, "memory_update", {"id": memory["id"], "content": "x", "if_version": if_version})

    assert reply.status == 409, reply.raw
    assert_spec_error(409, reply.raw, "conflict")
    assert call(hard_server, "memory_get", {"id": memory["id"]}).body["memory"] == memory


def test_a_malformed_memory_id_is_400_and_a_well_formed_unknown_one_is_404(seeded):
    rejected(seeded, lambda: call(seeded, "memory_get", {"id": "mem_' OR 1=1 --"}), 400, "invalid_request")
    rejected(seeded, lambda: call(seeded, "memory_get", {"id": "mem_" + "0" * 26}), 404, "not_found")


@pytest.mark.parametrize("query", ODD_QUERIES)
def test_metacharacters_in_a_query_are_just_text(seeded, query):
    """An odd query is a success whose answer is what "every term matches" means for its terms."""
    before = snapshot(seeded)
    terms = text.query_terms(query)
    expected = sorted(m["id"] for m in before if terms and all(text.term_matches(t, terms_of(m)) for t in terms))

    reply = call(seeded, "memory_search", {"q": query, "limit": 100})

    assert reply.status == 200, reply.raw[:300]
    assert sorted(m["id"] for m in reply.body["memories"]) == expected
    assert snapshot(seeded) == before


@pytest.mark.parametrize("value", ["%", "_", "\\", "*", '"', "(", ":", "AND", "a%b", "' OR 1=1 --", "se%"])
def test_metacharacters_in_filters_match_only_themselves(seeded, value):
    """``kind`` is exact and ``tags`` are exact: a wildcard there is a literal character."""
    marked = call(seeded, "memory_add", {"content": "filter target", "kind": value, "tags": [value]}).body["memory"]
    try:
        by_kind = call(seeded, "memory_search", {"kind": value, "limit": 100})
        by_tag = call(seeded, "memory_search", {"tags": [value], "limit": 100})

        assert [m["id"] for m in by_kind.body["memories"]] == [marked["id"]]
        assert [m["id"] for m in by_tag.body["memories"]] == [marked["id"]]
    finally:
        assert call(seeded, "memory_delete", {"id": marked["id"]}).status == 200


def test_a_query_of_exactly_4096_characters_is_accepted(seeded):
    reply = call(seeded, "memory_search", {"q": "alpha " + "z" * 4090})

    assert reply.status == 200, reply.raw[:300]
    assert reply.body["memories"] == []


#: the longest valid words: a query holds up to 4096 characters and content up to 4096 bytes, in
#: one word (each query word becomes an index term, a recall word a prefix query too)
LONG_WORDS = {"1001 letters": "b" * 1001, "4096 letters": "b" * 4096, "4096 CJK": "数" * 4096}


@pytest.mark.parametrize("tool", list(TOOLS), ids=str)
@pytest.mark.parametrize("word", list(LONG_WORDS.values()), ids=list(LONG_WORDS))
def test_the_longest_valid_words_reach_every_tool_without_a_server_error(seeded, tool, word):
    content = word.encode()[:4096].decode(errors="ignore")
    target = call(seeded, "memory_add", {"content": content, "tags": ["long-word"]}).body["memory"]
    try:
        arguments = arguments_for(TOOLS[tool], memory_id=target["id"], text=word, content=content)
        reply = call(seeded, tool, arguments)
        assert reply.status < 500, reply.raw[:300]
        if TOOLS[tool].read_only:
            assert reply.status == 200, reply.raw[:300]
    finally:
        call(seeded, "memory_delete", {"id": target["id"]})


UNDECLARED = ["TRACE", "CONNECT", "PROPFIND", "PUT", "DELETE", "PATCH", "GET"]


@pytest.mark.parametrize("method", UNDECLARED)
def test_an_undeclared_method_on_a_tool_is_405_in_spec_shape(seeded, method):
    reply = rejected(seeded, lambda: send(seeded, ADD, b'{"content": "x"}', method=method), 405, "invalid_request")
    assert reply.headers.get("allow") == "POST"


@pytest.mark.parametrize(
    ("path", "status"),
    [("/v1/tools/no_such_tool", 404), ("/v1/tools/" + "a" * 4000, 404), ("/v1/tools/memory_add/extra", 404)],
    ids=["unknown tool", "4000-character tool name", "extra path segment"],
)
def test_unknown_routes_and_tools_are_404_in_spec_shape(seeded, path, status):
    rejected(seeded, lambda: send(seeded, path, b"{}"), status, "not_found")


#: every hostile header of this suite: (headers, the status REST answers, its code)
HOSTILE_HEADERS = {
    "empty Authorization": ({"Authorization": ""}, 401, "unauthorized"),
    "scheme only": ({"Authorization": "Bearer"}, 401, "unauthorized"),
    "basic": ({"Authorization": "Basic YWRtaW46YWRtaW4="}, 401, "unauthorized"),
    "8000-character key": ({"Authorization": "Bearer " + "k" * 8000}, 401, "unauthorized"),
    "non-UTF-8 bytes": ({"Authorization": b"Bearer \xff\xfe not latin-1 text"}, 401, "unauthorized"),
    "key plus junk": ({"Authorization": "Bearer e2e-admin-key-0123456789 extra"}, 401, "unauthorized"),
    "one char short": ({"Authorization": "Bearer e2e-admin-key-012345678"}, 401, "unauthorized"),
    "empty X-Project": ({"X-Project": ""}, 400, "invalid_request"),
    "long X-Project": ({"X-Project": "p" * 65}, 400, "invalid_request"),
    "unknown X-Project": ({"X-Project": "no-such-project"}, 404, "not_found"),
    "empty Idempotency-Key": ({"Idempotency-Key": ""}, 400, "invalid_request"),
    "long Idempotency-Key": ({"Idempotency-Key": "i" * 256}, 400, "invalid_request"),
    "header block over the limit": ({"X-Padding": "p" * 70_000}, 431, "invalid_request"),
}
BAD_AUTHORIZATION = {k: v for k, v in HOSTILE_HEADERS.items() if v[1] == 401}
BAD_CALL_HEADERS = {k: v for k, v in HOSTILE_HEADERS.items() if v[1] in (400, 404)}


@pytest.mark.parametrize("case", BAD_AUTHORIZATION.values(), ids=BAD_AUTHORIZATION.keys())
def test_a_bad_authorization_header_is_401_and_writes_nothing(seeded, case):
    headers, status, code = case
    reply = rejected(seeded, lambda: send(seeded, ADD, b'{"content": "x"}', headers=headers), status, code)
    assert reply.headers.get("www-authenticate", "").startswith("Bearer")


@pytest.mark.parametrize("case", BAD_CALL_HEADERS.values(), ids=BAD_CALL_HEADERS.keys())
def test_a_malformed_header_argument_is_refused(seeded, case):
    """An empty or over-long ``X-Project`` / ``Idempotency-Key`` is 400 (an empty header is never
    "no header": an unset variable must not write to the default project); an unknown project 404."""
    headers, status, code = case
    rejected(seeded, lambda: send(seeded, ADD, b'{"content": "x"}', headers=headers), status, code)


def test_a_header_block_over_the_server_limit_is_refused_in_spec_shape(seeded):
    headers, status, code = HOSTILE_HEADERS["header block over the limit"]
    reply = rejected(seeded, lambda: send(seeded, ADD, b'{"content": "x"}', headers=headers), status, code)
    assert reply.headers.get("connection") == "close"


def test_over_mcp_the_idempotency_key_argument_works_and_the_header_wins(seeded):
    """The ``idempotency_key`` argument of memory_add replays over MCP; sent with an
    ``Idempotency-Key`` header as well, the header is the key (as over REST)."""
    # allow_duplicate: a call that is not a replay stores a memory of its own (else it would find
    # the first one, deduplicated)
    arguments = {"content": "keyed by argument", "idempotency_key": "by-argument", "allow_duplicate": True}
    first = mcp_call(seeded, "memory_add", arguments)
    again = mcp_call(seeded, "memory_add", arguments)
    by_header = mcp_call(seeded, "memory_add", arguments, headers={"Idempotency-Key": "by-header"})
    header_again = mcp_call(
        seeded, "memory_add", {**arguments, "idempotency_key": "another"}, headers={"Idempotency-Key": "by-header"}
    )

    assert first.ok and again.body == first.body
    assert by_header.ok and by_header.body["memory"]["id"] != first.body["memory"]["id"]
    assert header_again.body == by_header.body
    for outcome in (first, by_header):
        assert call(seeded, "memory_delete", {"id": outcome.body["memory"]["id"]}).status == 200


def _raw_exchange(server: RunningServer, request: bytes) -> Reply:
    """Bytes on a fresh connection, and the answer parsed by hand (no client-side HTTP parsing)."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        head, _, body = sock.makefile("rb").read().partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines if ": " in line)
    return Reply(int(status_line.split()[1]), {k.lower(): v for k, v in headers.items()}, body)


PARSER_ERRORS = {
    "request line over the limit": (b"POST /v1/tools/" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    "malformed Content-Length": (b"POST /v1/tools/memory_add HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
}


@pytest.mark.parametrize("case", PARSER_ERRORS.values(), ids=PARSER_ERRORS.keys())
def test_parser_errors_keep_their_status_in_spec_shape(seeded, case):
    """Refused by the HTTP parser before any handler runs: the parser's status, the body of docs/contract.md §4."""
    request, status = case
    rejected(seeded, lambda: _raw_exchange(seeded, request), status, "invalid_request")


def _comparable(outcome: Outcome) -> tuple[int, str | None, list | None]:
    """An outcome as both surfaces must agree on it: the status REST answers (a rejected MCP tool
    call is HTTP 200 with an ``isError`` result: its code's status), the code, the details."""
    status = outcome.status if outcome.status != 200 or outcome.code is None else STATUS_OF[outcome.code]
    details = outcome.body.get("details") if outcome.code else None
    return status, outcome.code, details


STATUS_OF = {"invalid_request": 400, "not_found": 404, "forbidden": 403, "conflict": 409, "content_too_large": 413}


@pytest.mark.parametrize("case", HOSTILE_HEADERS.values(), ids=HOSTILE_HEADERS.keys())
def test_every_hostile_header_gets_the_same_answer_over_mcp(seeded, case):
    """One pipeline for both surfaces: each hostile header of this suite, sent with a tool call over
    REST and over MCP, gets the same status, code and details, and writes nothing either way."""
    headers, status, code = case
    before = snapshot(seeded)

    over_rest = rest_call(seeded, "memory_add", {"content": "x"}, headers=headers)
    over_mcp = mcp_call(seeded, "memory_add", {"content": "x"}, headers=headers)

    assert _comparable(over_rest)[:2] == (status, code), over_rest
    assert _comparable(over_mcp) == _comparable(over_rest), (over_mcp, over_rest)
    assert snapshot(seeded) == before


def test_a_valid_project_header_and_idempotency_key_act_alike_over_both_surfaces(seeded):
    """The positive side of the same rules: ``X-Project`` picks the project, ``Idempotency-Key``
    replays the first answer — over MCP exactly as over REST."""
    project = call(seeded, "memory_search", {"q": ""}).body["project"]
    for surface, via in (("rest", rest_call), ("mcp", mcp_call)):
        headers = {"X-Project": project["slug"], "Idempotency-Key": f"parity-{surface}"}
        first = via(seeded, "memory_add", {"content": f"once via {surface}"}, headers=headers)
        again = via(seeded, "memory_add", {"content": f"once via {surface}"}, headers=headers)
        other = via(seeded, "memory_add", {"content": f"other via {surface}"}, headers=headers)

        assert first.ok and first.body["project"] == project, first
        assert again.body == first.body
        assert _comparable(other)[:2] == (409, "conflict"), other
        assert call(seeded, "memory_delete", {"id": first.body["memory"]["id"]}).status == 200


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"}


def _rpc(method: str, params: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


MCP_ATTACKS = {
    "invalid UTF-8": b'{"jsonrpc":"2.0","id":1,"method":"ping\xff"}',
    "deep nesting": b"[" * (60 * KIB),
    "NaN id": b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    "5000-digit id": b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}',
    "batch": b"[" + _rpc("ping", {}) + b"," + _rpc("ping", {}) + b"]",
    "null": b"null",
    "arguments not an object": _rpc("tools/call", {"_meta": MCP_META, "name": "memory_add", "arguments": [1]}),
    "unknown tool": _rpc("tools/call", {"_meta": MCP_META, "name": "x" * 5000, "arguments": {}}),
}


@pytest.mark.parametrize("body", MCP_ATTACKS.values(), ids=MCP_ATTACKS.keys())
def test_hostile_mcp_requests_get_a_json_rpc_error_and_change_nothing(seeded, body):
    before = snapshot(seeded)

    reply = send(seeded, "/mcp", body, headers=MCP_HEADERS)

    assert 400 <= reply.status < 500, reply.raw[:300]
    assert reply.body["jsonrpc"] == "2.0" and "error" in reply.body
    assert not INTERNALS.search(reply.raw.decode()), reply.raw[:300]
    assert snapshot(seeded) == before


def test_a_too_large_mcp_body_is_413(seeded):
    rejected(
        seeded,
        lambda: send(seeded, "/mcp", b" " * (64 * KIB) + _rpc("ping", {}), headers=MCP_HEADERS),
        413,
        "content_too_large",
    )


@pytest.mark.parametrize(("char", "size"), EDGE_CHARACTERS[1:], ids=["2-byte", "3-byte", "4-byte"])
def test_mcp_content_over_4096_bytes_is_a_tool_error_in_spec_shape(seeded, char, size):
    arguments = {"content": _content_of(char, size, 4097)}
    headers = {**MCP_HEADERS, "Mcp-Method": "tools/call", "Mcp-Name": "memory_add"}
    before = snapshot(seeded)

    reply = send(
        seeded,
        "/mcp",
        _rpc("tools/call", {"_meta": MCP_META, "name": "memory_add", "arguments": arguments}),
        headers=headers,
    )

    result = reply.body["result"]
    assert result["isError"] is True
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])
    assert_spec_error(413, result["content"][0]["text"], "content_too_large")
    assert snapshot(seeded) == before
