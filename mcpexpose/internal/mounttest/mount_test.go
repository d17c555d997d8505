// Package mounttest_test serves mcpexpose's handler under other routers
// than net/http's. It is a package of tests only, apart from mcpexpose's
// own tests, so that a module importing mcpexpose does not carry those
// routers in its go.sum (ADR 71).
package mounttest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type EchoIn struct {
	Text string `json:"text" jsonschema:"minLength=1"`
}

// TestMountsOnChiAndNetHTTP serves one handler at /api/v1/mcp through
// chi's Mount and at /tools/mcp/ through http.StripPrefix, and calls a
// tool through each in the 2026-07-28 and 2025-11-25 revisions
// (docs/operating.md, "Mounting").
func TestMountsOnChiAndNetHTTP(t *testing.T) {
	app := agnara.New("fx", nil)
	echo := app.Capability(func(_ context.Context, in EchoIn) (string, error) { return in.Text, nil },
		&agnara.CapabilityOptions{Name: "echo", Description: "Echo the text back."})
	exp := mcpexpose.New(app)
	exp.Tool(echo, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.Mount("/api/v1/mcp", h)
	mux := http.NewServeMux()
	mux.Handle("/tools/mcp/", http.StripPrefix("/tools", h))
	for _, tc := range []struct {
		name    string
		handler http.Handler
		path    string
	}{{"chi", r, "/api/v1/mcp"}, {"net/http", mux, "/tools/mcp/"}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			t.Cleanup(srv.Close)
			for _, version := range []string{"", "2025-11-25"} { // "": the client's latest, 2026-07-28
				cs := connect(t, srv.URL+tc.path, version)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx.echo", Arguments: map[string]any{"text": "chi"}})
				if err != nil || res.IsError {
					t.Fatalf("%q: %+v %v", version, res, err)
				}
			}
		})
	}
}

// connect connects a Go SDK client to url in the protocol version.
func connect(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0.0.1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (version %q): %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
