"""The DynamoDB clients of one process share botocore's loaded data (its JSON files are read and
parsed once) while each has a session of its own."""

from __future__ import annotations

import botocore.loaders
import pytest
from mnemo.backends.aws.clients import dynamodb_client
from mnemo.config import Settings

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
