package execution

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agnara-go/agnara/policy"
)

// Context is the execution context of one invocation. A handler receives it
// by declaring *execution.Context as its first parameter; a handler that
// declares context.Context gets the same value and can recover it with
// [FromContext].
//
// Context implements [context.Context]: its deadline is the invocation's
// deadline and it is done when the invocation is cancelled or times out. A
// Context is valid only while the handler runs; it must not be retained. It is
// safe for concurrent use by the handler's goroutines.
type Context struct {
	ctx        context.Context
	plan       *Plan
	principal  policy.Principal
	progress   ProgressReporter
	logHandler slog.Handler
	timeout    time.Duration // the deadline's length, when there is one
	inter      interaction
	detach     func() // Invocation.Detach, nil once called
	detachMu   sync.Mutex

	// Allocated with the context, which lives as long as the invocation:
	// the invocation's arguments (Plan.run), and the context as the
	// context.Context the handler is handed, an interface value reflect
	// takes by address.
	in   input
	self context.Context
}

var _ context.Context = (*Context)(nil)

type contextKey struct{}

// FromContext returns the execution context ctx belongs to, if any.
func FromContext(ctx context.Context) (*Context, bool) {
	if ec, ok := ctx.(*Context); ok {
		return ec, true
	}
	ec, ok := ctx.Value(contextKey{}).(*Context)
	return ec, ok
}

// Deadline implements [context.Context].
func (c *Context) Deadline() (time.Time, bool) { return c.ctx.Deadline() }

// Done implements [context.Context].
func (c *Context) Done() <-chan struct{} { return c.ctx.Done() }

// Err implements [context.Context].
func (c *Context) Err() error { return c.ctx.Err() }

// Value implements [context.Context].
func (c *Context) Value(key any) any {
	if key == (contextKey{}) {
		return c
	}
	return c.ctx.Value(key)
}

// Principal returns the caller.
func (c *Context) Principal() policy.Principal { return c.principal }

// Capability returns the identity of the capability being invoked, such as
// "users.get_user".
func (c *Context) Capability() string { return c.plan.identity }

// Logger returns a logger for the handler's own records, tagged with the
// capability identity. When the invocation came with a log handler of its own
// (an MCP client that asked for log messages, say), records go there too.
func (c *Context) Logger() *slog.Logger {
	h := c.plan.logger.Handler()
	if c.logHandler != nil {
		h = fanout{h, c.logHandler}
	}
	return slog.New(h).With(slog.String("capability", c.plan.identity))
}

// Progress reports how far the invocation has got: progress out of total
// (total 0 when unknown), with an optional message. It does nothing, at no
// cost, when the caller cannot receive progress. Progress should increase
// with every call.
func (c *Context) Progress(progress, total float64, message string) {
	if c.progress != nil {
		c.progress.ReportProgress(c.ctx, progress, total, message)
	}
}

// ProgressReporter delivers progress to the caller of one invocation. Adapters
// provide one when the caller asked for progress (for MCP, when the request
// carried a progress token). Implementations must be safe for concurrent use
// and must not block for long.
type ProgressReporter interface {
	ReportProgress(ctx context.Context, progress, total float64, message string)
}

// Detach tells the adapter that the handler is past its questions and
// starts its long work: an adapter that runs the capability as a task
// answers the caller now, with the task, and the handler goes on. Questions
// asked after it reach the caller through the task. Detach is idempotent,
// and does nothing when the invocation cannot detach (a direct call).
//
// Only a handler of a tool declared to detach by itself needs it (for MCP,
// ToolOptions.TaskAfterQuestions); otherwise the invocation detaches before
// the handler runs. When the adapter cannot detach (it could not store the
// task), the context is cancelled before Detach returns: a handler checks
// it before acting.
func (c *Context) Detach() {
	c.detachMu.Lock()
	f := c.detach
	c.detach = nil
	c.detachMu.Unlock()
	if f != nil {
		f()
	}
}

// Detach calls [Context.Detach] on the execution context ctx belongs to,
// if any, for handlers that take a context.Context.
func Detach(ctx context.Context) {
	if ec, ok := FromContext(ctx); ok {
		ec.Detach()
	}
}
