"""The one place an exception becomes a SPEC §4 response, for REST and MCP alike."""

from __future__ import annotations

import os
import traceback

from mnemo.errors import IndexUnavailable, Internal, MnemoError, Unavailable
from mnemo.observability import logger

RETRY_UNAVAILABLE_S = 5
#: DynamoDB error codes that mean "overloaded or briefly down", not "your request is wrong"
_AWS_OUTAGE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "ThrottlingException",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


def as_mnemo_error(exc: BaseException) -> MnemoError:
    """Any exception as the error a caller may see: domain errors as they are; backend outages
    as 503 with a retry hint; everything else as a bare 500 (logged here, never shown)."""
    if isinstance(exc, MnemoError):
        return exc
    if _is_outage(exc):
        logger.warning("backend unavailable", extra={"error_type": type(exc).__name__})
        return Unavailable(
            "a backend is unavailable; retry shortly",
            retry_after=RETRY_UNAVAILABLE_S,
            headers={"Retry-After": str(RETRY_UNAVAILABLE_S)},
        )
    # Type and place only: an exception's text may quote user data (a driver echoing the query,
    # a validation error quoting a stored record), and memory contents are never logged.
    logger.error("unhandled error", extra={"error_type": type(exc).__name__, "where": where(exc)})
    return Internal("internal error")


def where(exc: BaseException, depth: int = 12) -> list[str]:
    """The innermost frames of ``exc`` as ``file.py:line in function``, without any message."""
    frames = traceback.extract_tb(exc.__traceback__)[-depth:]
    return [f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in frames]


def _is_outage(exc: BaseException) -> bool:
    """Connection-level failures of a backend (by type, never by message)."""
    import sqlite3

    if isinstance(exc, IndexUnavailable):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return exc.sqlite_errorname in {"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN", "SQLITE_IOERR"}
    try:
        from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError
        from botocore.exceptions import ConnectionError as BotoConnectionError
    except ImportError:  # pragma: no cover - botocore is always present in Lambda
        return False
    if isinstance(exc, ClientError):
        return exc.response.get("Error", {}).get("Code") in _AWS_OUTAGE_CODES
    return isinstance(exc, BotoConnectionError | ConnectTimeoutError | ReadTimeoutError)
