"""Which OpenSearch answers are outages of the index (``IndexUnavailable``: a write stands and is
marked for repair, a search answers 503), what their logged cause says, and that the adapters
translate them in one place (``backends.errors.translate_errors``) for every public method."""

from __future__ import annotations

import inspect
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mnemo.backends.aws.errors import index_cause, index_outage
from mnemo.backends.aws.index import OpenSearchIndex
from mnemo.backends.aws.maintenance import AwsMaintenance
from mnemo.backends.aws.mapping import IndexSetup
from mnemo.errors import IndexUnavailable
from mnemo.models.common import utc_now
from mnemo.ports import IndexQuery, MemoryFilter, Scope
from mnemo.text import query_terms
from opensearchpy import OpenSearch
from opensearchpy.exceptions import (
    AuthenticationException,
    AuthorizationException,
    ConflictError,
    ConnectionTimeout,
    NotFoundError,
    RequestError,
    TransportError,
)
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError

SECURITY = {"error": {"type": "security_exception", "reason": "no permissions for [indices:data/write/index]"}}


@pytest.mark.parametrize(
    "exc",
    [
        AuthenticationException(401, "security_exception", SECURITY),  # an expired or wrong signature
        AuthorizationException(403, "security_exception", SECURITY),  # an unmapped role (fine-grained access)
        AuthorizationException(403, "cluster_block_exception", {}),  # e.g. the index is read-only: disk full
        TransportError(408, "timeout", {}),
        TransportError(429, "es_rejected_execution_exception", {}),
        TransportError(500, "internal_server_error", {}),
        TransportError(503, "unavailable", {}),
        OpenSearchConnectionError("N/A", "Connection refused", None),
        ConnectionTimeout("TIMEOUT", "timed out", None),
    ],
    ids=lambda e: f"{type(e).__name__}-{e.status_code}-{e.error}",
)
def test_an_answer_meaning_the_index_cannot_take_this_now_is_an_outage(exc):
    assert index_outage(exc)


@pytest.mark.parametrize(
    "exc",
    [
        RequestError(400, "mapper_parsing_exception", {}),
        NotFoundError(404, "index_not_found_exception", {}),
        ConflictError(409, "version_conflict_engine_exception", {}),
    ],
    ids=lambda e: f"{type(e).__name__}-{e.status_code}",
)
def test_an_answer_about_the_request_itself_is_not_an_outage(exc):
    assert not index_outage(exc)


def test_the_cause_names_the_status_and_the_error_type_never_the_request():
    refused = AuthorizationException(403, "security_exception", SECURITY)

    assert index_cause(refused) == "403 security_exception"
    assert (
        index_cause(OpenSearchConnectionError("N/A", "Connection refused to https://search…", None))
        == "ConnectionError"
    )
    assert index_cause(TransportError(403, "", {})) == "403"  # a HEAD answer has no body


# -- through the adapters: one translation for every public method --------------------------------


class _Answer503(BaseHTTPRequestHandler):
    """An OpenSearch node that is up but cannot serve: every request answers 503."""

    def _refuse(self) -> None:
        body = json.dumps({"error": {"type": "unavailable_shards_exception"}, "status": 503}).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_node() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer503)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"  # closed when this returns: refused


class _NoChanges:
    def recent_changes(self, scope, since, first_page, most):
        return [], True


def _query() -> IndexQuery:
    return IndexQuery(Scope("ws_1", "prj_1"), query_terms("deploy"), "all", MemoryFilter(now=utc_now()), 5)


@pytest.mark.parametrize("node", ["answers 503", "refuses connections"])
@pytest.mark.parametrize("read_your_writes", [False, True], ids=["index-alone", "merged-on-a-pool-thread"])
def test_an_opensearch_outage_in_a_search_is_index_unavailable_503(node, read_your_writes, request):
    # Given an index adapter whose OpenSearch node cannot serve (a 503, or no connection at all)
    url = request.getfixturevalue("refusing_node") if node == "answers 503" else _closed_port()
    index = OpenSearchIndex(OpenSearch(hosts=[url], max_retries=0, timeout=10), "mnemo-memories")
    if read_your_writes:  # the query then runs on a pool thread while this one reads the changes
        index.read_your_writes(_NoChanges(), window_s=60, first_page=50)
    # When a search runs
    with pytest.raises(IndexUnavailable) as raised:
        index.search(_query())
    # Then it is the service's IndexUnavailable (503), its cause saying what failed and why
    assert raised.value.status == 503
    why = "503 unavailable_shards_exception" if node == "answers 503" else "ConnectionError"
    assert raised.value.cause == f"OpenSearch search failed: {why}"


@pytest.mark.parametrize("adapter", [OpenSearchIndex, IndexSetup, AwsMaintenance])
def test_every_public_method_of_an_opensearch_adapter_translates_outages(adapter):
    # translate_errors wraps each public method (functools.wraps leaves __wrapped__): a method added
    # later is wrapped too, so it cannot answer a bare 500 for an outage
    public = [name for name, member in vars(adapter).items() if inspect.isfunction(member) and not name.startswith("_")]
    assert public
    assert all(hasattr(getattr(adapter, name), "__wrapped__") for name in public)
