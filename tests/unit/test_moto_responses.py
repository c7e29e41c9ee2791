"""``tests/support/moto_responses`` sends the very bytes moto's own serialiser sends: every answer of
a scenario that reads and writes items of every attribute type (through GetItem, BatchGetItem,
Query, Scan, TransactGetItems, the ReturnValues of writes, a failed condition's item, and the
table's stream) is serialised both ways from the same result and compared."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto.core.responses import BaseResponse
from moto.server import ThreadedMotoServer

from tests.support import moto_responses

TABLE = "answers"
SERVICES = ("dynamodb", "dynamodbstreams")

#: every attribute type, nested, empty and binary values included
ITEM: dict[str, Any] = {
    "pk": {"S": "P#1"},
    "sk": {"S": "MEM#1"},
    "content": {"S": "written — with ünïcode"},
    "empty": {"S": ""},
    "version": {"N": "3"},
    "embedding": {"B": bytes(range(256)) * 4},
    "tags": {"SS": ["a", "b"]},
    "scores": {"NS": ["1", "2.5"]},
    "blobs": {"BS": [b"\x00\x01", b"\xff"]},
    "deleted": {"BOOL": False},
    "nothing": {"NULL": True},
    "meta": {"M": {"path": {"S": "x/y"}, "inner": {"M": {"n": {"N": "1"}, "b": {"B": b"\x02"}}}}},
    "history": {"L": [{"S": "one"}, {"N": "2"}, {"L": [{"BOOL": True}]}, {"M": {}}]},
}


def _scenario(client: Any, streams: Any) -> None:
    client.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    key = {"pk": ITEM["pk"], "sk": ITEM["sk"]}
    client.put_item(TableName=TABLE, Item=ITEM)
    for n in range(2, 6):
        client.put_item(TableName=TABLE, Item={**ITEM, "sk": {"S": f"MEM#{n}"}, "version": {"N": str(n)}})
    client.put_item(TableName=TABLE, Item={**ITEM, "version": {"N": "4"}}, ReturnValues="ALL_OLD")
    client.update_item(
        TableName=TABLE,
        Key=key,
        UpdateExpression="SET version = version + :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="ALL_NEW",
    )
    with pytest.raises(ClientError):
        client.put_item(
            TableName=TABLE,
            Item=ITEM,
            ConditionExpression="attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    client.get_item(TableName=TABLE, Key=key, ConsistentRead=True)
    client.get_item(TableName=TABLE, Key={"pk": {"S": "P#1"}, "sk": {"S": "MEM#0"}})
    keys = [{"pk": {"S": "P#1"}, "sk": {"S": f"MEM#{n}"}} for n in range(0, 6)]
    client.batch_get_item(RequestItems={TABLE: {"Keys": keys, "ConsistentRead": True}})
    client.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "P#1"}},
        ScanIndexForward=False,
        Limit=3,
    )
    client.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :p",
        ProjectionExpression="#m.inner, tags",
        ExpressionAttributeNames={"#m": "meta"},
        ExpressionAttributeValues={":p": {"S": "P#1"}},
    )
    client.scan(TableName=TABLE, Limit=4)
    client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}}])
    client.delete_item(TableName=TABLE, Key={"pk": {"S": "P#1"}, "sk": {"S": "MEM#5"}}, ReturnValues="ALL_OLD")
    arn = client.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    streams.get_records(ShardIterator=iterator["ShardIterator"])


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")


def test_every_answer_is_the_bytes_moto_would_send(monkeypatch: pytest.MonkeyPatch) -> None:
    serialized = BaseResponse.serialized
    answers: list[tuple[str, Any, Any]] = []

    def both_ways(self: BaseResponse, action_result: Any) -> Any:
        moto_responses.uninstall()
        theirs = serialized(self, action_result)
        moto_responses.install()
        ours = serialized(self, action_result)
        # (copies: the caller adds the request id to the headers it is given)
        answers.append((self._get_action(), (ours[0], dict(ours[1]), ours[2]), (theirs[0], dict(theirs[1]), theirs[2])))
        return ours

    monkeypatch.setattr(BaseResponse, "serialized", both_ways)
    fast = 0
    attribute_value = moto_responses._attribute_value

    def counting(serializer: Any, value: Any) -> Any:
        nonlocal fast
        fast += 1
        return attribute_value(serializer, value)

    monkeypatch.setattr(moto_responses, "_attribute_value", counting)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        url = "http://{}:{}".format(*server.get_host_and_port())
        _scenario(*(boto3.client(name, region_name="us-east-1", endpoint_url=url) for name in SERVICES))
    finally:
        server.stop()
        moto_responses.install()

    assert [action for action, ours, theirs in answers if ours != theirs] == []
    read = {action for action, (_, _, body), _ in answers if '"embedding"' in body}
    assert read >= {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "PutItem", "UpdateItem"}
    assert {"DeleteItem", "GetRecords"} <= read
    assert fast > 0  # the fast path answered (a value it does not know would have gone to moto's walk)
