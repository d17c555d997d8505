// Package mcpexpose serves an application's capabilities as Model Context
// Protocol tools, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Exposure is separate from semantics: an [Exposure] declares which
// capabilities are tools and under which wire names; [Exposure.Compile]
// compiles the application and returns an immutable [Snapshot]. From a
// snapshot come SDK servers ([NewServer], [NewDiscoveryServer]), an
// http.Handler that serves both protocol eras on one URL ([NewHandler]), and a
// stdio runner ([RunStdio]).
//
// Every tools/call goes through the same steps: the tool is looked up in the
// snapshot (an unknown name, or a tool the caller may not see, is a JSON-RPC
// -32602 error), the caller's verified token facts are mapped to a
// policy.Principal by the application's [IdentityMapper], and the plan is
// invoked (scope guard, validation, policies, dependencies, handler). The
// outcome becomes a tool result through [ProjectResult]. tools/list shows
// each caller exactly the tools whose scopes it holds, in declaration order,
// in one page.
package mcpexpose
