// The view of the shop's list_orders tool in the MCP Apps browser test
// (gateway/apps_browser_test.go): an MCP App written with ext-apps' App
// class, bundled with esbuild at test time and inlined into the HTML the
// test's upstream serves at ui://shop/orders.html. It renders the tool's
// result, asks for a customer through the host (callServerTool) when a
// person clicks, and probes the CSP its host applied: the stock API its
// connectDomains list is reachable, the tracker it does not list is not.
import { App } from "@modelcontextprotocol/ext-apps/app-with-deps";

const $ = (id) => document.getElementById(id);
const app = new App({ name: "Orders", version: "1.0.0" });

// The name of a sibling tool as this host sees it: a gateway renames the
// upstream's tools (prefix, namespace), so the view derives it from the
// name of the tool it was opened for.
function sibling(remote) {
  const self = app.getHostContext()?.toolInfo?.tool?.name ?? "list_orders";
  return self.endsWith("list_orders") ? self.slice(0, -"list_orders".length) + remote : remote;
}

// value is a tool result's structured value: agnara-go servers wrap it as
// {"result": …}, others send it bare.
function value(result) {
  const sc = result.structuredContent;
  return sc && typeof sc === "object" && "result" in sc && Object.keys(sc).length === 1 ? sc.result : sc;
}

async function showCustomer(id) {
  const answer = $("customer");
  answer.className = "";
  answer.textContent = "Asking…";
  try {
    const result = await app.callServerTool({ name: sibling("customer"), arguments: { id } });
    const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
    if (result.isError) {
      answer.className = "refused";
      answer.textContent = "Refused: " + text;
      return;
    }
    const c = value(result) ?? JSON.parse(text);
    answer.className = "ok";
    answer.textContent = `${c.name}, ${c.city}`;
  } catch (err) {
    answer.className = "refused";
    answer.textContent = "Refused: " + err.message;
  }
}

function render(result) {
  const orders = value(result)?.orders ?? [];
  const rows = $("orders");
  rows.replaceChildren();
  for (const o of orders) {
    const tr = document.createElement("tr");
    for (const v of [o.id, o.item, o.total]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.append(td);
    }
    const td = document.createElement("td");
    const b = document.createElement("button");
    b.id = "customer-" + o.id;
    b.textContent = "Customer";
    b.addEventListener("click", () => showCustomer(o.id));
    td.append(b);
    tr.append(td);
    rows.append(tr);
  }
  $("count").textContent = `${orders.length} open orders`;
}

// probe reports whether the host's CSP let the view reach url.
async function probe(id, url) {
  const out = $(id);
  try {
    const r = await fetch(url);
    out.textContent = `reached (${r.status})`;
  } catch {
    out.textContent = "blocked";
  }
}

document.addEventListener("securitypolicyviolation", (e) => {
  $("violations").textContent = `(the host's CSP refused ${new URL(e.blockedURI).origin}, ${e.effectiveDirective})`;
});

app.ontoolresult = render;

await app.connect();
const probes = document.body.dataset;
await Promise.all([probe("api", probes.api), probe("tracker", probes.tracker)]);
