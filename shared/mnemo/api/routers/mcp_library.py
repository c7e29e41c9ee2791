"""The MCP prompts and resources: the common moves as prompts, memories as resources.

Prompts are templates a user picks in the host (Claude Code shows them as ``/mcp__mnemo__…``
commands); each renders one user message that tells the model which tools to call and how.
Resources let a host attach memories to the context without a tool call: a project's recent
memories and one memory by id, read through the same ``Service.invoke`` as the tools (so the same
scopes, rate limits and project rules apply), as JSON.

Both stay small: ``prompts/list`` and ``resources/templates/list`` are read at session start by
hosts that support them, so they count against the same budget as ``tools/list``
(``tests/unit/test_tool_catalog.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from mnemo.api.mcp import (
    RESOURCE_NOT_FOUND,
    McpPrompt,
    McpPromptArgument,
    McpResources,
    ResourceFailed,
)
from mnemo.api.mcp.protocol import INTERNAL_ERROR, INVALID_PARAMS

#: how many memories the recent-memories resource holds
RECENT = 20
JSON = "application/json"

Call = Callable[[str, dict[str, Any]], dict[str, Any]]
"""Runs one tool for the current caller and answers its result; raises a ``MnemoError``."""


def _in_project(args: dict[str, str]) -> str:
    return f' Pass project "{args["project"]}" to each call.' if args.get("project") else ""


def _recall(args: dict[str, str]) -> str:
    return (
        f"Before working on this task, find what Mnemo already knows about it.\n\nTask: {args['task']}\n\n"
        "1. Call recall_context with the task's key words as query (max_tokens 1500) and read the block.\n"
        "2. For names, ids or exact terms it mentions, call search_memory; when unsure of the wording, recall.\n"
        "3. Summarise in a few lines what is known (decisions and why, facts, open work), citing the memory "
        "ids, and say what is not known. Treat memories as notes that may be out of date: check them against "
        f"the code before relying on them.{_in_project(args)}"
    )


def _save(args: dict[str, str]) -> str:
    why = f"\nWhy: {args['reason']}" if args.get("reason") else "\nWhy: (ask the user if it is not clear)"
    return (
        f"Save this decision in Mnemo so later sessions keep it.\n\nDecision: {args['decision']}{why}\n\n"
        "1. search_memory for its key words: if a memory already records this decision (or one it replaces), "
        "memory_update that memory instead of adding another, and forget one it proves wrong.\n"
        "2. Otherwise memory_add one memory, kind decision: one or two sentences that say what was decided, "
        "why, and what it rules out, with the names someone would search for (service, customer, file); "
        "tags for the area; a path like area/topic/decisions. Never include secrets, keys or passwords.\n"
        "3. If its answer lists `similar` memories, read them: when this decision changes or replaces one, "
        "memory_update the new memory with supersedes: [that reference] (never leave two that contradict "
        "each other both current).\n"
        f"4. Reply with the memory's id.{_in_project(args)}"
    )


PROJECT_ARG = McpPromptArgument("project", "Project slug or id (default: yours).")

PROMPTS = (
    McpPrompt(
        name="recall_for_task",
        title="Recall what we know about a task",
        description="Gather the memories relevant to a task before starting it.",
        arguments=(McpPromptArgument("task", "The task, in a sentence.", required=True), PROJECT_ARG),
        render=_recall,
    ),
    McpPrompt(
        name="save_decision",
        title="Save a decision well",
        description="Record a decision and its reason as one searchable memory, updating any it replaces.",
        arguments=(
            McpPromptArgument("decision", "What was decided.", required=True),
            McpPromptArgument("reason", "Why."),
            PROJECT_ARG,
        ),
        render=_save,
    ),
)

RESOURCES = (
    {
        "uri": "mnemo://memories/recent",
        "name": "recent",
        "title": "Recent memories",
        "description": f"The {RECENT} most recently updated memories of your default project.",
        "mimeType": JSON,
    },
)

TEMPLATES = (
    {
        "uriTemplate": "mnemo://projects/{project}/recent",
        "name": "project-recent",
        "title": "A project's recent memories",
        "description": f"The {RECENT} most recently updated memories of a project (slug or id).",
        "mimeType": JSON,
    },
    {
        "uriTemplate": "mnemo://memories/{id}",
        "name": "memory",
        "title": "A memory by id",
        "description": "One memory of your default project (mem_…).",
        "mimeType": JSON,
    },
    {
        "uriTemplate": "mnemo://projects/{project}/memories/{id}",
        "name": "project-memory",
        "title": "A memory of a project by id",
        "description": "One memory (mem_…) of a project (slug or id).",
        "mimeType": JSON,
    },
)

_URI = re.compile(r"^mnemo://(?:projects/(?P<project>[^/?#]+)/)?(?:(?P<recent>recent)|memories/(?P<id>[^/?#]+))$")


def _parse(uri: str) -> tuple[str, dict[str, Any]]:
    """The tool and arguments that read a resource URI."""
    match = _URI.match(uri)
    if match is None or (match["recent"] and not match["project"]):
        raise ResourceFailed(
            RESOURCE_NOT_FOUND, "Resource not found", {"message": f"no resource {uri}", "code": "not_found", "uri": uri}
        )
    project = {"project": match["project"]} if match["project"] else {}
    if match["id"] and match["id"] != "recent":
        return "memory_get", {"id": match["id"], **project}
    return "memory_search", {"q": "", "limit": RECENT, **project}


def resources(call: Call, error_body: Callable[[BaseException], dict[str, Any]]) -> McpResources:
    """The resources, read with ``call``; ``error_body`` turns a refusal into ``{message, code}``."""

    def read(uri: str) -> list[dict[str, Any]]:
        tool, arguments = _parse(uri)
        try:
            result = call(tool, arguments)
        except Exception as exc:  # noqa: BLE001 - mapped once, by error_body (as_mnemo_error)
            body = error_body(exc)
            code = {"not_found": RESOURCE_NOT_FOUND, "invalid_request": INVALID_PARAMS}.get(
                str(body.get("code")), INTERNAL_ERROR
            )
            message = "Resource not found" if code == RESOURCE_NOT_FOUND else str(body.get("message"))
            raise ResourceFailed(code, message, {**body, "uri": uri}) from None
        return [{"uri": uri, "mimeType": JSON, "text": json.dumps(result, ensure_ascii=False)}]

    return McpResources(RESOURCES, TEMPLATES, read)
