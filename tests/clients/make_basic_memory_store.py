"""Make a basic-memory project through its own MCP server: run by the venv `make peers` makes for it
(.cache/basic-memory-venv, on a Python 3.12 or later; this file imports nothing of Mnemo), it starts
``basic-memory mcp`` over stdio with the ``mcp`` client basic-memory depends on, calls
``create_memory_project`` for the folder, ``write_note`` for each note of the JSON spec (argv[1]:
``{"project": name, "folder": path, "notes": [args, ...], "delete": [index, ...]}``), then
``delete_note`` with the permalink its answer gave for each note to delete, then ``read_note`` for
each identifier of ``"read"`` (waiting, within a deadline, for a folder's existing files to be
indexed), and prints the answers as JSON."""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text(result):
    if result.is_error:
        raise SystemExit(f"basic-memory refused a call: {result.content}")
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


async def main(spec):
    server = StdioServerParameters(
        command=os.path.join(os.path.dirname(sys.executable), "basic-memory"),
        args=["mcp", "--transport", "stdio"],
        env=dict(os.environ),
    )
    project = spec["project"]

    async def call(session, tool, args):
        return text(await session.call_tool(tool, {"output_format": "json", **args}))

    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        created = await call(
            session, "create_memory_project", {"project_name": project, "project_path": spec["folder"]}
        )
        written = [
            json.loads(await call(session, "write_note", {**args, "project": project})) for args in spec["notes"]
        ]
        deleted = [
            await call(
                session,
                "delete_note",
                {"identifier": written[i]["permalink"], "project": project, "output_format": "text"},
            )
            for i in spec["delete"]
        ]
        read = [await read_note(session, project, identifier) for identifier in spec.get("read", [])]
    print(json.dumps({"created": created, "written": written, "deleted": deleted, "read": read}))


async def read_note(session, project, identifier, deadline_s=60.0):
    """The note as basic-memory reads it, once its index holds it."""
    deadline = time.monotonic() + deadline_s
    while True:
        note = json.loads(
            text(
                await session.call_tool(
                    "read_note", {"identifier": identifier, "project": project, "output_format": "json"}
                )
            )
        )
        if note.get("error") != "NOTE_NOT_FOUND" or time.monotonic() > deadline:
            return note
        await asyncio.sleep(0.5)


asyncio.run(main(json.loads(sys.argv[1])))
