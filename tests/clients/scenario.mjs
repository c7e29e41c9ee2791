// One session of the official TypeScript SDK Client (@modelcontextprotocol/sdk, pinned in
// package.json) against Mnemo, as hosts built on it run one: connect, list the tools (which arms
// the SDK's outputSchema validation), add a memory, find it, make a call Mnemo rejects, call a tool
// that does not exist; list the prompts and get one, list the resources and templates, read them. Prints what the client saw as one JSON document on stdout.
//
//   node scenario.mjs '{"transport": "http", "url": "http://127.0.0.1:8787/mcp", "headers": {...}}'
//   node scenario.mjs '{"transport": "stdio", "command": "...", "args": [...], "env": {...}}'
//
// A call that throws is recorded as {"threw": {"name", "code", "message"}}; the Python test decides.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const spec = JSON.parse(process.argv[2]);
const marker = spec.marker ?? `m${Date.now()}`;

let transport;
let stderr = "";
if (spec.transport === "http") {
  transport = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers ?? {} } });
} else {
  transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: "pipe" });
  transport.stderr?.on("data", (chunk) => { stderr += chunk; });
}

async function attempt(fn) {
  try {
    return await fn();
  } catch (error) {
    return { threw: { name: error?.constructor?.name, code: error?.code, message: String(error?.message) } };
  }
}

const client = new Client({ name: "mnemo-test-ts-sdk", version: "1.0.0" });
await client.connect(transport);
const seen = {
  protocolVersion: transport.protocolVersion ?? null,
  server: client.getServerVersion() ?? null,
  instructions: client.getInstructions() ?? null,
};
seen.tools = (await client.listTools()).tools;
seen.added = await attempt(() =>
  client.callTool({ name: "memory_add", arguments: { content: `TS SDK decision ${marker}`, kind: "decision" } }));
seen.found = await attempt(() => client.callTool({ name: "search_memory", arguments: { query: marker } }));
seen.refused = await attempt(() =>
  client.callTool({ name: "memory_add", arguments: { content: "x".repeat(4097) } }));
seen.refusedSearch = await attempt(() => client.callTool({ name: "memory_search", arguments: { q: "x", limit: 0 } }));
seen.unknown = await attempt(() => client.callTool({ name: "no_such_tool", arguments: {} }));
seen.capabilities = client.getServerCapabilities() ?? null;
seen.prompts = (await attempt(() => client.listPrompts())).prompts;
seen.prompt = await attempt(() =>
  client.getPrompt({ name: "save_decision", arguments: { decision: `Use Typst ${marker}`, reason: "fast" } }));
seen.resources = (await attempt(() => client.listResources())).resources;
seen.templates = (await attempt(() => client.listResourceTemplates())).resourceTemplates;
seen.recent = await attempt(() => client.readResource({ uri: "mnemo://memories/recent" }));
const addedId = seen.added?.structuredContent?.memory?.id;
seen.memory = await attempt(() => client.readResource({ uri: `mnemo://memories/${addedId}` }));
seen.missing = await attempt(() => client.readResource({ uri: "mnemo://memories/mem_00000000000000000000000000" }));
await client.close();
seen.stderr = stderr;
process.stdout.write(JSON.stringify(seen) + "\n");
