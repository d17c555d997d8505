// A real TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// package-lock.json), used by Go tests as an independent peer: it connects to
// the MCP endpoint given as the first argument, lists the tools, calls the
// tool named by the second argument with the JSON arguments given as the
// third, and prints one JSON line with what it saw. An optional fourth
// argument, a JSON array, declares the elicitation capability and answers
// the server's elicitation requests in order: each element is the content
// of an "accept", or the string "decline".
//
//   node ts-client.mjs http://127.0.0.1:PORT/mcp tool_name '{"a":1}' '[{"confirm":true}]'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, tool, args, answers] = process.argv.slice(2);
if (!url || !tool) {
  console.error("usage: node ts-client.mjs URL TOOL [ARGS_JSON]");
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error("ts-client: timed out");
  process.exit(3);
}, 20000);

const transport = new StreamableHTTPClientTransport(new URL(url));
const queue = answers ? JSON.parse(answers) : null;
const elicited = [];
const client = new Client(
  { name: "agnara-ts-peer", version: "1.0.0" },
  queue ? { capabilities: { elicitation: {} } } : {},
);
if (queue) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicited.push(request.params.message);
    const next = queue.shift();
    if (next === undefined || next === "decline") {
      return { action: "decline" };
    }
    return { action: "accept", content: next };
  });
}
try {
  await client.connect(transport);
  const list = await client.listTools();
  const result = await client.callTool({ name: tool, arguments: args ? JSON.parse(args) : {} });
  console.log(JSON.stringify({
    protocolVersion: transport.protocolVersion,
    server: client.getServerVersion(),
    tools: list.tools.map((t) => t.name),
    inputSchemas: Object.fromEntries(list.tools.map((t) => [t.name, t.inputSchema])),
    elicited,
    result,
  }));
  await client.close();
} catch (err) {
  console.error("ts-client:", err?.message ?? err);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
}
