// Package health serves the liveness and readiness endpoints of the
// project's servers: /healthz answers while the process serves, /readyz
// while every dependency it needs answers too, naming the one that does
// not. A load balancer checks /readyz (examples/cluster/haproxy.cfg).
//
// A readiness body names checks, never their errors: a driver's error can
// carry a host, a user or worse. The errors go to the logger, at warn.
package health

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds each check of a /readyz request.
const DefaultTimeout = 2 * time.Second

// Check is one dependency's probe.
type Check struct {
	// Name names the dependency in the body and the log ("redis",
	// "postgres", "upstream github"). It must not hold a secret.
	Name string
	// Probe returns nil while the dependency answers.
	Probe func(ctx context.Context) error
	// Degrades marks a dependency whose failure is reported in the body
	// but leaves the server ready: it still serves its other callers.
	Degrades bool
}

// Live serves /healthz: 200 "ok" while the process serves.
func Live() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte("ok\n"))
	})
}

// Ready serves /readyz: it runs every check checks returns, at once, each
// bounded by DefaultTimeout, and answers 200 "ready" when none that counts
// failed, or 503 "not ready", followed by one line per check ("redis: ok",
// "redis: unreachable"). checks is called for each request, so that what
// is checked may change (a gateway's upstreams after a reload). logger
// receives each failure's error.
func Ready(checks func() []Check, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs := checks()
		errs := make([]error, len(cs))
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(r.Context(), DefaultTimeout)
				defer cancel()
				errs[i] = c.Probe(ctx)
			}()
		}
		wg.Wait()
		ready := true
		var b strings.Builder
		for i, c := range cs {
			b.WriteString(c.Name)
			if errs[i] == nil {
				b.WriteString(": ok\n")
				continue
			}
			b.WriteString(": unreachable\n")
			if !c.Degrades {
				ready = false
			}
			logger.LogAttrs(r.Context(), slog.LevelWarn, "readiness check failed", slog.String("check", c.Name), slog.String("error", errs[i].Error()))
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if ready {
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("ready\n" + b.String()))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("not ready\n" + b.String()))
	})
}
