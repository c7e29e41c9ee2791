"""The contract suite: every tool behaviour, run against every backend.

``ports`` is parametrised by backend name; each test gets a fresh workspace, so backends whose
storage outlives a test (the AWS one) still isolate tests through tenancy itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from mnemo.models.records import Project
from mnemo.ports import Ports
from mnemo.service import tenancy
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
def svc(ports: Ports) -> Service:
    return Service(ports)


@pytest.fixture
def tenant(svc: Service) -> Tenant:
    return new_tenant(svc)
