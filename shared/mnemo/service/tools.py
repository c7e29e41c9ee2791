"""The tool registry: one entry per tool, read by REST, MCP and the OpenAPI generator alike.
A tool added here appears on every surface with no surface-specific code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mnemo.models import tools as m
from mnemo.ports import RateClass
from mnemo.service import memories, retrieval
from mnemo.service.context import CallContext
from mnemo.service.identity import ADMIN, DELETE, READ, WRITE


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
register(
    Tool(
        "search_memory",
        "Strict targeted lookup",
        "Find the memories that contain EVERY word of query and pass every filter; best first. Use it when you "
        "need a precise answer and would rather hear 'nothing' than get loosely related notes: when nothing matches "
        "it answers matched=false with no_match.reason (e.g. the words occur only in different memories, or the "
        "filters exclude the matches) and no results. path_filter and memory_type are case-insensitive LIKE "
        "patterns (`%` any run, `_` one character, `\\` escapes). prefer_working ranks kind=working memories first; "
        "explain says which words matched in which field and why each result ranks where it does; team_id narrows "
        "to one of your teams. For a forgiving lookup use recall; for prompt-ready text use recall_context; to list "
        "or filter records by exact kind and tags use memory_search. Chinese, Japanese and Korean queries need no "
        "spaces.",
        m.SearchMemoryArgs,
        m.RetrievalResult,
        retrieval.search_memory,
        "search",
        _R,
        read_only=True,
        idempotent=True,
    )
)
register(
    Tool(
        "recall",
        "Forgiving lookup",
        "Best-effort retrieval: memories containing ANY word of query, where a word also matches as the start of a "
        "longer one (`deploy` finds `deployment`), ranked by how many words matched, then relevance, then recency. "
        "Use it when you are exploring or unsure of the exact wording; it returns the same shape as search_memory "
        "(and matched=false with no_match only when nothing at all matches). Use search_memory when every word must "
        "match, recall_context when you want the results as one text block for your prompt.",
        m.RecallArgs,
        m.RetrievalResult,
        retrieval.recall,
        "search",
        _R,
        read_only=True,
        idempotent=True,
    )
)
register(
    Tool(
        "recall_context",
        "Recall as prompt-ready context",
        "Runs recall and packs the results, best first, into one text block to paste into a prompt: each memory "
        "once (identical contents are dropped), at most max_items memories and never more than max_tokens by "
        "Mnemo's estimate (a CJK character is 1 token, other text about 4 characters per token; the block's "
        "headers count too). A memory cut to fit ends with `…[truncated]` and truncated is true. references lists "
        "the packed memory ids; output_json returns the packed records as items instead of the text block. Use "
        "recall or search_memory instead when you want scored results with explanations.",
        m.RecallContextArgs,
        m.RecallContextResult,
        retrieval.recall_context,
        "search",
        _R,
        read_only=True,
        idempotent=True,
    )
)
register(
    Tool(
        "forget",
        "Forget one memory",
        "Delete exactly the memory whose reference (its mem_ id, as returned by search_memory, recall or "
        "recall_context) you pass, and nothing else; it is unsearchable as soon as this returns. An unknown "
        "reference is 404. Needs memory:write or memory:delete.",
        m.ForgetArgs,
        m.ForgetResult,
        retrieval.forget,
        "write",
        _D,
        destructive=True,
        idempotent=False,
    )
)
