"""``tests/support/moto_queries`` answers every query as moto's own does: the same items, in the
same order, with the same counts and paging keys — on the table, on an index keyed by the
table's partition key, and on an index keyed by another attribute (which still walks the table)."""

from __future__ import annotations

import random
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.support import moto_queries

TABLE = "queries"


def _fill(client: Any) -> None:
    client.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"}
            for name in ("pk", "sk", "recent_sk", "repair_pk", "repair_sk")
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "recent",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "recent_sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "repair",
                "KeySchema": [
                    {"AttributeName": "repair_pk", "KeyType": "HASH"},
                    {"AttributeName": "repair_sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
    )
    rng = random.Random(5)
    for n in range(300):
        item: dict[str, Any] = {
            "pk": {"S": f"P#{rng.randrange(6)}"},
            "sk": {"S": f"{rng.choice(['MEM', 'CLAIM', 'LOG'])}#{n:04d}"},
            "n": {"N": str(rng.randrange(10))},
        }
        if rng.random() < 0.7:  # (the others are not in the recent index)
            item["recent_sk"] = {"S": f"{rng.randrange(50):03d}#{n}"}
        if rng.random() < 0.2:
            item["repair_pk"] = {"S": f"REPAIR#{rng.randrange(2)}"}
            item["repair_sk"] = {"S": f"{n:04d}"}
        client.put_item(TableName=TABLE, Item=item)


QUERIES: list[dict[str, Any]] = [
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "P#1"}}},
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "P#9"}}},
    {
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": {":p": {"S": "P#2"}, ":s": {"S": "MEM#"}},
        "ScanIndexForward": False,
        "Limit": 7,
    },
    {
        "KeyConditionExpression": "pk = :p",
        "FilterExpression": "n > :n",
        "ExpressionAttributeValues": {":p": {"S": "P#3"}, ":n": {"N": "4"}},
        "Limit": 5,
    },
    {
        "IndexName": "recent",
        "KeyConditionExpression": "pk = :p AND recent_sk > :r",
        "ExpressionAttributeValues": {":p": {"S": "P#0"}, ":r": {"S": "020"}},
        "ScanIndexForward": False,
        "Limit": 6,
    },
    {
        "IndexName": "recent",
        "KeyConditionExpression": "pk = :p",
        "FilterExpression": "begins_with(sk, :s)",
        "ExpressionAttributeValues": {":p": {"S": "P#4"}, ":s": {"S": "LOG#"}},
    },
    {
        "IndexName": "repair",
        "KeyConditionExpression": "repair_pk = :r",
        "ExpressionAttributeValues": {":r": {"S": "REPAIR#1"}},
    },
]


def _pages(client: Any, query: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of the query, as the caller sees it."""
    pages, start = [], None
    while True:
        request = {"TableName": TABLE, **query, **({"ExclusiveStartKey": start} if start else {})}
        out = client.query(**request)
        pages.append({k: out.get(k) for k in ("Items", "Count", "ScannedCount", "LastEvaluatedKey")})
        start = out.get("LastEvaluatedKey")
        if not start:
            return pages


def _answers() -> list[list[dict[str, Any]]]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        _fill(client)
        return [_pages(client, query) for query in QUERIES]


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")


def test_a_query_reads_one_partition_and_answers_as_moto_does() -> None:
    moto_queries.uninstall()
    try:
        theirs = _answers()
    finally:
        moto_queries.install()
    ours = _answers()

    assert ours == theirs
    found = [sum(len(page["Items"]) for page in pages) for pages in theirs]
    assert [n > 0 for n in found] == [True, False, True, True, True, True, True]  # they find something
    assert theirs[1] == [{"Items": [], "Count": 0, "ScannedCount": 0, "LastEvaluatedKey": None}]
    assert any(len(pages) > 1 for pages in theirs)  # and page


def test_a_query_walks_only_its_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.dynamodb.models.table import Table

    moto_queries.install()
    walked: list[int] = []
    own = Table.all_items

    def counting(self: Any) -> list[Any]:
        items = own(self)
        walked.append(len(items))
        return items

    monkeypatch.setattr(Table, "all_items", counting)
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        _fill(client)
        walked.clear()
        client.query(TableName=TABLE, **QUERIES[0])
        client.query(TableName=TABLE, **QUERIES[4])
        client.query(TableName=TABLE, **QUERIES[6])

    assert 0 < walked[0] < 100 and 0 < walked[1] < 100  # one of six partitions of 300 items
    assert walked[2] == 300  # an index over another attribute: the whole table, as before
