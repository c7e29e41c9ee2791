"""The AWS backend: every port over DynamoDB and OpenSearch, with clients built once and injected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mnemo.backends.aws.dynamo import DynamoMemoryStore, DynamoTenantStore
from mnemo.backends.aws.idempotency import PowertoolsIdempotencyStore
from mnemo.backends.aws.ratelimit import DynamoRateLimiter

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from mnemo.backends.aws.maintenance import AwsMaintenance
    from mnemo.backends.aws.opensearch import OpenSearchIndex
    from mnemo.config import Settings


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


def dynamodb_client(cfg: Settings) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 3},
        connect_timeout=2,
        read_timeout=5,
        max_pool_connections=32,
    )
    return boto3.session.Session().client(
        "dynamodb", region_name=cfg.aws_region, endpoint_url=cfg.dynamodb_endpoint_url, config=config
    )


def opensearch_client(cfg: Settings) -> OpenSearch:
    from urllib.parse import urlsplit

    from opensearchpy import OpenSearch, Urllib3HttpConnection

    url = urlsplit(cfg.opensearch_endpoint)
    tls = url.scheme == "https"
    auth = None
    if cfg.opensearch_sigv4:
        import boto3
        from opensearchpy import Urllib3AWSV4SignerAuth

        session = boto3.session.Session(region_name=cfg.aws_region)
        auth = Urllib3AWSV4SignerAuth(session.get_credentials(), session.region_name, "es")
    return OpenSearch(
        hosts=[{"host": url.hostname, "port": url.port or (443 if tls else 80)}],
        http_auth=auth,
        use_ssl=tls,
        verify_certs=tls,
        connection_class=Urllib3HttpConnection,
        timeout=cfg.opensearch_timeout_s,
        max_retries=1,
        retry_on_timeout=False,
        http_compress=True,
        pool_maxsize=32,
    )


class AwsBackend:
    """All ports: DynamoDB for records, tenants, rate limits and idempotency; OpenSearch for search."""

    def __init__(
        self,
        dynamodb: Any,
        index: OpenSearchIndex,
        tables: Tables | None = None,
        *,
        tenant_cache_s: float = 5.0,
    ) -> None:
        tables = tables or Tables()
        self.tables = tables
        self.dynamodb = dynamodb
        self.store = DynamoMemoryStore(dynamodb, tables.memories)
        self.index = index
        self.limiter = DynamoRateLimiter(dynamodb, tables.rate)
        self.tenants = DynamoTenantStore(dynamodb, tables.tenants, cache_s=tenant_cache_s)
        self.idempotency = PowertoolsIdempotencyStore(dynamodb, tables.idempotency)
        self._maintenance: AwsMaintenance | None = None

    @classmethod
    def from_settings(cls, cfg: Settings) -> AwsBackend:
        from mnemo.backends.aws.opensearch import OpenSearchIndex

        dynamodb = dynamodb_client(cfg)
        tables = Tables.from_settings(cfg)
        index = OpenSearchIndex(
            opensearch_client(cfg),
            cfg.opensearch_index,
            refresh=cfg.opensearch_refresh,
            shards=cfg.opensearch_shards,
            replicas=cfg.opensearch_replicas,
            refresh_interval=cfg.opensearch_refresh_interval,
        )
        return cls(dynamodb, index, tables, tenant_cache_s=cfg.tenant_cache_s)

    @property
    def maintenance(self) -> AwsMaintenance:
        """The cleanup job's port, built on first use (request paths never need it)."""
        if self._maintenance is None:
            from mnemo.backends.aws.maintenance import AwsMaintenance

            self._maintenance = AwsMaintenance(self.dynamodb, self.tables.memories, self.index)
        return self._maintenance

    def close(self) -> None:
        self.index.client.close()
