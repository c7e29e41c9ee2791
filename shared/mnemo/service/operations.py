"""The unit of the one call pipeline: an :class:`Operation` — a tool (``POST /v1/tools/<name>``
and MCP ``tools/call``) or an admin operation (``/v1/admin/…``) — and the :class:`Registry` every
surface reads (REST routers, the MCP catalog, the OpenAPI generator). The operations themselves are
listed in ``service.catalog``; ``Service.invoke`` runs any of them the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from mnemo.ports import RateClass
from mnemo.service.context import CallContext

Surface = Literal["tool", "admin"]


@dataclass(frozen=True, kw_only=True)
class Operation:
    name: str
    title: str
    #: what the operation is for, written for its caller (an agent reads a tool's)
    description: str
    run: Callable[[CallContext, Any], BaseModel]
    #: the arguments' model (None: the operation takes no body, e.g. an admin listing)
    args: type[BaseModel] | None
    result: type[BaseModel]
    rate_class: RateClass
    #: the key needs any one of these scopes (``admin`` always qualifies)
    scopes: frozenset[str]
    #: tools act inside a resolved project; admin operations (the workspace operations: ``/v1/admin``
    #: and ``/v1/whoami``) on the caller's workspace
    surface: Surface = "tool"
    # MCP annotations (tools)
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    # HTTP route of an admin operation (a tool's is always POST /v1/tools/<name>)
    method: str = "POST"
    path: str = ""
    status: int = 200

    @property
    def in_project(self) -> bool:
        return self.surface == "tool"

    @property
    def args_model(self) -> type[BaseModel]:
        """The arguments' model of a tool (every tool takes a body)."""
        if self.args is None:
            raise TypeError(f"{self.name} takes no arguments")
        return self.args


class Registry:
    """Every operation by name, in registration order; a name is taken once."""

    def __init__(self, operations: tuple[Operation, ...] = ()) -> None:
        self._operations: dict[str, Operation] = {}
        for operation in operations:
            self.register(operation)

    def register(self, operation: Operation) -> Operation:
        if operation.name in self._operations:
            raise ValueError(f"an operation named {operation.name!r} is registered already")
        self._operations[operation.name] = operation
        return operation

    def unregister(self, name: str) -> None:
        self._operations.pop(name, None)

    def get(self, name: str) -> Operation | None:
        return self._operations.get(name)

    def __iter__(self) -> Iterator[Operation]:
        """Every operation, tools and workspace operations, in registration order."""
        return iter(list(self._operations.values()))

    def view(self, surface: Surface) -> Mapping[str, Operation]:
        """A live, read-only view of one surface's operations."""
        return _View(self._operations, surface)


class _View(Mapping[str, Operation]):
    def __init__(self, operations: dict[str, Operation], surface: Surface) -> None:
        self._operations = operations
        self._surface = surface

    def __getitem__(self, name: str) -> Operation:
        operation = self._operations[name]
        if operation.surface != self._surface:
            raise KeyError(name)
        return operation

    def __iter__(self) -> Iterator[str]:
        return (name for name, op in self._operations.items() if op.surface == self._surface)

    def __len__(self) -> int:
        return sum(1 for _ in self)
