// The host side of the MCP Apps browser test (gateway/apps_browser_test.go),
// bundled for the browser with esbuild at test time: what a chat client does
// with a tool that has a UI. It connects an MCP client (the TypeScript SDK
// v2) to the endpoint on its own origin (the gateway, through the test's
// proxy), calls the tool, reads the ui:// resource the tool links, and
// renders it the way the MCP Apps SDK's reference host does: a sandbox
// proxy iframe on another origin, whose CSP header the resource's
// _meta.ui.csp decides, and the view inside it, talking to the host through
// ext-apps' AppBridge over postMessage. Tool calls the view makes go through
// the bridge to the same MCP client, with the caller's credentials.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const host = { name: "agnara test host", version: "1.0.0" };
// The test passes {tool, arguments, sandbox, protocol} in the fragment,
// which never leaves the browser.
const params = JSON.parse(decodeURIComponent(location.hash.slice(1)));
const $ = (id) => document.getElementById(id);

// step shows what the host is doing, so that a test that waits too long
// says where.
function step(text) {
  $("status").textContent = text;
}

function note(text, kind) {
  const li = document.createElement("li");
  li.textContent = text;
  if (kind) li.className = kind;
  $("log").append(li);
}

function summary(result) {
  const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
  const short = text.length > 90 ? text.slice(0, 90) + "…" : text;
  return (result.isError ? "refused: " : "answered: ") + short;
}

// sandboxLoaded points iframe at the sandbox proxy, with the view's CSP,
// and resolves when the proxy says it is ready.
function sandboxLoaded(iframe, csp) {
  const ready = new Promise((resolve) => {
    const listener = (event) => {
      if (event.source === iframe.contentWindow && event.data?.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", listener);
        resolve();
      }
    };
    window.addEventListener("message", listener);
  });
  const url = new URL(params.sandbox);
  url.searchParams.set("csp", JSON.stringify(csp ?? {}));
  iframe.src = url.href;
  return ready;
}

async function main() {
  const client = new Client(host, {
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } },
    // 2025-11-25 is the handshake era (initialize); 2026-07-28 the
    // stateless one (server/discover).
    versionNegotiation: { mode: params.protocol === "2025-11-25" ? "legacy" : { pin: params.protocol } },
  });
  step("connecting…");
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  $("protocol").textContent = `MCP ${client.getNegotiatedProtocolVersion()}`;

  step("listing tools…");
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === params.tool);
  if (!tool) throw new Error(`${params.tool} is not listed`);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${tool.name} has no UI`);
  $("tool").textContent = tool.title ?? tool.name;
  $("arguments").textContent = JSON.stringify(params.arguments);

  step("calling the tool…");
  const result = await client.callTool({ name: tool.name, arguments: params.arguments });
  note(`${tool.name} ${summary(result)}`);
  step("reading the view…");
  const read = await client.readResource({ uri });
  const content = read.contents?.[0];
  if (read.contents?.length !== 1 || content.mimeType !== RESOURCE_MIME_TYPE || typeof content.text !== "string") {
    throw new Error(`${uri} is not one ${RESOURCE_MIME_TYPE} text`);
  }
  const csp = content._meta?.ui?.csp;
  $("uri").textContent = uri;
  // The page's SHA-256, which the test compares with the upstream's page.
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(content.text));
  $("view").dataset.sha256 = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");

  const iframe = $("app");
  if (content._meta?.ui?.prefersBorder) iframe.classList.add("border");
  step("loading the sandbox…");
  await sandboxLoaded(iframe, csp);

  const bridge = new AppBridge(client, host, { openLinks: {}, serverTools: {}, logging: {} }, {
    hostContext: { toolInfo: { tool }, theme: "light", displayMode: "inline", platform: "web" },
  });
  bridge.addEventListener("sizechange", ({ height }) => {
    if (height !== undefined) iframe.style.height = `${height}px`;
  });
  const initialized = new Promise((resolve) => bridge.addEventListener("initialized", resolve));
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  // connect forwards the view's tools/call to the client; the host notes
  // each one, as a chat client shows what an app did.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (request, extra) => {
    note(`the app calls ${request.name} ${JSON.stringify(request.arguments ?? {})}`);
    try {
      const answer = await forward(request, extra);
      note(`${request.name} ${summary(answer)}`, answer.isError ? "refused" : "ok");
      return answer;
    } catch (err) {
      note(`${request.name} failed: ${err.message}`, "refused");
      throw err;
    }
  };
  step("starting the view…");
  await bridge.sendSandboxResourceReady({ html: content.text, csp });
  await initialized;
  await bridge.sendToolInput({ arguments: params.arguments });
  await bridge.sendToolResult(result);
  step("ready");
}

main().catch((err) => {
  $("status").textContent = "failed: " + err.message;
  $("status").className = "failed";
});
