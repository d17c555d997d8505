// Package loadtest runs the load generator against a handler in tests,
// and serves the upstream a gateway or a proxy stands in front of.
package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/bench/load"
	"github.com/agnara-go/agnara/mcpexpose"
)

// Run serves h on a loopback test server and drives c workers at it for d
// (after a short warm-up) in both eras, failing t on any error or when no
// call completed.
func Run(t *testing.T, h http.Handler, c int, d time.Duration) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(serve.Path, h)
	srv := httptest.NewServer(mux) // 127.0.0.1
	defer srv.Close()
	for _, era := range []string{load.Modern, load.Legacy} {
		t.Run(era, func(t *testing.T) {
			var started, ended bool
			res, err := load.Run(context.Background(), load.Config{
				URL:         srv.URL + serve.Path,
				Era:         era,
				Concurrency: c,
				Duration:    d,
				Warmup:      100 * time.Millisecond,
				OnStart:     func() { started = true },
				OnEnd:       func() { ended = true },
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res)
			if res.Errors != 0 {
				t.Errorf("%d errors, e.g. %q", res.Errors, res.ErrorSamples)
			}
			if res.Calls == 0 || res.ReqPerSec <= 0 || res.P50 <= 0 || res.P99 < res.P50 {
				t.Errorf("implausible result %+v", res)
			}
			if !started || !ended {
				t.Errorf("OnStart called: %v, OnEnd called: %v", started, ended)
			}
		})
	}
}

type echoIn struct {
	Message string `json:"message"`
}

type echoOut struct {
	Message string `json:"message"`
}

// Upstream is the agnara benchmark server's echo (servers/agnara), for a
// test to put a gateway or a proxy in front of.
func Upstream(t testing.TB) http.Handler {
	t.Helper()
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(_ context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil },
		&agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
