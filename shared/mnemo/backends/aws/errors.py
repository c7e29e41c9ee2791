"""DynamoDB's and OpenSearch's failures, as the service's errors (``backends.errors``)."""

from __future__ import annotations

from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import TransportError

from mnemo.backends.errors import Classify
from mnemo.errors import IndexUnavailable, StoreUnavailable

#: DynamoDB error codes that mean "overloaded or briefly down", not "your request is wrong"
OUTAGE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "ThrottlingException",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


def outage(exc: BaseException, operation: str = "") -> StoreUnavailable | None:
    """Throttling, 5xx and connection failures of DynamoDB are outages (503); other errors are bugs."""
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        return StoreUnavailable(cause=f"DynamoDB {code}") if code in OUTAGE_CODES else None
    if isinstance(exc, BotoConnectionError | ConnectTimeoutError | ReadTimeoutError):
        return StoreUnavailable(cause=f"DynamoDB {type(exc).__name__}")
    return None


def is_condition_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") in {
        "ConditionalCheckFailedException",
        "TransactionCanceledException",
    }


#: OpenSearch answers that mean "the index cannot take this now", whatever the request: the role
#: is not allowed (401/403: a domain with fine-grained access control that does not map the
#: function's role, an expired signature; also a cluster block such as a full disk), a timeout
#: (408), throttling (429). A 5xx is an outage too. Anything else (400, 404, 409) is about the
#: request itself and is handled, or a bug.
INDEX_REFUSALS = frozenset({401, 403, 408, 429})


def index_outage(exc: TransportError) -> bool:
    """Whether an OpenSearch error means "the index cannot take this now": no connection, a
    timeout, a refusal of the caller (:data:`INDEX_REFUSALS`) or a server error (5xx)."""
    status = exc.status_code
    return (
        isinstance(exc, OpenSearchConnectionError)
        or not isinstance(status, int)
        or status in INDEX_REFUSALS
        or status >= 500
    )


def index_cause(exc: TransportError) -> str:
    """What failed, for the log line of an outage: the status and OpenSearch's error type (never
    the request, which may carry memory content)."""
    if isinstance(exc, OpenSearchConnectionError) or not isinstance(exc.status_code, int):
        return type(exc).__name__
    return f"{exc.status_code} {exc.error or ''}".strip()[:200]


def index_errors(default: str, **by_operation: str) -> Classify:
    """The ``classify`` of an OpenSearch adapter (``backends.errors.translate_errors``): an outage
    (:func:`index_outage`) becomes :class:`IndexUnavailable`, its cause naming what failed — the
    operation's kind (``by_operation``: method name → kind, else ``default``) — and why."""

    def classify(exc: BaseException, operation: str = "") -> IndexUnavailable | None:
        if not isinstance(exc, TransportError) or not index_outage(exc):
            return None
        what = by_operation.get(operation, default)
        return IndexUnavailable(cause=f"OpenSearch {what} failed: {index_cause(exc)}")

    return classify


def either(*classifiers: Classify) -> Classify:
    """The first outage any of them finds (an adapter over both engines: the cleanup job's)."""

    def classify(exc: BaseException, operation: str = "") -> StoreUnavailable | IndexUnavailable | None:
        for one in classifiers:
            error = one(exc, operation)
            if error is not None:
                return error  # type: ignore[return-value]
        return None

    return classify
