"""Make an mcp-memory-service store through its own MCP server: run by the venv `make peers` makes
(.cache/peers-venv; this file imports nothing of Mnemo), it starts ``memory server`` over stdio with
the ``mcp`` client that mcp-memory-service depends on, calls ``memory_store`` for each memory of the
JSON spec (argv[1]: ``{"store": [args, ...], "delete": [index, ...], "export": path}``), then
``memory_delete`` with the hash its answer gave for each stored memory to delete; once the server
has stopped, writes the store's JSON export to ``path`` with its own exporter
(``mcp_memory_service.sync.MemoryExporter``) and prints the answers as JSON."""

import asyncio
import json
import os
import re
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_memory_service.storage.sqlite_vec import SqliteVecMemoryStorage
from mcp_memory_service.sync import MemoryExporter


def text(result):
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


async def main(spec):
    server = StdioServerParameters(
        command=os.path.join(os.path.dirname(sys.executable), "memory"), args=["server"], env=dict(os.environ)
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        stored = [text(await session.call_tool("memory_store", args)) for args in spec["store"]]
        deleted = []
        for index in spec["delete"]:
            content_hash = re.search(r"hash: ([0-9a-f]{64})", stored[index]).group(1)
            deleted.append(text(await session.call_tool("memory_delete", {"content_hash": content_hash})))
    storage = SqliteVecMemoryStorage(os.environ["MCP_MEMORY_SQLITE_PATH"])
    await storage.initialize()
    try:
        exported = await MemoryExporter(storage).export_to_json(Path(spec["export"]))
    finally:
        await storage.close()
    print(json.dumps({"stored": stored, "deleted": deleted, "exported": exported}, default=str))


asyncio.run(main(json.loads(sys.argv[1])))
