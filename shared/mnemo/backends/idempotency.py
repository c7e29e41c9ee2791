"""Idempotency keys of ``memory_add``, one flow for both backends: Powertools' idempotency
utility (``idempotent_function``) over a persistence layer of the backend's own — Powertools'
``DynamoDBPersistenceLayer`` on AWS, ``backends/sqlite/idempotency.py``'s on SQLite.

The utility's flow is the contract (docs/contract.md §3): a conditional put claims the key
(status ``INPROGRESS``, until the claim time runs out); the add runs; an update stores its
response (``COMPLETED``). A repeat finds the completed record where its claim failed and replays
it without running the add; other arguments fail the payload validation (→ 409); a concurrent
duplicate finds the claim in progress (→ 409, retry), and a claim whose time has run out (its call
died) is taken over. When the add raises, the claim is deleted.

A record's key hashes ``[workspace, key]`` under a fixed prefix, so the same key replays across
the add and MCP functions, and never across workspaces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

from mnemo.backends.errors import Classify
from mnemo.ports import IDEMPOTENCY_IN_PROGRESS_S, IDEMPOTENCY_TTL_S, IdempotencyMismatch, VersionConflict

KEY_PREFIX = "mnemo.memory_add"


def unwrapping(classify: Classify) -> Classify:
    """``classify`` of the engine's error that Powertools wrapped in ``IdempotencyPersistenceLayerError``."""

    def outage(exc: BaseException, operation: str = "") -> Any:
        if isinstance(exc, IdempotencyPersistenceLayerError) and exc.__cause__ is not None:
            return classify(exc.__cause__, operation)
        return classify(exc, operation)

    return outage


class _Budget:
    """Stands in for the Lambda context Powertools reads the in-progress expiry from: the store's
    claim time, the same for every call, so one config serves every thread (the local server is
    threaded)."""

    def __init__(self, store: PowertoolsIdempotency) -> None:
        self.store = store

    def get_remaining_time_in_millis(self) -> int:
        return self.store.in_progress_ms


class PowertoolsIdempotency:
    """``IdempotencyStore.run_once`` through Powertools over ``persistence``. A backend's adapter
    subclasses it, naming ``run_once`` again under its ``translate_errors``."""

    def __init__(
        self, persistence: BasePersistenceLayer, *, in_progress_ms: int = IDEMPOTENCY_IN_PROGRESS_S * 1000
    ) -> None:
        #: how long a claim holds the key before another call may take it over
        self.in_progress_ms = in_progress_ms
        self.persistence = persistence
        config = IdempotencyConfig(
            event_key_jmespath="[workspace_id, key]",
            payload_validation_jmespath="fingerprint",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=IDEMPOTENCY_TTL_S,
            hash_function="sha256",
            lambda_context=_Budget(self),  # type: ignore[arg-type]
        )
        persistence.configure(config, key_prefix=KEY_PREFIX)  # as the first call would: keys hash now

        @idempotent_function(
            data_keyword_argument="request",
            persistence_store=persistence,
            config=config,
            key_prefix=KEY_PREFIX,
        )
        def once(*, request: dict[str, str], compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
            return compute()

        self._once = once

    def run_once(
        self, workspace_id: str, key: str, fingerprint: str, compute: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        request = {"workspace_id": workspace_id, "key": key, "fingerprint": fingerprint}
        try:
            result: dict[str, Any] = self._once(request=request, compute=compute)
        except IdempotencyValidationError:
            raise IdempotencyMismatch(key) from None
        except IdempotencyAlreadyInProgressError:
            raise VersionConflict(key) from None
        return result

    def hashed(self, workspace_id: str, key: str, fingerprint: str) -> tuple[str, str]:
        """The record key and payload hash Powertools gives this call (for moving old records)."""
        request = {"workspace_id": workspace_id, "key": key, "fingerprint": fingerprint}
        record_key = self.persistence._get_hashed_idempotency_key(request)  # Powertools' own hashing
        assert record_key is not None  # raise_on_no_idempotency_key
        return record_key, self.persistence._get_hashed_payload(request)
