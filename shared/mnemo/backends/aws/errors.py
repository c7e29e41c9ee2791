"""DynamoDB's and OpenSearch's failures, as the service's errors (``backends.errors``)."""

from __future__ import annotations

from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import TransportError

from mnemo.errors import StoreUnavailable

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


def outage(exc: BaseException) -> StoreUnavailable | None:
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


def index_outage(exc: TransportError) -> bool:
    """Whether an OpenSearch error means "the index cannot take this now": no connection, a
    timeout, throttling (429) or a server error (5xx)."""
    status = exc.status_code
    return isinstance(exc, OpenSearchConnectionError) or not isinstance(status, int) or status == 429 or status >= 500
