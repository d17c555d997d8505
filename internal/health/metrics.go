package health

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/agnara-go/agnara/internal/hostcheck"
	"github.com/agnara-go/agnara/internal/httpserver"
)

// DefaultMetricsAddr is where `agnara gateway` serves /metrics unless
// -metrics-addr says otherwise: loopback, on the port commonly used for a
// Prometheus exporter. The users example and the inbox, which may run on
// the same host, default to the next ports (UsersMetricsAddr,
// InboxMetricsAddr).
const (
	DefaultMetricsAddr = "127.0.0.1:9464"
	UsersMetricsAddr   = "127.0.0.1:9465"
	InboxMetricsAddr   = "127.0.0.1:9466"
)

// MetricsFlag is the -metrics-addr flag (a flag.Value): the address, and
// whether the operator set it (a default address already in use is a
// warning, an address asked for that fails is an error).
type MetricsFlag struct {
	// Default is the address when the flag is not set; "" means
	// DefaultMetricsAddr.
	Default string
	addr    string
	set     bool
}

// String returns the address.
func (f *MetricsFlag) String() string {
	switch {
	case f.set:
		return f.addr
	case f.Default != "":
		return f.Default
	}
	return DefaultMetricsAddr
}

// Set sets the address the operator asked for.
func (f *MetricsFlag) Set(s string) error {
	f.addr, f.set = s, true
	return nil
}

// MetricsUsage is the flag's lines of the gateway's usage text.
const MetricsUsage = `  -metrics-addr A  serve Prometheus metrics at http://A/metrics on a
                   listener of their own (default ` + DefaultMetricsAddr + `;
                   "off" serves none)
`

// ServeMetrics serves metrics (prommcp.Metrics.HTTPHandler) at /metrics on f's address until ctx ends, on a
// listener of its own (a loopback one answers only loopback names, as the
// MCP endpoint does). It returns nil without serving when f is "off", or
// when the default address is taken (logged at warn: another process on
// this host serves it already); an address the operator set that cannot
// be listened on is an error.
// The returned channel is closed once the listener has stopped.
func ServeMetrics(ctx context.Context, f *MetricsFlag, metrics http.Handler, logger *slog.Logger) (stopped <-chan struct{}, err error) {
	done := make(chan struct{})
	addr := f.String()
	if addr == "off" || addr == "" {
		close(done)
		return done, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if !f.set {
			logger.Warn("metrics not served: the default address cannot be listened on; set -metrics-addr", slog.String("addr", addr), slog.String("error", err.Error()))
			close(done)
			return done, nil
		}
		return nil, errors.New("-metrics-addr: " + err.Error())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	srv := httpserver.New(hostcheck.OnLoopbackListener(mux, nil), httpserver.Timeouts{})
	logger.Info("serving metrics", slog.String("url", "http://"+ln.Addr().String()+"/metrics"))
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			srv.Close()
		}
	}()
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", slog.String("error", err.Error()))
		}
	}()
	return done, nil
}
