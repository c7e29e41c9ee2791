"""The production backend: DynamoDB (records, tenants, rate limits, idempotency) + OpenSearch
(the full-text index), with clients built once per process and injected.

One module per port, as in ``backends/sqlite``: ``store``, ``index``, ``tenants``, ``limiter``,
``idempotency``, ``maintenance``; ``items`` (DynamoDB keys and encoding), ``mapping`` (the
index's mapping, documents and set-up), ``query`` (its DSL), ``fresh`` (read-your-writes),
``clients``, ``errors`` and ``stream`` (the table's change stream, read for the indexer) serve them.
``migrate`` (a table off the former LSI) and ``reindex`` (the index behind the alias to a new
mapping) are operator commands (``python -m mnemo.backends.aws.<name>``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mnemo.backends.aws.clients import dynamodb_client, opensearch_client

if TYPE_CHECKING:
    from mnemo.backends.aws.index import OpenSearchIndex
    from mnemo.backends.aws.maintenance import AwsMaintenance
    from mnemo.config import Settings

__all__ = ["AwsBackend", "Tables"]


@dataclass(frozen=True)
class Tables:
    memories: str = "mnemo-memories"
    tenants: str = "mnemo-tenants"
    rate: str = "mnemo-rate-limits"
    idempotency: str = "mnemo-idempotency"

    @classmethod
    def from_settings(cls, cfg: Settings) -> Tables:
        return cls(cfg.memories_table, cfg.tenants_table, cfg.rate_table, cfg.idempotency_table)

    def by_logical_id(self) -> dict[str, str]:
        """template.yaml's logical ids → table names."""
        return {
            "MemoriesTable": self.memories,
            "TenantsTable": self.tenants,
            "RateLimitTable": self.rate,
            "IdempotencyTable": self.idempotency,
        }


class AwsBackend:
    """All ports: DynamoDB for records, tenants, rate limits and idempotency; OpenSearch for search."""

    def __init__(
        self,
        dynamodb: Any,
        index: OpenSearchIndex,
        tables: Tables | None = None,
        *,
        tenant_cache_s: float = 5.0,
        recent_window_s: float = 60.0,
        recent_page: int = 50,
    ) -> None:
        # imported here, not at the top: the indexer's handler imports ``backends.aws.stream`` at
        # cold start, which must not pull in every adapter and its engine (≈ 0.2 s)
        from mnemo.backends.aws.idempotency import PowertoolsIdempotencyStore
        from mnemo.backends.aws.limiter import DynamoRateLimiter
        from mnemo.backends.aws.store import DynamoMemoryStore
        from mnemo.backends.aws.tenants import DynamoTenantStore

        tables = tables or Tables()
        self.tables = tables
        self.dynamodb = dynamodb
        self.store = DynamoMemoryStore(dynamodb, tables.memories)
        self.index = index
        # a search also reads the store's recent changes, which the index may not show yet
        index.read_your_writes(self.store, window_s=recent_window_s, first_page=recent_page)
        self.store.neighbour_source = index
        self.limiter = DynamoRateLimiter(dynamodb, tables.rate)
        self.tenants = DynamoTenantStore(dynamodb, tables.tenants, cache_s=tenant_cache_s)
        self.idempotency = PowertoolsIdempotencyStore(dynamodb, tables.idempotency)
        self._maintenance: AwsMaintenance | None = None

    @classmethod
    def from_settings(cls, cfg: Settings) -> AwsBackend:
        from mnemo.backends.aws.index import OpenSearchIndex

        dynamodb = dynamodb_client(cfg)
        tables = Tables.from_settings(cfg)
        index = OpenSearchIndex(
            opensearch_client(cfg),
            cfg.opensearch_index,
            refresh=cfg.opensearch_refresh,
            shards=cfg.opensearch_shards,
            replicas=cfg.opensearch_replicas,
            refresh_interval=cfg.opensearch_refresh_interval,
            vectors=cfg.opensearch_vectors,
        )
        return cls(
            dynamodb,
            index,
            tables,
            tenant_cache_s=cfg.tenant_cache_s,
            recent_window_s=cfg.search_recent_window_s,
            recent_page=cfg.search_recent_page,
        )

    @property
    def maintenance(self) -> AwsMaintenance:
        """The cleanup job's port, built on first use (request paths never need it)."""
        if self._maintenance is None:
            from mnemo.backends.aws.maintenance import AwsMaintenance

            index = self.index
            self._maintenance = AwsMaintenance(
                self.dynamodb, self.tables.memories, index.client, index.setup, refresh=index.refresh
            )
        return self._maintenance

    def idle(self) -> bool:
        """Nothing is kept for between calls (DynamoDB and OpenSearch tidy themselves)."""
        return False

    def close(self) -> None:
        self.index.client.close()
