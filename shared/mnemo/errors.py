"""Domain exceptions, raised deep and mapped to docs/contract.md §4 bodies in exactly one place (``api.errors``).

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


class InvalidToken(Unauthorized):
    """A bearer token that is not a valid access token for this resource (RFC 6750 ``invalid_token``):
    the same 401 and code as a missing or unknown key; only the challenge header says more."""


class Forbidden(MnemoError):
    status = 403
    code = "forbidden"


class InsufficientScope(Forbidden):
    """The caller is known but lacks the scope an operation needs (RFC 6750 ``insufficient_scope``);
    ``needed`` are the scopes any one of which would do."""

    def __init__(self, message: str, *, needed: list[str]) -> None:
        super().__init__(message)
        self.needed = needed


class NotFound(MnemoError):
    status = 404
    code = "not_found"


class Conflict(MnemoError):
    status = 409
    code = "conflict"


class SecretDetected(MnemoError):
    """A write whose text looks like it holds a credential (``service.privacy``)."""

    status = 400
    code = "secret_detected"


class ContentTooLarge(MnemoError):
    status = 413
    code = "content_too_large"


class RateLimited(MnemoError):
    status = 429
    code = "rate_limited"


#: what a 503 tells the caller to wait before retrying
RETRY_UNAVAILABLE_S = 5


class Unavailable(MnemoError):
    """A backend cannot be used right now. Adapters raise the subclasses below for their engine's
    outages (connection failures, timeouts, throttling, a locked file), so no other layer ever
    inspects an engine's exceptions. ``cause`` says what failed, for logs only."""

    status = 503
    code = "unavailable"

    def __init__(
        self,
        message: str = "a backend is unavailable; retry shortly",
        *,
        cause: str = "",
        retry_after: int | None = RETRY_UNAVAILABLE_S,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, retry_after=retry_after, **kwargs)
        self.cause = cause


class StoreUnavailable(Unavailable):
    """The record store (or the tenant, rate-limit or idempotency tables beside it) is down."""


class IndexUnavailable(Unavailable):
    """The search index cannot be written or read. A write that reached the store stands and is
    marked for repair (the service catches this); a read answers 503."""


class EmbedderUnavailable(Unavailable):
    """The embedder cannot turn text into a vector. A write stands without its vector and is marked
    for repair (cleanup embeds it); a ``semantic`` read answers 503, a ``hybrid`` one falls back to
    words alone and says so in ``explain``."""


class Internal(MnemoError):
    status = 500
    code = "internal"
