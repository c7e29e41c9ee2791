"""Idempotency keys for ``memory_add`` on DynamoDB: the flow of ``backends/idempotency.py``
(Powertools' idempotency utility) over Powertools' ``DynamoDBPersistenceLayer``."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

from mnemo.backends.aws.errors import outage
from mnemo.backends.errors import translate_errors
from mnemo.backends.idempotency import PowertoolsIdempotency, unwrapping
from mnemo.ports import IDEMPOTENCY_IN_PROGRESS_S


@translate_errors(unwrapping(outage))
class PowertoolsIdempotencyStore(PowertoolsIdempotency):
    def __init__(self, client: Any, table: str, *, in_progress_ms: int = IDEMPOTENCY_IN_PROGRESS_S * 1000) -> None:
        persistence = DynamoDBPersistenceLayer(table_name=table, boto3_client=client)
        super().__init__(persistence, in_progress_ms=in_progress_ms)

    run_once = PowertoolsIdempotency.run_once  # under translate_errors
