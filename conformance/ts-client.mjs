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
// Ajv in strict mode stands for a downstream client that compiles the input
// schemas it lists (the SDK depends on ajv and ajv-formats; the lockfile
// pins them).
import Ajv from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// inputCheck compiles a listed input schema with a strict Ajv of the draft
// its "$schema" names (draft-07 when it names none of the newer ones) and
// validates args against it.
function inputCheck(schema, args) {
  const dialect = String(schema?.$schema ?? "");
  const Class = dialect.includes("2020-12") ? Ajv2020 : dialect.includes("2019-09") ? Ajv2019 : Ajv;
  const ajv = new Class({ strict: true, allErrors: true });
  addFormats(ajv);
  try {
    const validate = ajv.compile(schema);
    return { compiled: true, valid: validate(args) };
  } catch (err) {
    return { compiled: false, error: String(err?.message ?? err) };
  }
}

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
    inputCheck: inputCheck(list.tools.find((t) => t.name === tool)?.inputSchema, args ? JSON.parse(args) : {}),
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
