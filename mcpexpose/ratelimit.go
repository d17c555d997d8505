package mcpexpose

import (
	"context"
	"log/slog"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// limitRequest counts one request of p that invokes no capability but
// reads or changes state on a caller's behalf — tasks/get, tasks/update,
// tasks/cancel, completion/complete — against ServerOptions.RateLimit,
// before anything is read: each method in a bucket of its own per caller,
// apart from every tool's calls, so that polling a task never spends a
// call, an answer or a cancellation (ADR 31). It returns the failure to
// refuse the request with, or nil.
func (s *server) limitRequest(ctx context.Context, method string, p policy.Principal) *execution.Failure {
	if s.opts.RateLimit.IsZero() {
		return nil
	}
	f, err := execution.CheckRate(ctx, s.requests, s.app.Name()+" "+method, p, s.opts.RateLimit)
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelError, "rate limiter unavailable", slog.String("method", method), slog.Any("error", err))
		return execution.LimiterUnavailable()
	}
	if f != nil && s.opts.Meter != nil {
		s.opts.Meter.Count(EventRateLimited, method)
	}
	return f
}
