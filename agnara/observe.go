package agnara

import (
	"context"
	"strconv"
)

// Observer watches an application's requests and the stages of their
// invocations, for tracing and metrics (package otelmcp provides one
// for OpenTelemetry). It is set once, in [Options.Observer]: the
// invocation pipeline (package execution) reports stages to it and every
// exposure serving the application (package mcpexpose) reports requests to
// it, so a stage's span is a child of its request's.
//
// Each method is called when something begins; it returns the context that
// thing runs with (a span's, say) and a function called exactly once when
// it ends. An Observer must be safe for concurrent use. A nil Observer costs
// nothing: no call, no allocation.
type Observer interface {
	// Request is called when an exposure has routed a request and
	// identified its caller. The returned function receives how the request
	// ended (see [Label]) and, for a protocol error, the error.
	Request(ctx context.Context, r RequestInfo) (context.Context, func(Label, error))
	// Stage is called when a stage of an invocation of capability (its
	// identity, "<app>.<name>") begins. The returned function receives the
	// stage's error, or its failure, or nil.
	Stage(ctx context.Context, capability string, stage Stage) (context.Context, func(error))
}

// RequestInfo describes a request to [Observer.Request]. The exposure fills
// it in; for MCP, requests are tools/list and tools/call.
type RequestInfo struct {
	// Method is the protocol's name for the request ("tools/list",
	// "tools/call").
	Method string
	// Tool is the called tool's name as the caller sent it, for a call;
	// empty otherwise.
	Tool string
	// ProtocolVersion is the request's protocol version.
	ProtocolVersion string
	// PrincipalID is the caller's principal id ("" for anonymous).
	PrincipalID string
	// Meta is the request's metadata (for MCP, its _meta, which carries
	// trace context such as traceparent). It must not be modified.
	Meta map[string]any
}

// Stage names a stage of an invocation, in the order they run. Each stage
// runs only when the capability has something for it to do: policies,
// a confirmation requirement, dependencies.
type Stage uint8

const (
	// StagePolicy evaluates the capability's policies.
	StagePolicy Stage = iota + 1
	// StageConfirmation asks for, or verifies, the declared confirmation.
	StageConfirmation
	// StageDependencies resolves the handler's dependencies.
	StageDependencies
	// StageHandler runs the handler.
	StageHandler
)

var stageNames = [...]string{
	StagePolicy:       "policy",
	StageConfirmation: "confirmation",
	StageDependencies: "dependencies",
	StageHandler:      "handler",
}

// String returns the stage's name: "policy", "confirmation",
// "dependencies" or "handler" (what traces call the stage's span).
func (s Stage) String() string {
	if s > 0 && int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "Stage(" + strconv.Itoa(int(s)) + ")"
}

// Label names how a request or an invocation ended, for logs, traces and
// metrics. It is one of the constants below or the name of a failure code
// (such as "invalid_input" or "timeout"; see execution.Code). Package
// execution's Label function names an invocation's outcome.
type Label string

const (
	// LabelOK is a success.
	LabelOK Label = "ok"
	// LabelInputRequired is a round that ended by asking the caller for
	// input (a confirmation, a form); the caller answers in another round.
	LabelInputRequired Label = "input_required"
	// LabelCanceled is an invocation whose caller went away before it had
	// an outcome.
	LabelCanceled Label = "canceled"
	// LabelError is a request answered with a protocol error rather than a
	// result (such as a malformed request state); the error is reported
	// beside it.
	LabelError Label = "error"
)

// Failed reports whether l is neither [LabelOK] nor [LabelInputRequired]:
// whether the request or invocation did not do what was asked and did not
// ask a question instead.
func (l Label) Failed() bool { return l != LabelOK && l != LabelInputRequired }
