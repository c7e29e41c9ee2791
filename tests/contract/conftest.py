"""The contract suite: every tool behaviour, run against every backend.

``ports`` is parametrised by backend name; each test gets a fresh workspace, so backends whose
storage outlives a test (the AWS one) still isolate tests through tenancy itself.

On AWS the index follows the table through its stream. The suite's ``svc`` plays a stack whose
indexer keeps up: after each write call the stream is drained through the indexer
(:class:`IndexerKeepsUp`), as the deployed indexer will have done a second later. Searches still
merge the store's recent changes (every record here is recent), so both halves answer. The lag
itself — nothing draining, or OpenSearch away — is pinned by ``test_read_your_writes.py``, which
uses a plain ``Service``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from mnemo.embedding import default_embedder
from mnemo.models.records import Project
from mnemo.ports import Ports
from mnemo.service import tenancy
from mnemo.service.catalog import REGISTRY
from mnemo.service.identity import ADMIN, Caller
from mnemo.service.pipeline import Service

BACKENDS: dict[str, Callable[[pytest.FixtureRequest], Iterator[Ports]]] = {}


def backend(name: str) -> Callable[[Callable[[pytest.FixtureRequest], Iterator[Ports]]], Any]:
    def register(factory: Callable[[pytest.FixtureRequest], Iterator[Ports]]) -> Any:
        BACKENDS[name] = factory
        return factory

    return register


@backend("sqlite")
def _sqlite(request: pytest.FixtureRequest) -> Iterator[Ports]:
    from mnemo.backends.sqlite import SqliteBackend

    tmp = request.getfixturevalue("tmp_path")
    ports = SqliteBackend(tmp / "mnemo.db")
    yield ports
    ports.close()


@backend("aws")
def _aws(request: pytest.FixtureRequest) -> Iterator[Ports]:
    """DynamoDB through moto in server mode and a real OpenSearch node, shared by the session;
    each test's fresh workspace keeps it apart from the others."""
    yield request.getfixturevalue("aws_backend")  # the session's clients stay open


@dataclass
class Indexer:
    """What brings the store's changes to the index, as a test drives it: nothing on SQLite (the
    store writes its index in the same transaction), the stream drained through the indexer on AWS."""

    ports: Ports
    stream: Any = None  # tests/support/stream.StreamDrain on AWS

    def catch_up(self, *, lose: Iterable[str] = ()) -> None:
        """Deliver every pending change to the index; the changes of the memories in ``lose`` are
        dropped instead, as by a stream mapping that gave up on them (SQLite: their index rows
        are removed, as if a write had reached the store alone)."""
        if self.stream is not None:
            self.stream.drain(self.ports, lose=lose)
            return
        for memory_id in lose:
            _drop_index_row(self.ports, memory_id)


def _drop_index_row(ports: Ports, memory_id: str) -> None:
    index = ports.index  # type: ignore[attr-defined]
    for entry in index.entries_of(memory_id):
        index.drop(entry.scope.project_id, memory_id)


@pytest.fixture
def indexer(ports: Ports, request: pytest.FixtureRequest) -> Indexer:
    from mnemo.backends.sqlite import SqliteBackend

    if isinstance(ports, SqliteBackend):
        return Indexer(ports)
    return Indexer(ports, request.getfixturevalue("stream_drain"))


class IndexerKeepsUp(Service):
    """A service whose index has caught up by the next call: the stream drained after each write
    (on SQLite there is nothing to drain). ``indexer`` lets a test drive the index's follower."""

    def __init__(self, ports: Ports, indexer: Indexer, **kwargs: Any) -> None:
        kwargs.setdefault("embedder", default_embedder())
        super().__init__(ports, **kwargs)
        self.indexer = indexer

    def invoke(self, name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().invoke(name, *args, **kwargs)
        finally:
            operation = REGISTRY.get(name)
            if operation is not None and not operation.read_only:
                self.indexer.catch_up()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "ports" in metafunc.fixturenames:
        metafunc.parametrize(
            "ports",
            [pytest.param(name, marks=[pytest.mark.aws] if name == "aws" else []) for name in sorted(BACKENDS)],
            indirect=True,
        )


@pytest.fixture
def ports(request: pytest.FixtureRequest) -> Iterator[Ports]:
    yield from BACKENDS[request.param](request)


@dataclass
class Tenant:
    """A fresh workspace with an admin key, and a way to call tools as any of its keys."""

    svc: Service
    workspace_id: str
    project: Project
    admin: Caller

    def key(self, scopes: list[str], **kwargs: Any) -> Caller:
        return self.svc.authenticate(f"Bearer {self.secret(scopes, **kwargs)}")

    def secret(self, scopes: list[str], **kwargs: Any) -> str:
        """A new key's plain secret, for tests that authenticate on every call."""
        kwargs.setdefault("label", "k")
        return tenancy.create_key(self.svc.ports, self.workspace_id, scopes=scopes, **kwargs).plain

    def call(self, tool: str, caller: Caller | None = None, **arguments: Any) -> Any:
        headers = {k: arguments.pop(k) for k in ("project_header", "idempotency_key") if k in arguments}
        return self.svc.invoke(tool, caller or self.admin, arguments, **headers).result


def atomic_per_item(ports: Ports, request: pytest.FixtureRequest) -> Ports:
    """The same backend, with moto's calls serialised on AWS: moto does not apply conditional
    writes (transactions included) atomically across threads (docs/pitfalls.md), real DynamoDB
    does, per item."""
    from mnemo.backends.sqlite import SqliteBackend

    if isinstance(ports, SqliteBackend):
        return ports
    from mnemo.backends.aws import AwsBackend
    from mnemo.backends.aws.clients import dynamodb_client

    from tests.support.aws_stack import SerialisedDynamoDB

    client = dynamodb_client(request.getfixturevalue("aws_stack"))
    SerialisedDynamoDB(client)
    return AwsBackend(client, ports.index, ports.tables)  # type: ignore[attr-defined]


def new_tenant(svc: Service, name: str = "t") -> Tenant:
    workspace, project = tenancy.create_workspace(svc.ports, name)
    key = tenancy.create_key(svc.ports, workspace.id, label="admin", scopes=[ADMIN])
    return Tenant(svc, workspace.id, project, svc.authenticate(f"Bearer {key.plain}"))


@pytest.fixture
def svc(ports: Ports, indexer: Indexer) -> Service:
    return IndexerKeepsUp(ports, indexer)


@pytest.fixture
def tenant(svc: Service) -> Tenant:
    return new_tenant(svc)
