"""Every operation Mnemo serves, in one table read by every surface: the tools (REST
``POST /v1/tools/<name>``, MCP ``tools/call``) and the admin operations (``/v1/admin``).

Descriptions are what a caller reads to choose a tool — for tools, usually an agent. Adding an
entry here puts the operation on every surface that serves its kind; a function serves exactly
the operations its handler names (``functions/<role>/handler.py``)."""

from __future__ import annotations

from collections.abc import Mapping

from mnemo.models import admin as am
from mnemo.models import tools as m
from mnemo.service import admin, memories, retrieval
from mnemo.service.identity import ADMIN, DELETE, READ, WRITE
from mnemo.service.operations import Operation, Registry

_R = frozenset({READ, ADMIN})
_W = frozenset({WRITE, ADMIN})
_D = frozenset({WRITE, DELETE, ADMIN})
_A = frozenset({ADMIN})
_ANY = frozenset({READ, WRITE, DELETE, ADMIN})

REGISTRY = Registry(
    (
        Operation(
            name="memory_add",
            title="Save a memory",
            description=(
                "Save one short memory (a decision, insight, fact or working note) in the project. Use kind to "
                "categorise it, tags and path to organise it. Returns the stored record with its id. Pass "
                "idempotency_key to make a retry safe."
            ),
            args=m.MemoryAddArgs,
            result=m.MemoryResult,
            run=memories.memory_add,
            rate_class="write",
            scopes=_W,
        ),
        Operation(
            name="memory_search",
            title="List or full-text search memories",
            description=(
                "Plain listing and search of stored records. Empty q lists the most recently updated memories; "
                "otherwise every term of q must occur (best match first). Filter by exact kind and by tags (all "
                "must be present). Returns whole records, no scores: use search_memory for a targeted lookup with"
                " an explicit no-match answer, recall for a forgiving lookup, recall_context for prompt-ready "
                "text."
            ),
            args=m.MemorySearchArgs,
            result=m.MemoriesResult,
            run=memories.memory_search,
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="memory_get",
            title="Get one memory",
            description="Fetch one memory by its id (mem_…).",
            args=m.MemoryIdArgs,
            result=m.MemoryResult,
            run=memories.memory_get,
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="memory_update",
            title="Update a memory",
            description=(
                "Change a memory's content, kind, tags, path or expiry; fields left out stay as they are. Pass "
                "if_version (the version you read) to refuse the update when someone changed it meanwhile. The "
                "new text is searchable as soon as this returns."
            ),
            args=m.MemoryUpdateArgs,
            result=m.MemoryResult,
            run=memories.memory_update,
            rate_class="write",
            scopes=_W,
        ),
        Operation(
            name="memory_delete",
            title="Delete a memory",
            description="Delete one memory by id. It is unsearchable as soon as this returns.",
            args=m.MemoryIdArgs,
            result=m.DeleteResult,
            run=memories.memory_delete,
            rate_class="write",
            scopes=_D,
            destructive=True,
            idempotent=False,
        ),
        Operation(
            name="search_memory",
            title="Strict targeted lookup",
            description=(
                "Find the memories that contain EVERY word of query and pass every filter; best first. Use it "
                "when you need a precise answer and would rather hear 'nothing' than get loosely related notes: "
                "when nothing matches it answers matched=false with no_match.reason (e.g. the words occur only in"
                " different memories, or the filters exclude the matches) and no results. path_filter and "
                "memory_type are case-insensitive LIKE patterns (`%` any run, `_` one character, `\\` escapes). "
                "prefer_working ranks kind=working memories first; explain says which words matched in which "
                "field and why each result ranks where it does; team_id narrows to one of your teams. For a "
                "forgiving lookup use recall; for prompt-ready text use recall_context; to list or filter records"
                " by exact kind and tags use memory_search. Chinese, Japanese and Korean queries need no spaces."
            ),
            args=m.SearchMemoryArgs,
            result=m.RetrievalResult,
            run=retrieval.search_memory,
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="recall",
            title="Forgiving lookup",
            description=(
                "Best-effort retrieval: memories containing ANY word of query, where a word also matches as the "
                "start of a longer one (`deploy` finds `deployment`), ranked by how many words matched, then "
                "relevance, then recency. Use it when you are exploring or unsure of the exact wording; it "
                "returns the same shape as search_memory (and matched=false with no_match only when nothing at "
                "all matches). Use search_memory when every word must match, recall_context when you want the "
                "results as one text block for your prompt."
            ),
            args=m.RecallArgs,
            result=m.RetrievalResult,
            run=retrieval.recall,
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="recall_context",
            title="Recall as prompt-ready context",
            description=(
                "Runs recall and packs the results, best first, into one text block to paste into a prompt: each "
                "memory once (identical contents are dropped), at most max_items memories and never more than "
                "max_tokens by Mnemo's estimate (a CJK character is 1 token, other text about 4 characters per "
                "token; the block's headers count too). A memory cut to fit ends with `…[truncated]` and "
                "truncated is true. references lists the packed memory ids; output_json returns the packed "
                "records as items instead of the text block. Use recall or search_memory instead when you want "
                "scored results with explanations."
            ),
            args=m.RecallContextArgs,
            result=m.RecallContextResult,
            run=retrieval.recall_context,
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="forget",
            title="Forget one memory",
            description=(
                "Delete exactly the memory whose reference (its mem_ id, as returned by search_memory, recall or "
                "recall_context) you pass, and nothing else; it is unsearchable as soon as this returns. An "
                "unknown reference is 404. Needs memory:write or memory:delete."
            ),
            args=m.ForgetArgs,
            result=m.ForgetResult,
            run=memories.forget,
            rate_class="write",
            scopes=_D,
            destructive=True,
            idempotent=False,
        ),
        Operation(
            name="admin_keys_list",
            title="List the workspace's API keys",
            description="Every key of the calling key's workspace, revoked ones included, without secrets.",
            args=None,
            result=am.KeyList,
            run=admin.list_keys,
            rate_class="search",
            scopes=_A,
            surface="admin",
            method="GET",
            path="/v1/admin/keys",
        ),
        Operation(
            name="admin_key_create",
            title="Create an API key",
            description=(
                "A new key in the calling key's workspace. The answer carries the plain key once; only a salted "
                "hash of it is stored."
            ),
            args=am.CreateKeyArgs,
            result=am.CreatedKey,
            run=admin.create_key,
            rate_class="write",
            scopes=_A,
            surface="admin",
            method="POST",
            path="/v1/admin/keys",
            status=201,
        ),
        Operation(
            name="admin_key_revoke",
            title="Revoke an API key",
            description="The key is refused (401) from its very next call. Revoking a revoked key changes nothing.",
            args=None,
            result=am.KeyResult,
            run=admin.revoke_key,
            rate_class="write",
            scopes=_A,
            surface="admin",
            method="POST",
            path="/v1/admin/keys/{key_id}/revoke",
        ),
        Operation(
            name="admin_projects_list",
            title="List the workspace's projects",
            description="Every project of the calling key's workspace, by slug.",
            args=None,
            result=am.ProjectList,
            run=admin.list_projects,
            rate_class="search",
            scopes=_A,
            surface="admin",
            method="GET",
            path="/v1/admin/projects",
        ),
        Operation(
            name="admin_project_create",
            title="Create a project",
            description="A new project in the calling key's workspace; the slug must be unique there.",
            args=am.CreateProjectArgs,
            result=am.ProjectResult,
            run=admin.create_project,
            rate_class="write",
            scopes=_A,
            surface="admin",
            method="POST",
            path="/v1/admin/projects",
            status=201,
        ),
        Operation(
            name="admin_limits_get",
            title="Show the workspace's rate limits",
            description="Calls a minute for the search and write classes. Only the operator changes them (CLI).",
            args=None,
            result=am.LimitsInfo,
            run=admin.limits,
            rate_class="search",
            scopes=_A,
            surface="admin",
            method="GET",
            path="/v1/admin/limits",
        ),
        Operation(
            name="admin_project_export",
            title="Export a project's memories",
            description=(
                "One page of the project's live memories in id order, each exactly as a line of `mnemo export` "
                "(JSON Lines that `mnemo import` reads back): call again with the answer's cursor until it is null."
            ),
            args=am.ExportArgs,
            result=am.ExportPage,
            run=admin.export_page,
            rate_class="search",
            scopes=_A,
            surface="admin",
            method="POST",
            path="/v1/admin/export",
        ),
        Operation(
            name="whoami",
            title="Describe the calling key",
            description=(
                "The calling key (id, label, scopes, teams, default project; never its secret), its workspace, the "
                "projects it can act in and the operations its scopes allow. Any valid key may call it."
            ),
            args=None,
            result=am.WhoAmI,
            run=admin.whoami,
            rate_class="search",
            scopes=_ANY,
            surface="admin",
            method="GET",
            path="/v1/whoami",
        ),
    )
)

#: the tools, in registration order (a live view of the registry)
TOOLS: Mapping[str, Operation] = REGISTRY.view("tool")
#: the workspace operations — ``/v1/admin/…`` and ``/v1/whoami`` (a live view of the registry)
ADMIN_OPERATIONS: Mapping[str, Operation] = REGISTRY.view("admin")
