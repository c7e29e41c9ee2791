"""The DynamoDB tables, created for local use (``MNEMO_AWS_CREATE_TABLES``: a moto server or
DynamoDB Local); in AWS, CloudFormation creates them from ``template.yaml``. The key schemas below
are the template's own, which ``tests/unit/test_routes.py`` holds them to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _strings(*names: str) -> list[dict[str, str]]:
    return [{"AttributeName": name, "AttributeType": "S"} for name in names]


def _key(hash_key: str, range_key: str | None = None) -> list[dict[str, str]]:
    key = [{"AttributeName": hash_key, "KeyType": "HASH"}]
    return key + ([{"AttributeName": range_key, "KeyType": "RANGE"}] if range_key else [])


def _index(name: str, hash_key: str, range_key: str) -> dict[str, Any]:
    return {"IndexName": name, "KeySchema": _key(hash_key, range_key), "Projection": {"ProjectionType": "ALL"}}


#: CreateTable arguments by template logical id (the table name is added at creation)
TABLES: dict[str, dict[str, Any]] = {
    "MemoriesTable": {
        "AttributeDefinitions": _strings("pk", "sk", "recent_sk", "repair_pk", "repair_sk"),
        "KeySchema": _key("pk", "sk"),
        "BillingMode": "PAY_PER_REQUEST",
        # no LSI: it would cap a project's items at 10 GB (docs/scale.md)
        "GlobalSecondaryIndexes": [_index("recent", "pk", "recent_sk"), _index("repair", "repair_pk", "repair_sk")],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    },
    "TenantsTable": {
        "AttributeDefinitions": _strings("pk", "sk", "gsi1pk", "gsi1sk"),
        "KeySchema": _key("pk", "sk"),
        "BillingMode": "PAY_PER_REQUEST",
        "GlobalSecondaryIndexes": [_index("list", "gsi1pk", "gsi1sk")],
    },
    "RateLimitTable": {
        "AttributeDefinitions": _strings("pk"),
        "KeySchema": _key("pk"),
        "BillingMode": "PAY_PER_REQUEST",
    },
    "IdempotencyTable": {
        "AttributeDefinitions": _strings("id"),
        "KeySchema": _key("id"),
        "BillingMode": "PAY_PER_REQUEST",
    },
}
#: the TTL attribute of each table that expires items
TTL_ATTRIBUTES: dict[str, str] = {"MemoriesTable": "ttl", "RateLimitTable": "ttl", "IdempotencyTable": "expiration"}


def create_tables(client: Any, names: Mapping[str, str]) -> list[str]:
    """Create every missing table (``names``: logical id → table name); returns those created."""
    existing: set[str] = set()
    for page in client.get_paginator("list_tables").paginate():
        existing.update(page["TableNames"])
    created = []
    for logical_id, name in names.items():
        if name in existing:
            continue
        client.create_table(TableName=name, **TABLES[logical_id])
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        if logical_id in TTL_ATTRIBUTES:
            spec = {"AttributeName": TTL_ATTRIBUTES[logical_id], "Enabled": True}
            client.update_time_to_live(TableName=name, TimeToLiveSpecification=spec)
        created.append(name)
    return created
