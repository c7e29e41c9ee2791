"""The suite's moto servers list moto's folders once (tests/support/moto_routing.py) and route as
moto does."""

from __future__ import annotations

import os
import uuid

import pytest

from tests.support import moto_routing


@pytest.fixture
def routing():
    moto_routing.install()
    yield
    moto_routing.uninstall()


def test_the_listing_is_moto_s_own_and_read_once(routing, monkeypatch):
    from moto import backends

    moto_routing.uninstall()
    own = list(backends.list_of_moto_modules())
    moto_routing.install()
    assert list(backends.list_of_moto_modules()) == own
    assert {"dynamodb", "dynamodbstreams"} <= set(own)

    def no_listing(path):
        raise AssertionError(f"moto's folder listed again: {path}")

    monkeypatch.setattr(os, "listdir", no_listing)
    assert list(backends.list_of_moto_modules()) == own


def test_a_request_reaches_dynamodb_and_its_streams_through_the_server():
    """The session's moto runs in a process of its own, with the patches installed there."""
    from tests.support.aws_stack import moto_server

    with moto_server() as url:
        import boto3

        # moto's state is the process's: other tests' tables may be there too
        name = f"routing-{uuid.uuid4().hex[:8]}"
        dynamodb = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1")
        streams = boto3.client("dynamodbstreams", endpoint_url=url, region_name="us-east-1")
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        )
        try:
            assert dynamodb.describe_table(TableName=name)["Table"]["TableName"] == name
            assert name in {s["TableName"] for s in streams.list_streams(TableName=name)["Streams"]}
        finally:
            dynamodb.delete_table(TableName=name)
