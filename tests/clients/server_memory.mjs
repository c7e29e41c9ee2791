// Make a store of the official MCP memory server (@modelcontextprotocol/server-memory, pinned in
// package.json) through its own MCP tools, driven by the pinned TypeScript SDK client: entities with
// observations, relations, more observations; then read the graph back. Prints what the server
// answered to read_graph as JSON on stdout. The store is the JSON Lines file MEMORY_FILE_PATH names.
//
//   node server_memory.mjs '{"file": "/tmp/memory.jsonl", "entities": [...], "relations": [...], "observations": [...]}'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";

const spec = JSON.parse(process.argv[2]);
const server = fileURLToPath(new URL("node_modules/@modelcontextprotocol/server-memory/dist/index.js", import.meta.url));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [server],
  env: { ...process.env, MEMORY_FILE_PATH: spec.file },
  stderr: "pipe",
});
const client = new Client({ name: "mnemo-import-test", version: "1.0.0" });
await client.connect(transport);

async function call(name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result;
}

await call("create_entities", { entities: spec.entities });
await call("create_relations", { relations: spec.relations });
await call("add_observations", { observations: spec.observations });
const graph = await call("read_graph", {});
await client.close();
process.stdout.write(JSON.stringify(graph.structuredContent ?? JSON.parse(graph.content[0].text)));
