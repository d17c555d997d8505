// Package mcpexpose serves an application's capabilities over the Model
// Context Protocol, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Exposure is separate from semantics: an [Exposure] declares which
// capabilities are tools ([Exposure.Tool], optionally run as tasks of the
// tasks extension with [ToolOptions].Task, optionally with an MCP App view,
// [ToolOptions].UI), resources and resource
// templates ([Exposure.Resource], [Exposure.ResourceTemplate]), prompts
// ([Exposure.Prompt]) and withdrawn names ([Exposure.Withdrawn]), under
// which wire names; [Exposure.Compile] compiles the application and returns
// an immutable [Snapshot]. From a snapshot come:
//
//   - an http.Handler that serves the revisions 2025-06-18, 2025-11-25 and
//     2026-07-28 on one URL ([NewHandler]), with bearer-token verification,
//     session and stream limits ([Limits]), rate limits, tasks
//     ([TaskOptions]) and an audit trail ([AuditSink]);
//   - a hardened http.Server for it ([NewHTTPServer]);
//   - SDK servers ([NewServer], [NewDiscoveryServer]), a stdio runner
//     ([RunStdio]), and a [Live] catalog that replaces the snapshot while
//     clients stay connected.
//
// Every tools/call goes through the same steps: the tool is looked up in the
// snapshot (an unknown name, or a tool the caller may not see, is a JSON-RPC
// -32602 error), the caller's verified token facts are mapped to a
// policy.Principal by the application's [IdentityMapper], and the plan is
// invoked (scope guard, validation, policies, confirmation, dependencies,
// handler). The outcome becomes a tool result through [ProjectResult].
// Lists show each caller exactly the capabilities whose scopes it holds, in
// declaration order, in one page; completion answers only for what the
// caller may see.
//
// The handler's edge reads each request once and answers the ordinary
// requests of either protocol era itself (a stateless 2026-07-28 call, a
// call on a handshake-era session), proven by differential tests to answer
// as the SDK does; everything else goes to the SDK's handlers
// ([Handler.FastPathRequests] counts what the edge answered). docs/mcp.md
// describes the wire behaviour, docs/tasks.md the tasks, docs/apps.md the
// views.
package mcpexpose
