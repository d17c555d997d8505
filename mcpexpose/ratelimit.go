package mcpexpose

import (
	"context"
	"log/slog"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// rateCheck is the type of execution's rate check, the one Plan.Invoke
// applies to a call, which execution installs in internal/registry
// (registry.InstallRateCheck): it counts one request of p under name
// against limit with lim, and returns the failure to refuse it with, and
// the limiter's error, to log, when the limiter could not decide.
type rateCheck = func(ctx context.Context, lim execution.Limiter, name string, p policy.Principal, limit agnara.RateLimit) (*execution.Failure, error)

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
	f, err := s.checkRate(ctx, s.requests, s.app.Name()+" "+method, p, s.opts.RateLimit)
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelError, "rate limiter unavailable", slog.String("method", method), slog.Any("error", err))
		return f
	}
	if f != nil && s.opts.Meter != nil {
		s.opts.Meter.Count(EventRateLimited, method)
	}
	return f
}
