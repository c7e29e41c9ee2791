"""Which OpenSearch answers are outages of the index (``IndexUnavailable``: a write stands and is
marked for repair, a search answers 503) and what their logged cause says."""

from __future__ import annotations

import pytest
from mnemo.backends.aws.errors import index_cause, index_outage
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
