"""What Streamable HTTP costs over stdio for an empty answer, Mnemo's and the MCP SDK's own server
side by side: issue 41 asks that HTTP add at most 1 ms p50 over stdio, and this tells how much of
the difference any server pays with this client.

Five sessions of the official MCP Python SDK's client (``mcp.Client``), open at once and called
in turns of ``--turn`` calls each, so every figure comes from the same minutes of a shared machine:

* ``mnemo stdio`` / ``mnemo http``: ``search_memory`` on an empty project, through ``mnemo mcp``
  and through ``mnemo serve``'s ``/mcp`` (the floor of bench.callsplit);
* ``sdk stdio`` / ``sdk http json`` / ``sdk http sse``: the SDK's reference server
  (``mcp.server.mcpserver.MCPServer``) with one tool answering an empty list, over stdio, and over
  Streamable HTTP (uvicorn, stateless) answering JSON or an SSE stream.

``python -m bench.transport_floor [--calls 400] [--turn 20]`` writes
bench/results/transport-floor.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import resultfiles
from bench.clients import free_port, served

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SESSIONS = (
    "mnemo stdio",
    "mnemo http",
    "mnemo http raw",
    "sdk stdio",
    "sdk http json",
    "sdk http json raw",
    "sdk http sse",
)


class _Raw:
    """The JSON-RPC ``tools/call`` the SDK's client sends (the same protocol era, headers and
    ``_meta`` envelope), POSTed on one kept-alive connection by ``http.client``: the server's and the
    wire's share of an HTTP call, without the SDK client's."""

    VERSION = "2026-07-28"

    def __init__(self, port: int, key: str | None) -> None:
        import http.client

        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": self.VERSION,
            "MCP-Method": "tools/call",
            **({"Authorization": f"Bearer {key}"} if key else {}),
        }

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        meta = {
            "io.modelcontextprotocol/protocolVersion": self.VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        params = {"name": name, "arguments": arguments, "_meta": meta}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        self.conn.request("POST", "/mcp", body=body, headers={**self.headers, "MCP-Name": name})
        reply = self.conn.getresponse()
        data = reply.read()
        failed = reply.status != 200 or b'"isError":true' in data.replace(b" ", b"") or b'"error"' in data[:40]
        return type("Answer", (), {"is_error": failed, "content": data[:300]})()

    async def list_tools(self) -> None:
        return None


def reference_server(transport: str, port: int) -> None:
    """The SDK's own server, one tool, no work: what the transport alone costs it."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("floor")

    @server.tool()
    def empty(query: str) -> list[str]:
        """Answers nothing."""
        return []

    if transport == "stdio":
        server.run("stdio")
    else:
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=port,
            stateless_http=True,
            json_response=transport == "http-json",
        )


def _wait_http(port: int, deadline_s: float = 60.0) -> None:
    import socket

    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


@asynccontextmanager
async def _http_client(url: str, key: str | None) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http), mode="auto") as client:
        yield client


@asynccontextmanager
async def _stdio_client(command: list[str], env: dict[str, str]) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), mode="auto") as client:
            yield client


async def _measure(data_dir: Path, key: str, mnemo_port: int, sdk_ports: dict[str, int], calls: int, turn: int) -> Any:
    mnemo = str(Path(sys.executable).with_name("mnemo"))
    env = {"PATH": os.environ.get("PATH", ""), "MNEMO_DATA_DIR": str(data_dir), "HOME": str(data_dir)}
    async with AsyncExitStack() as stack:
        clients = {
            "mnemo stdio": await stack.enter_async_context(_stdio_client([mnemo, "mcp", "--project", "empty"], env)),
            "mnemo http": await stack.enter_async_context(_http_client(f"http://127.0.0.1:{mnemo_port}/mcp", key)),
            "sdk stdio": await stack.enter_async_context(
                _stdio_client([sys.executable, "-m", "bench.transport_floor", "reference", "stdio"], dict(os.environ))
            ),
            "sdk http json": await stack.enter_async_context(
                _http_client(f"http://127.0.0.1:{sdk_ports['http-json']}/mcp", None)
            ),
            "sdk http sse": await stack.enter_async_context(
                _http_client(f"http://127.0.0.1:{sdk_ports['http-sse']}/mcp", None)
            ),
            "mnemo http raw": _Raw(mnemo_port, key),
            "sdk http json raw": _Raw(sdk_ports["http-json"], None),
        }
        calling: dict[str, Callable[[Any], Any]] = {
            "mnemo stdio": lambda c: c.call_tool("search_memory", {"query": "anything"}),
            "mnemo http": lambda c: c.call_tool("search_memory", {"query": "anything", "project": "empty"}),
            "sdk stdio": lambda c: c.call_tool("empty", {"query": "anything"}),
            "sdk http json": lambda c: c.call_tool("empty", {"query": "anything"}),
            "sdk http sse": lambda c: c.call_tool("empty", {"query": "anything"}),
            "mnemo http raw": lambda c: c.call_tool("search_memory", {"query": "anything", "project": "empty"}),
            "sdk http json raw": lambda c: c.call_tool("empty", {"query": "anything"}),
        }
        for name, client in clients.items():
            await client.list_tools()  # as hosts do
            for _ in range(turn):  # warm-up
                await calling[name](client)
        samples: dict[str, list[float]] = {name: [] for name in clients}
        while len(samples["mnemo stdio"]) < calls:
            for name, client in clients.items():
                for _ in range(turn):
                    t0 = time.perf_counter()
                    result = await calling[name](client)
                    samples[name].append((time.perf_counter() - t0) * 1000)
                    if result.is_error:
                        raise RuntimeError(f"{name}: {result.content}")
    return samples


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def run(calls: int, turn: int) -> dict[str, Any]:
    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        env = {**os.environ, "MNEMO_DATA_DIR": str(data_dir), "HOME": tmp}
        mnemo = str(Path(sys.executable).with_name("mnemo"))
        subprocess.run([mnemo, "workspace", "create", "floor"], env=env, check=True, capture_output=True)
        subprocess.run([mnemo, "project", "create", "empty"], env=env, check=True, capture_output=True)
        # the bench's calls come faster than the default 120 a minute (bench.callsplit does the same)
        subprocess.run([mnemo, "limits", "set", "--search", "1000000"], env=env, check=True, capture_output=True)
        made = subprocess.run(
            [mnemo, "--json", "key", "create", "--label", "floor", "--scope", "memory:read"],
            env=env,
            check=True,
            capture_output=True,
        )
        key = json.loads(made.stdout)["secret"]
        sdk_ports = {"http-json": free_port(), "http-sse": free_port()}
        sdk = [
            subprocess.Popen(
                [sys.executable, "-m", "bench.transport_floor", "reference", mode, "--port", str(port)],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            for mode, port in sdk_ports.items()
        ]
        try:
            for port in sdk_ports.values():
                _wait_http(port)
            with served(data_dir, Path(tmp) / "serve.log") as (port, _pid):
                samples = anyio.run(_measure, data_dir, key, port, sdk_ports, calls, turn)
        finally:
            for proc in sdk:
                proc.terminate()
                proc.wait(timeout=15)
    rows = {name: {"p50": _p(v, 0.5), "p99": _p(v, 0.99), "n": len(v)} for name, v in samples.items()}
    pairs = {
        "mnemo": rows["mnemo http"]["p50"] - rows["mnemo stdio"]["p50"],
        "sdk json": rows["sdk http json"]["p50"] - rows["sdk stdio"]["p50"],
        "sdk sse": rows["sdk http sse"]["p50"] - rows["sdk stdio"]["p50"],
        "mnemo raw": rows["mnemo http raw"]["p50"] - rows["mnemo stdio"]["p50"],
        "sdk json raw": rows["sdk http json raw"]["p50"] - rows["sdk stdio"]["p50"],
    }
    return {
        "command": f"python -m bench.transport_floor --calls {calls} --turn {turn}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": resultfiles.commit(),
        "sessions": rows,
        "http_over_stdio_p50": {k: round(v, 3) for k, v in pairs.items()},
        "median_ms": {name: round(statistics.median(v), 3) for name, v in samples.items()},
    }


def rows_gap(res: dict[str, Any]) -> str:
    """What the SDK's HTTP client adds over a bare kept-alive POST, on Mnemo's server and the SDK's."""
    s = res["sessions"]
    mnemo = s["mnemo http"]["p50"] - s["mnemo http raw"]["p50"]
    sdk = s["sdk http json"]["p50"] - s["sdk http json raw"]["p50"]
    return f"{mnemo:.2f} (Mnemo) / {sdk:.2f} (the SDK's server)"


def render(res: dict[str, Any]) -> str:
    lines = [
        "# What Streamable HTTP costs over stdio for an empty answer",
        "",
        f"`{res['command']}` ({res['date']}; commit {res['commit']}), on this shared 2-core machine. The five",
        "sessions of the official MCP Python SDK's client were open at once and called in turns, so the",
        "figures share the same minutes (the method: bench/transport_floor.py's docstring). Raw:",
        "[transport-floor.json](transport-floor.json).",
        "",
        "| session | p50 ms | p99 ms | calls |",
        "|---|---:|---:|---:|",
    ]
    for name in SESSIONS:
        row = res["sessions"][name]
        lines.append(f"| {name} | {row['p50']} | {row['p99']} | {row['n']} |")
    d = res["http_over_stdio_p50"]
    lines += [
        "",
        "HTTP over stdio at p50, ms: Mnemo "
        f"{d['mnemo']:+.3f}; the SDK's own server {d['sdk json']:+.3f} answering JSON, {d['sdk sse']:+.3f} "
        "answering an SSE stream. Without the SDK's client (`raw`: the same JSON-RPC POSTed by `http.client` on a "
        f"kept-alive connection): Mnemo {d['mnemo raw']:+.3f}, the SDK's server {d['sdk json raw']:+.3f}; so the "
        f"SDK's HTTP client costs about {rows_gap(res)} ms of the difference.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.transport_floor", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    ref = sub.add_parser("reference", help="run the SDK's reference server (used by the bench itself)")
    ref.add_argument("transport", choices=["stdio", "http-json", "http-sse"])
    ref.add_argument("--port", type=int, default=0)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--turn", type=int, default=20)
    args = parser.parse_args(argv)
    if args.command == "reference":
        reference_server(args.transport, args.port)
        return 0
    res = run(args.calls, args.turn)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "transport-floor.json").write_text(json.dumps(res, indent=2) + "\n")
    (RESULTS / "transport-floor.md").write_text(render(res))
    print(render(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
