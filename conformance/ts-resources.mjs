// A real TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// package-lock.json) for resources and prompts, used by Go tests as an
// independent peer. It connects to the MCP endpoint given as the first
// argument (with the bearer token given as the optional second, "" for
// none), lists resources, resource templates and prompts, then runs each
// step of the JSON array given as the third argument and prints one JSON
// line with what it saw. A step is {"read": URI}, {"prompt": NAME,
// "arguments": {...}} or {"complete": {"ref": {...}, "argument": {...}}};
// a step that fails records {"error": {"code", "message", "data"}}.
//
//   node ts-resources.mjs http://127.0.0.1:PORT/mcp TOKEN '[{"read":"docs://readme"}]'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, steps] = process.argv.slice(2);
if (!url) {
  console.error("usage: node ts-resources.mjs URL [TOKEN] [STEPS_JSON]");
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error("ts-resources: timed out");
  process.exit(3);
}, 20000);

const transport = new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {});
const client = new Client({ name: "agnara-ts-peer", version: "1.0.0" }, {});

async function run(step) {
  try {
    if (step.read !== undefined) {
      return await client.readResource({ uri: step.read });
    }
    if (step.prompt !== undefined) {
      return await client.getPrompt({ name: step.prompt, arguments: step.arguments ?? {} });
    }
    if (step.complete !== undefined) {
      return await client.complete(step.complete);
    }
    return { error: { message: "unknown step" } };
  } catch (err) {
    return { error: { code: err?.code, message: String(err?.message ?? err), data: err?.data } };
  }
}

try {
  await client.connect(transport);
  const resources = await client.listResources();
  const templates = await client.listResourceTemplates();
  const prompts = await client.listPrompts();
  const results = [];
  for (const step of steps ? JSON.parse(steps) : []) {
    results.push(await run(step));
  }
  console.log(JSON.stringify({
    protocolVersion: transport.protocolVersion,
    capabilities: client.getServerCapabilities(),
    resources: resources.resources.map((r) => r.uri),
    templates: templates.resourceTemplates.map((t) => t.uriTemplate),
    prompts: prompts.prompts.map((p) => p.name),
    results,
  }));
  await client.close();
} catch (err) {
  console.error("ts-resources:", err?.message ?? err);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
}
