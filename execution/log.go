package execution

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agnara-go/agnara/policy"
)

// logFinished writes the one record of a finished invocation: capability
// identity, principal id, outcome code and duration. Argument values are
// never logged.
func (p *Plan) logFinished(ctx context.Context, principal policy.Principal, out Outcome, err error, d time.Duration) {
	if !p.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	outcome := LabelOf(out)
	if out == nil && errors.Is(err, context.DeadlineExceeded) {
		outcome = "deadline_exceeded"
	}
	p.logger.LogAttrs(ctx, slog.LevelInfo, "invocation finished",
		slog.String("capability", p.identity),
		slog.String("principal", principal.ID()),
		slog.String("outcome", string(outcome)),
		slog.Duration("duration", d))
}

// fanout sends every record to several handlers: the application's and the
// one an adapter supplied for this invocation.
type fanout []slog.Handler

func (f fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range f {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range f {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (f fanout) WithAttrs(attrs []slog.Attr) slog.Handler {
	g := make(fanout, len(f))
	for i, h := range f {
		g[i] = h.WithAttrs(attrs)
	}
	return g
}

func (f fanout) WithGroup(name string) slog.Handler {
	g := make(fanout, len(f))
	for i, h := range f {
		g[i] = h.WithGroup(name)
	}
	return g
}
