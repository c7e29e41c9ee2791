"""The MCP prompts and resources (``api.routers.mcp_library``) on the stdlib endpoint: what they
advertise, what they refuse, and what they cost an agent at session start."""

from __future__ import annotations

import json

from mnemo.api.mcp import McpEndpoint
from mnemo.api.mcp.types import prompt_to_wire
from mnemo.api.routers import mcp_library
from mnemo.errors import NotFound

#: prompts/list, resources/list and resources/templates/list together, as json.dumps writes them;
#: hosts read them beside tools/list (tests/unit/test_tool_catalog.py: 11.3 KB)
BUDGET_BYTES = 2_600


def endpoint(calls: list[tuple[str, dict]] | None = None) -> McpEndpoint:
    def call(name: str, arguments: dict) -> dict:
        if calls is not None:
            calls.append((name, arguments))
        if arguments.get("id") == "mem_missing":
            raise NotFound("memory not found")
        return {"memories": []} if name == "memory_search" else {"memory": {"id": arguments["id"]}}

    resources = mcp_library.resources(call, lambda exc: {"message": str(exc), "code": getattr(exc, "code", "x")})
    return McpEndpoint([], lambda n, a: None, prompts=mcp_library.PROMPTS, resources=resources)  # type: ignore[arg-type,return-value]


def ask(ep: McpEndpoint, method: str, params: dict) -> dict:
    return ep.handle_message({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, "2025-11-25")


def test_the_listings_fit_in_their_budget():
    wire = {
        "prompts": [prompt_to_wire(p) for p in mcp_library.PROMPTS],
        "resources": list(mcp_library.RESOURCES),
        "resourceTemplates": list(mcp_library.TEMPLATES),
    }

    assert len(json.dumps(wire)) <= BUDGET_BYTES, len(json.dumps(wire))


def test_initialize_advertises_prompts_and_resources():
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}

    capabilities = ask(endpoint(), "initialize", init)["result"]["capabilities"]

    assert capabilities["prompts"] == {"listChanged": False}
    assert capabilities["resources"] == {"subscribe": False, "listChanged": False}


def test_a_prompt_without_its_required_argument_or_with_an_unknown_one_is_invalid_params():
    ep = endpoint()

    missing = ask(ep, "prompts/get", {"name": "save_decision", "arguments": {"reason": "x"}})
    unknown = ask(ep, "prompts/get", {"name": "save_decision", "arguments": {"decision": "d", "whom": "x"}})
    nameless = ask(ep, "prompts/get", {"name": "nope"})

    assert [r["error"]["code"] for r in (missing, unknown, nameless)] == [-32602] * 3
    assert "decision" in missing["error"]["message"]


def test_resource_uris_map_to_the_read_tools_and_unknown_ones_are_not_found():
    calls: list[tuple[str, dict]] = []
    ep = endpoint(calls)

    for uri in ("mnemo://memories/recent", "mnemo://projects/web/recent", "mnemo://memories/mem_1",
                "mnemo://projects/web/memories/mem_2"):  # fmt: skip
        assert "result" in ask(ep, "resources/read", {"uri": uri})
    stray = [ask(ep, "resources/read", {"uri": u}) for u in ("mnemo://recent", "https://x/y", "mnemo://memories/a/b")]
    gone = ask(ep, "resources/read", {"uri": "mnemo://memories/mem_missing"})

    assert calls == [
        ("memory_search", {"q": "", "limit": mcp_library.RECENT}),
        ("memory_search", {"q": "", "limit": mcp_library.RECENT, "project": "web"}),
        ("memory_get", {"id": "mem_1"}),
        ("memory_get", {"id": "mem_2", "project": "web"}),
        ("memory_get", {"id": "mem_missing"}),
    ]
    assert [s["error"]["code"] for s in stray] == [-32002] * 3
    assert gone["error"]["code"] == -32002 and gone["error"]["data"]["code"] == "not_found"
