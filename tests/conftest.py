"""Shared fixtures. Environment for Powertools is set before any handler module is imported."""

from __future__ import annotations

import os

os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "MnemoTest")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mnemo")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mnemo import runtime
from mnemo.backends.sqlite import SqliteBackend
from mnemo.config import Settings
from mnemo.service import admin
from mnemo.service.context import Caller
from mnemo.service.core import Service

#: the key that every file in events/ carries
EVENTS_KEY = "test-events-key-0123456789"


@pytest.fixture
def sqlite_backend(tmp_path: Path) -> Iterator[SqliteBackend]:
    backend = SqliteBackend(tmp_path / "mnemo.db")
    yield backend
    backend.close()


@pytest.fixture
def wired_runtime(tmp_path: Path) -> Iterator[Service]:
    """The process-wide service the handlers use, on a fresh SQLite file, with the events' key."""
    cfg = Settings(backend="sqlite", data_dir=tmp_path / "data")
    backend = SqliteBackend(cfg.sqlite_path)
    admin.bootstrap(backend, plain_key=EVENTS_KEY)
    svc = Service(backend)
    runtime.use(svc, cfg)
    yield svc
    runtime.use(None)
    backend.close()


def caller_for(svc: Service, plain_key: str) -> Caller:
    return svc.authenticate(f"Bearer {plain_key}")


# -- the AWS backend's stack (moto server + OpenSearch), once per session -------------------


@pytest.fixture(scope="session")
def aws_stack() -> Iterator[Settings]:
    """Settings of a fresh AWS stack: tables created from template.yaml, the index on first write."""
    from mnemo.backends.aws import Tables, create_tables
    from mnemo.backends.aws.backend import dynamodb_client

    from tests.support.aws_stack import aws_settings, moto_server, opensearch_node

    with opensearch_node() as opensearch_url, moto_server() as dynamodb_url:
        cfg = aws_settings(dynamodb_url, opensearch_url)
        create_tables(dynamodb_client(cfg), Tables.from_settings(cfg))
        yield cfg
        _drop_index(cfg)


def _drop_index(cfg: Settings) -> None:
    from mnemo.backends.aws.backend import opensearch_client

    client = opensearch_client(cfg)
    client.indices.delete(index=f"{cfg.opensearch_index}-*", ignore_unavailable=True)
    client.close()


@pytest.fixture(scope="session")
def aws_clients(aws_stack: Settings) -> Iterator[tuple[Any, Any]]:
    """One DynamoDB and one OpenSearch client for the session (building them costs ~0.2 s)."""
    from mnemo.backends.aws.backend import dynamodb_client, opensearch_client

    opensearch = opensearch_client(aws_stack)
    yield dynamodb_client(aws_stack), opensearch
    opensearch.close()


@pytest.fixture
def aws_backend(aws_stack: Settings, aws_clients: tuple[Any, Any]) -> Any:
    """Every port on the shared stack; tests that hook a client build their own backend instead."""
    from mnemo.backends.aws import AwsBackend, Tables
    from mnemo.backends.aws.opensearch import OpenSearchIndex

    dynamodb, opensearch = aws_clients
    index = OpenSearchIndex(
        opensearch, aws_stack.opensearch_index, refresh_interval=aws_stack.opensearch_refresh_interval
    )
    return AwsBackend(dynamodb, index, Tables.from_settings(aws_stack))
