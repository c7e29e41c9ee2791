"""The one place an exception becomes a docs/contract.md §4 error, for REST and MCP alike.

Domain errors (``mnemo.errors``) carry their status and code; the adapters have already turned
their engine's outages into ``Unavailable``. Anything else is a bug: logged by type and place,
answered with a bare 500.
"""

from __future__ import annotations

from mnemo.errors import Internal, MnemoError, Unavailable
from mnemo.observability import logger, where

__all__ = ["as_mnemo_error", "where"]


def as_mnemo_error(exc: BaseException) -> MnemoError:
    """Any exception as the error a caller may see: domain errors as they are (outages logged with
    their cause); everything else as a bare 500 (logged here, never shown)."""
    if isinstance(exc, Unavailable):
        logger.warning("backend unavailable", extra={"error_type": type(exc).__name__, "cause": exc.cause})
        return exc
    if isinstance(exc, MnemoError):
        return exc
    # Type and place only: an exception's text may quote user data (a driver echoing the query,
    # a validation error quoting a stored record), and memory contents are never logged.
    logger.error("unhandled error", extra={"error_type": type(exc).__name__, "where": where(exc)})
    return Internal("internal error")
