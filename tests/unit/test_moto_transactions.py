"""``tests/support/moto_transactions`` answers every transaction the code sends as moto's own
implementation does: the same items and stream records after it, the same cancellation reasons."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend

from tests.support import moto_transactions

pytestmark = [pytest.mark.slow]

TABLE = "t"


def _put(sk: str, condition: str | None = None, **values: Any) -> dict[str, Any]:
    put: dict[str, Any] = {"TableName": TABLE, "Item": {"pk": {"S": "p"}, "sk": {"S": sk}, **values}}
    if condition:
        put["ConditionExpression"] = condition
    return {"Put": put}


def _delete(sk: str, holder: str) -> dict[str, Any]:
    return {
        "Delete": {
            "TableName": TABLE,
            "Key": {"pk": {"S": "p"}, "sk": {"S": sk}},
            "ConditionExpression": "memory_id = :me",
            "ExpressionAttributeValues": {":me": {"S": holder}},
        }
    }


#: transactions as the stores send them (the memory and its claim), each after the ones before
SCENARIO = [
    [_put("MEM#1", "attribute_not_exists(pk)"), _put("CLAIM#a", "attribute_not_exists(pk)", memory_id={"S": "1"})],
    [_put("MEM#2", "attribute_not_exists(pk)"), _put("CLAIM#a", "attribute_not_exists(pk)", memory_id={"S": "2"})],
    [_put("MEM#1", "attribute_not_exists(pk)"), _put("CLAIM#b", "attribute_not_exists(pk)", memory_id={"S": "1"})],
    [_put("MEM#3"), _delete("CLAIM#a", "2")],
    [_put("MEM#3"), _delete("CLAIM#a", "1"), _put("CLAIM#c", "attribute_not_exists(pk)", memory_id={"S": "3"})],
    [
        {
            "Update": {
                "TableName": TABLE,
                "Key": {"pk": {"S": "p"}, "sk": {"S": "MEM#3"}},
                "UpdateExpression": "SET v = :v",
                "ExpressionAttributeValues": {":v": {"N": "2"}},
            }
        },
        {
            "ConditionCheck": {
                "TableName": TABLE,
                "Key": {"pk": {"S": "p"}, "sk": {"S": "CLAIM#c"}},
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    ],
    [_put("MEM#4"), _put("MEM#4")],  # the same item twice: refused as a whole
]


def _run(implementation: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any], list[str]]:
    monkeypatch.setattr(DynamoDBBackend, "transact_write_items", implementation)
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        outcomes: list[Any] = []
        for actions in SCENARIO:
            try:
                client.transact_write_items(TransactItems=actions)
                outcomes.append("committed")
            except ClientError as exc:
                reasons = [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
                outcomes.append((exc.response["Error"]["Code"], reasons))
        items = sorted(client.scan(TableName=TABLE)["Items"], key=lambda i: i["sk"]["S"])
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        shard = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(TABLE).stream_shard
        changes = [f"{r.record['eventName']} {r.record['dynamodb']['Keys']['sk']['S']}" for r in shard.items]
    return outcomes, items, changes


def test_the_patched_transactions_answer_as_moto_does(monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = _run(moto_transactions.original(), monkeypatch)
    ours = _run(moto_transactions._transact_write_items, monkeypatch)

    assert ours == theirs
    outcomes = theirs[0]
    assert outcomes[0] == "committed"
    assert outcomes[1] == ("TransactionCanceledException", ["None", "ConditionalCheckFailed"])
    assert outcomes[-1][0] == "ValidationException"
