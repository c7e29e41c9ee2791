"""The production backend: DynamoDB (records, tenants, rate limits, idempotency) + OpenSearch."""

from mnemo.backends.aws.backend import AwsBackend, Tables

__all__ = ["AwsBackend", "Tables"]
