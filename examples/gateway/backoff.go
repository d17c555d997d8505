package main

import (
	"context"
	"errors"
	"expvar"
	"log/slog"
	"time"

	"github.com/agnara-go/agnara/execution"
	agw "github.com/agnara-go/agnara/gateway"
)

// catalogSwaps counts the snapshots the gateway handed its handler because
// the upstream catalog changed what it imports (served at /debug/vars).
var catalogSwaps = expvar.NewInt("gateway_catalog_swaps")

// backoff is the gateway's retry schedule for imports: exponential from
// base, at most max between attempts, jittered (gateway.Restart.Delay).
type backoff struct {
	base, max time.Duration
}

var defaultBackoff = backoff{base: 200 * time.Millisecond, max: 30 * time.Second}

// delay is the wait before attempt n+1 after n failed ones (n from 0).
func (b backoff) delay(n int) time.Duration {
	return agw.Restart{Min: agw.Duration(b.base), Max: agw.Duration(b.max)}.Delay(n)
}

// retry runs f until it succeeds or ctx is done, waiting b.delay between
// attempts and logging each failure. It returns ctx's error when ctx ends
// it.
func (b backoff) retry(ctx context.Context, logger *slog.Logger, what string, f func() error) error {
	for n := 0; ; n++ {
		err := f()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		wait := b.delay(n)
		logger.Warn(what+" failed; retrying", slog.String("reason", string(execution.ReasonOf(err))),
			slog.String("error", err.Error()), slog.Int("attempt", n+1), slog.Duration("retry_in", wait))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(ctx.Err(), err)
		case <-t.C:
		}
	}
}
