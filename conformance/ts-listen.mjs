// A connected TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// package-lock.json), used by Go tests to watch a live catalog: it connects
// to the MCP endpoint given as the first argument, lists the tools, prints
// the line "ready", waits for notifications/tools/list_changed, lists the
// tools again, calls the tool named by the second argument (with no
// arguments) on the same session, and prints one JSON line with what it saw.
//
//   node ts-listen.mjs http://127.0.0.1:PORT/mcp tool_name
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, tool] = process.argv.slice(2);
if (!url || !tool) {
  console.error("usage: node ts-listen.mjs URL TOOL");
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error("ts-listen: timed out");
  process.exit(3);
}, 20000);

const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "agnara-ts-listener", version: "1.0.0" });
let changed;
const notified = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
try {
  await client.connect(transport);
  const sessionBefore = transport.sessionId;
  const before = await client.listTools();
  console.log("ready");
  await notified;
  const after = await client.listTools();
  const result = await client.callTool({ name: tool, arguments: {} });
  console.log(JSON.stringify({
    protocolVersion: transport.protocolVersion,
    capabilities: client.getServerCapabilities(),
    sameSession: sessionBefore !== undefined && sessionBefore === transport.sessionId,
    before: before.tools.map((t) => t.name),
    after: after.tools.map((t) => t.name),
    result,
  }));
  await client.close();
} catch (err) {
  console.error("ts-listen:", err?.message ?? err);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
}
