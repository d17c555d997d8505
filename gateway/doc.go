// Package gateway is agnara-go's governed gateway: one MCP server that
// imports tools from the MCP servers an organization runs (over Streamable
// HTTP, or as child processes over stdio) and serves them again under its
// own identity, scopes, limits and durable approvals.
//
// Nothing is imported without a binding: the host declares, per upstream,
// each remote tool it imports, whether it is a read or a write (every call
// of a write waits for an approval by another person), its local name,
// title, scopes and schema profile. A caller's token never reaches an
// upstream; the gateway uses its own credentials.
//
// The declaration is a [Config], usually read from a YAML file with [Load]
// (the command `agnara gateway -config gateway.yaml` does that and serves
// it; `agnara gateway -sample` prints a commented sample), or built in Go,
// where [Options.Validators] adds argument-level scope checks.
//
// Each upstream is followed on its own: a stdio upstream's process is
// started, its standard error logged, and restarted with backoff when it
// exits; a restart is a new session, whose catalog is imported again and
// swapped in without dropping the gateway's own sessions. While an upstream
// is down its tools answer [ReasonUpstreamUnavailable] and drop out of
// callers' lists; the other upstreams keep serving.
//
// See docs/gateway.md for the config reference and operation.
package gateway
