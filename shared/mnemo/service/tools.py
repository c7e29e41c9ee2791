"""The tool registry: one entry per tool, read by REST, MCP and the OpenAPI generator alike.
A tool added here appears on every surface with no surface-specific code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mnemo.models import tools as m
from mnemo.ports import RateClass
from mnemo.service import memories
from mnemo.service.context import ADMIN, DELETE, READ, WRITE, CallContext


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args_model: type[m.Args]
    result_model: type[BaseModel]
    run: Callable[[CallContext, Any], BaseModel]
    rate_class: RateClass
    #: the key needs any one of these scopes (admin always qualifies)
    scopes: frozenset[str]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


_R = frozenset({READ, ADMIN})
_W = frozenset({WRITE, ADMIN})
_D = frozenset({WRITE, DELETE, ADMIN})

TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    TOOLS[tool.name] = tool
    return tool


register(
    Tool(
        "memory_add",
        "Save a memory",
        "Save one short memory (a decision, insight, fact or working note) in the project. "
        "Use kind to categorise it, tags and path to organise it. Returns the stored record with its id. "
        "Pass idempotency_key to make a retry safe.",
        m.MemoryAddArgs,
        m.MemoryResult,
        memories.memory_add,
        "write",
        _W,
    )
)
register(
    Tool(
        "memory_search",
        "List or full-text search memories",
        "Plain listing and search of stored records. Empty q lists the most recently updated memories; "
        "otherwise every term of q must occur (best match first). Filter by exact kind and by tags (all "
        "must be present). Returns whole records, no scores: use search_memory for a targeted lookup with "
        "an explicit no-match answer, recall for a forgiving lookup, recall_context for prompt-ready text.",
        m.MemorySearchArgs,
        m.MemoriesResult,
        memories.memory_search,
        "search",
        _R,
        read_only=True,
        idempotent=True,
    )
)
register(
    Tool(
        "memory_get",
        "Get one memory",
        "Fetch one memory by its id (mem_…).",
        m.MemoryIdArgs,
        m.MemoryResult,
        memories.memory_get,
        "search",
        _R,
        read_only=True,
        idempotent=True,
    )
)
register(
    Tool(
        "memory_update",
        "Update a memory",
        "Change a memory's content, kind, tags, path or expiry; fields left out stay as they are. "
        "Pass if_version (the version you read) to refuse the update when someone changed it meanwhile. "
        "The new text is searchable as soon as this returns.",
        m.MemoryUpdateArgs,
        m.MemoryResult,
        memories.memory_update,
        "write",
        _W,
    )
)
register(
    Tool(
        "memory_delete",
        "Delete a memory",
        "Delete one memory by id. It is unsearchable as soon as this returns.",
        m.MemoryIdArgs,
        m.DeleteResult,
        memories.memory_delete,
        "write",
        _D,
        destructive=True,
        idempotent=False,
    )
)
