"""Every operation Mnemo serves, in one table read by every surface: the tools (REST
``POST /v1/tools/<name>``, MCP ``tools/call``) and the admin operations (``/v1/admin``).

Descriptions are what a caller reads to choose a tool — for tools, usually an agent. Adding an
entry here puts the operation on every surface that serves its kind; a function serves exactly
the operations its handler names (``functions/<role>/handler.py``)."""

from __future__ import annotations

from collections.abc import Mapping

from mnemo.models import admin as am
from mnemo.models import retrieval as r
from mnemo.models import tools as m
from mnemo.service import admin, memories, retrieval
from mnemo.service.identity import ADMIN, DELETE, READ, WRITE
from mnemo.service.operations import Operation, Registry
from mnemo.service.timewindow import timed

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
                "Save one memory worth keeping: a decision and its reason, a fact, an insight, a working note "
                "(kind `working`). Search first: memory_update one that covers it; supersede one it changes."
            ),
            args=m.MemoryAddArgs,
            result=m.MemoryAddResult,
            run=memories.memory_add,
            rate_class="write",
            scopes=_W,
        ),
        Operation(
            name="memory_search",
            title="List or full-text search memories",
            description=(
                "List memories, newest first, or filter them (every word of q, exact kind, all tags); whole "
                "records, no scores. To answer a question prefer search_memory or recall."
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
            name="memory_history",
            title="A memory's history",
            description="A memory's earlier versions, newest first, and what it replaced or was replaced by.",
            args=m.MemoryHistoryArgs,
            result=m.MemoryHistoryResult,
            run=memories.memory_history,
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="memory_update",
            title="Update a memory",
            description=(
                "Change a memory by id; omitted fields stay, null clears kind, path or expires_at. With if_version "
                "(the version you read) a change made meanwhile is refused (conflict), not overwritten."
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
            description="Delete one memory by id, as forget does.",
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
                "Strict lookup to answer a question: memories holding EVERY word of query, best first. If none, "
                "matched is false and no_match says why, never loose matches. Unsure of the wording: recall; text "
                "to read: recall_context."
            ),
            args=r.SearchMemoryArgs,
            result=r.RetrievalResult,
            run=timed(retrieval.search_memory),
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="recall",
            title="Forgiving lookup",
            description=(
                "Forgiving lookup: memories holding ANY word of query, also as a prefix (`deploy` finds "
                "`deployment`), most words matched first: when search_memory is too strict; as text: recall_context."
            ),
            args=r.RecallArgs,
            result=r.RetrievalResult,
            run=timed(retrieval.recall),
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="recall_context",
            title="Recall as prompt-ready context",
            description=(
                "recall's best matches as one text block for your context, e.g. at the start of a task: at most "
                "max_items memories within max_tokens, no duplicates. Scored results: search_memory."
            ),
            args=r.RecallContextArgs,
            result=r.RecallContextResult,
            run=timed(retrieval.recall_context),
            rate_class="search",
            scopes=_R,
            read_only=True,
            idempotent=True,
        ),
        Operation(
            name="forget",
            title="Forget one memory",
            description=("Delete exactly the memory whose reference (mem_ id) you pass, when it is wrong or outdated."),
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
            name="admin_principals_list",
            title="List the workspace's OAuth principals",
            description="Every OAuth principal (token subject, client or group) bound to the calling key's workspace.",
            args=None,
            result=am.PrincipalList,
            run=admin.list_principals,
            rate_class="search",
            scopes=_A,
            surface="admin",
            method="GET",
            path="/v1/admin/principals",
        ),
        Operation(
            name="admin_principal_bind",
            title="Bind an OAuth principal",
            description=(
                "Access tokens of the issuer whose `sub`, client or group is the value act in this workspace with at "
                "most these scopes, teams and default project. A principal binds to one workspace only."
            ),
            args=am.BindPrincipalArgs,
            result=am.PrincipalResult,
            run=admin.bind_principal,
            rate_class="write",
            scopes=_A,
            surface="admin",
            method="POST",
            path="/v1/admin/principals",
            status=201,
        ),
        Operation(
            name="admin_principal_remove",
            title="Remove an OAuth principal",
            description="Its tokens are refused (403) from their very next call.",
            args=None,
            result=am.PrincipalList,
            run=admin.remove_principal,
            rate_class="write",
            scopes=_A,
            surface="admin",
            method="POST",
            path="/v1/admin/principals/{principal_id}/remove",
        ),
        Operation(
            name="admin_privacy_get",
            title="Show the workspace's secret check",
            description="Whether a write holding a secret (an API key, a token, a password) is refused (the default).",
            args=None,
            result=am.PrivacyInfo,
            run=admin.privacy,
            rate_class="search",
            scopes=_A,
            surface="admin",
            method="GET",
            path="/v1/admin/privacy",
        ),
        Operation(
            name="admin_privacy_set",
            title="Turn the workspace's secret check on or off",
            description=(
                "Off: writes holding a secret are stored as given, readable by every key of the workspace. On (the "
                "default): refused with 400 secret_detected. <private> spans are removed either way."
            ),
            args=am.PrivacyArgs,
            result=am.PrivacyInfo,
            run=admin.set_privacy,
            rate_class="write",
            scopes=_A,
            surface="admin",
            method="POST",
            path="/v1/admin/privacy",
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
