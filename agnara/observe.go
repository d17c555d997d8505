package agnara

import "context"

// Observer watches the stages of every invocation, for tracing (package
// mcpexpose/otelmcp provides one for OpenTelemetry). The stages are
// "policy" (policies and the confirmation check), "dependencies" and
// "handler". Stage is called when a stage begins; it returns the context the
// stage runs with (a child span's, say) and a function called with the
// stage's error when it ends. It must be safe for concurrent use. A nil
// Observer costs nothing.
type Observer interface {
	Stage(ctx context.Context, capability, stage string) (context.Context, func(err error))
}
