"""What docs/contract.md §4 says an error answer looks like, as one assertion the suites share."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

#: docs/contract.md §4: the code each status carries
CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "invalid_request",  # wrong method on a known route (the local server; API Gateway says 404)
    409: "conflict",
    413: "content_too_large",
    429: "rate_limited",
    500: "internal",
    503: "unavailable",
}

#: what must never reach a caller: tracebacks, file paths, SQL, Python class names and reprs
INTERNALS = re.compile(
    r"Traceback|File \"|\w\.py\b|/work/|/tmp/|site-packages|sqlite3|SQLITE_[A-Z]|fts5\(|"
    r"\bSELECT |\bINSERT |\bUPDATE \w+ SET|DELETE FROM|\b[A-Z][a-z]+[A-Za-z]*(Error|Exception)\b|"
    r"pydantic|botocore|<class |object at 0x|mnemo\.\w"
)


def assert_spec_error(
    status: int, raw: bytes | str, code: str | None = None, echoed: Iterable[str] = ()
) -> dict[str, Any]:
    """The body is ``{message, code}`` (+ ``details`` / ``retry_after``), the code matches the
    status, and nothing in it looks like an internal. ``echoed``: strings the request carried,
    which a message may quote back (``no project 'x'``) and which are not internals."""
    body = json.loads(raw)
    assert isinstance(body, dict), body
    assert set(body) <= {"message", "code", "details", "retry_after"}, body
    assert isinstance(body.get("message"), str) and body["message"], body
    assert body.get("code") == CODES.get(status, "invalid_request" if status < 500 else "internal"), (status, body)
    if code is not None:
        assert body["code"] == code, body
    if "retry_after" in body:
        assert isinstance(body["retry_after"], int) and body["retry_after"] >= 1, body
    text = json.dumps(body, ensure_ascii=False)
    for value in sorted(echoed, key=len, reverse=True):
        if len(value) >= 3:
            text = text.replace(json.dumps(value, ensure_ascii=False)[1:-1], "").replace(repr(value)[1:-1], "")
    assert not INTERNALS.search(text), text
    return body


#: SQL LIKE, FTS5 and OpenSearch query-string syntax: none of it may act as an operator
ODD_QUERIES = [
    "%",
    "_",
    "\\",
    "%%",
    "a%",
    "*",
    "?",
    '"',
    '"alpha',
    "(",
    ")",
    "alpha)",
    ":",
    "content:alpha",
    "scope:alpha",
    "{content tags}: alpha",
    "alpha AND beta",
    "alpha OR zeta",
    "NOT alpha",
    "alpha NOT beta",
    "NEAR(alpha beta)",
    "NEAR",
    "alpha*",
    "^alpha",
    "-alpha",
    "alpha -beta",
    "+alpha",
    "alpha~2",
    "alpha^3",
    "/al.*/",
    "[a TO z]",
    "alpha && beta",
    "alpha || zeta",
    "!alpha",
    "\\u0000",
    "a\u0000lpha",
    "' OR '1'='1",
    "alpha; DROP TABLE memories; --",
    "sure_thing",
    "100%",
    "a\\b",
    '"NEAR"',
    "数据库",
    "数据 AND 延迟",
    " ".join(f"w{i}" for i in range(700)),
    "alpha " * 682,
]
