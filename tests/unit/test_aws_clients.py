"""The AWS backend's clients are built from settings alone (no environment reads in service code),
and the DynamoDB clients of one process share botocore's loaded data (its JSON files are read and
parsed once) while each has a session of its own."""

from __future__ import annotations

import botocore.loaders
import pytest
from mnemo.backends.aws import Tables
from mnemo.backends.aws.clients import dynamodb_client, opensearch_client
from mnemo.config import Settings
from opensearchpy import Urllib3AWSV4SignerAuth


def test_a_managed_domain_is_reached_over_tls_with_sigv4():
    cfg = Settings(
        opensearch_sigv4=True,
        aws_region="eu-west-1",
        opensearch_endpoint="https://search-mnemo.eu-west-1.es.amazonaws.com",
    )

    connection = opensearch_client(cfg).transport.get_connection()

    assert connection.host == "https://search-mnemo.eu-west-1.es.amazonaws.com:443"
    assert isinstance(connection.http_auth, Urllib3AWSV4SignerAuth)


def test_a_local_node_is_plain_http_without_signing():
    connection = opensearch_client(Settings(opensearch_endpoint="http://127.0.0.1:9200")).transport.get_connection()

    assert connection.host == "http://127.0.0.1:9200"
    assert connection.http_auth is None


def test_table_names_come_from_settings_and_map_to_the_templates_logical_ids():
    cfg = Settings(memories_table="m", tenants_table="t", rate_table="r", idempotency_table="i")

    tables = Tables.from_settings(cfg)

    assert tables.by_logical_id() == {
        "MemoriesTable": "m",
        "TenantsTable": "t",
        "RateLimitTable": "r",
        "IdempotencyTable": "i",
    }


CFG = Settings(backend="aws", aws_region="us-east-1", dynamodb_endpoint_url="http://127.0.0.1:9")


def test_a_second_client_reads_no_botocore_data_file_again(monkeypatch: pytest.MonkeyPatch) -> None:
    first = dynamodb_client(CFG)

    def read(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"botocore read a data file again: {args}")

    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "load_file", read)
    second = dynamodb_client(CFG)

    assert second is not first
    assert second.meta.service_model.service_name == "dynamodb"
    assert second.meta.region_name == "us-east-1"
    assert second.meta.endpoint_url == "http://127.0.0.1:9"
    assert second.meta.config.retries["mode"] == "standard"
