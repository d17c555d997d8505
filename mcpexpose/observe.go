package mcpexpose

import "context"

// RequestInfo describes a tools/list or tools/call request to a
// [RequestObserver].
type RequestInfo struct {
	// Method is "tools/list" or "tools/call".
	Method string
	// Tool is the called tool's wire name, for tools/call.
	Tool string
	// ProtocolVersion is the request's protocol version.
	ProtocolVersion string
	// PrincipalID is the mapped caller's id ("" for anonymous).
	PrincipalID string
	// Meta is the request's _meta (for trace context such as traceparent).
	// It must not be modified.
	Meta map[string]any
}

// RequestObserver watches tools/list and tools/call requests, for tracing
// and metrics (package mcpexpose/otelmcp provides one for OpenTelemetry).
// Request is called when a request has been routed and its caller
// identified; it returns the context the request runs with and a function
// called when it ends, with its outcome: "ok", a failure code
// ("invalid_input", "forbidden", ..., "timeout"), "input_required" for a
// round that asked questions, or "error" for a protocol error, in which case
// err is set. It must be safe for concurrent use.
type RequestObserver interface {
	Request(ctx context.Context, r RequestInfo) (context.Context, func(outcome string, err error))
}
