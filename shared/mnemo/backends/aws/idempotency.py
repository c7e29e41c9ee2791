"""Idempotency keys for ``memory_add`` through Powertools' idempotency utility on DynamoDB.

The utility's flow is exactly the contract (docs/contract.md §3): a conditional ``PutItem`` claims the key
(status ``INPROGRESS``); the add runs; an ``UpdateItem`` stores its response (``COMPLETED``). A
repeat finds the completed record in the failed claim's ``ALL_OLD`` image and replays it without
running the add; other arguments fail Powertools' payload validation (→ 409); a concurrent
duplicate finds the claim in progress (→ 409, retry), and a claim whose time has run out (its call
died) is taken over. When the add raises, the claim is deleted. The SQLite adapter does the same,
step for step.

The idempotency record's key hashes ``[workspace, key]`` under a fixed prefix, so the same key
replays across the add and MCP functions, and never across workspaces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)

from mnemo.backends.aws.errors import outage
from mnemo.backends.errors import translate_errors
from mnemo.errors import StoreUnavailable
from mnemo.ports import IDEMPOTENCY_IN_PROGRESS_S, IDEMPOTENCY_TTL_S, IdempotencyMismatch, VersionConflict

KEY_PREFIX = "mnemo.memory_add"


def _outage(exc: BaseException, operation: str = "") -> StoreUnavailable | None:
    """Powertools wraps the table's failures in ``IdempotencyPersistenceLayerError``."""
    if isinstance(exc, IdempotencyPersistenceLayerError) and exc.__cause__ is not None:
        return outage(exc.__cause__)
    return outage(exc)


class _Budget:
    """Stands in for the Lambda context Powertools reads the in-progress expiry from: the store's
    claim time, the same for every call, so one config serves every thread (the local server is
    threaded)."""

    def __init__(self, store: PowertoolsIdempotencyStore) -> None:
        self.store = store

    def get_remaining_time_in_millis(self) -> int:
        return self.store.in_progress_ms


@translate_errors(_outage)
class PowertoolsIdempotencyStore:
    def __init__(self, client: Any, table: str, *, in_progress_ms: int = IDEMPOTENCY_IN_PROGRESS_S * 1000) -> None:
        #: how long a claim holds the key before another call may take it over
        self.in_progress_ms = in_progress_ms
        self.persistence = DynamoDBPersistenceLayer(table_name=table, boto3_client=client)
        config = IdempotencyConfig(
            event_key_jmespath="[workspace_id, key]",
            payload_validation_jmespath="fingerprint",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=IDEMPOTENCY_TTL_S,
            hash_function="sha256",
            lambda_context=_Budget(self),  # type: ignore[arg-type]
        )

        @idempotent_function(
            data_keyword_argument="request",
            persistence_store=self.persistence,
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
