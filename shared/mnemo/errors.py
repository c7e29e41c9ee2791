"""Domain exceptions, raised deep and mapped to SPEC §4 bodies in exactly one place (``api.errors``).

Each class carries its HTTP status and machine code, so no layer ever matches on message text.
"""

from __future__ import annotations

from typing import Any, ClassVar


class MnemoError(Exception):
    """Base of every error a caller may see; ``message`` must never contain internals."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal"

    def __init__(
        self,
        message: str,
        *,
        details: list[dict[str, Any]] | None = None,
        retry_after: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.retry_after = retry_after
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.details:
            out["details"] = self.details
        if self.retry_after is not None:
            out["retry_after"] = self.retry_after
        return out


class InvalidRequest(MnemoError):
    status = 400
    code = "invalid_request"


class Unauthorized(MnemoError):
    status = 401
    code = "unauthorized"


class Forbidden(MnemoError):
    status = 403
    code = "forbidden"


class NotFound(MnemoError):
    status = 404
    code = "not_found"


class Conflict(MnemoError):
    status = 409
    code = "conflict"


class ContentTooLarge(MnemoError):
    status = 413
    code = "content_too_large"


class RateLimited(MnemoError):
    status = 429
    code = "rate_limited"


class Unavailable(MnemoError):
    status = 503
    code = "unavailable"


class Internal(MnemoError):
    status = 500
    code = "internal"


class IndexUnavailable(Exception):
    """The search index could not be written or read; the service decides what the caller sees."""
