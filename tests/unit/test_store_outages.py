"""DynamoDB outages are the service's StoreUnavailable (503 with Retry-After), never a bare 500:
every public method of each DynamoDB adapter is wrapped by ``backends.errors.translate_errors``,
and a store whose endpoint cannot be reached says so."""

from __future__ import annotations

import inspect
import socket

import boto3
import pytest
from botocore.config import Config
from mnemo.backends.aws.idempotency import PowertoolsIdempotencyStore
from mnemo.backends.aws.limiter import DynamoRateLimiter
from mnemo.backends.aws.store import DynamoMemoryStore
from mnemo.backends.aws.tenants import DynamoTenantStore
from mnemo.errors import StoreUnavailable
from mnemo.ports import Scope


@pytest.mark.parametrize(
    "adapter", [DynamoMemoryStore, DynamoTenantStore, DynamoRateLimiter, PowertoolsIdempotencyStore]
)
def test_every_public_method_of_a_dynamodb_adapter_translates_outages(adapter):
    # a method added later is wrapped too (functools.wraps leaves __wrapped__); the memory store's
    # decorator once sat on a Protocol declared above the class, and the store had none
    public = [name for name, member in vars(adapter).items() if inspect.isfunction(member) and not name.startswith("_")]
    assert public
    assert [name for name in public if not hasattr(getattr(adapter, name), "__wrapped__")] == []


def test_a_memory_store_whose_endpoint_is_down_is_unavailable_not_an_error():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = boto3.client(
        "dynamodb",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(connect_timeout=1, read_timeout=1, retries={"max_attempts": 1}),
    )
    store = DynamoMemoryStore(client, "memories")

    with pytest.raises(StoreUnavailable) as raised:
        store.get(Scope("ws_1", "prj_1"), "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV")

    assert raised.value.status == 503
    assert "DynamoDB" in raised.value.cause
