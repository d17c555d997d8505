package mcpexpose_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Ledger is the fixture's dependency; constructions and cleanups are
// counted so tests can prove what never ran.
type Ledger struct{ entries []string }

type fixture struct {
	built, cleaned, calls atomic.Int32
	app                   *agnara.App
	snap                  *mcpexpose.Snapshot
}

type EchoIn struct {
	Text string `json:"text" jsonschema:"minLength=1"`
}

type EchoOut struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}

type SlowIn struct {
	Steps int `json:"steps" jsonschema:"minimum=1,maximum=10"`
}

// newFixture builds an application with:
//   - echo: public, returns a structured value;
//   - ledger.append: needs scope ledger:write and a per-invocation *Ledger;
//   - fail: returns a not_found failure;
//   - slow: reports progress and logs, and blocks until cancelled when
//     steps is 10;
//   - render: returns rich content.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	f, err := buildFixture()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func buildFixture() (*fixture, error) {
	f := &fixture{}
	deps := di.NewRegistry()
	di.ProvidePerInvocation(deps, func() (*Ledger, func()) {
		f.built.Add(1)
		return &Ledger{}, func() { f.cleaned.Add(1) }
	})
	f.app = agnara.New("fx", &agnara.Options{Version: "1.2.3", Dependencies: deps})
	app := f.app
	exp := mcpexpose.New(app)
	echo := app.Capability(func(ctx context.Context, in EchoIn) (EchoOut, error) {
		f.calls.Add(1)
		return EchoOut{Text: in.Text, Count: len(in.Text)}, nil
	}, &agnara.CapabilityOptions{Name: "echo", Title: "Echo", Description: "Echo the text back.", Annotations: agnara.ReadOnly | agnara.Idempotent})
	appendCap := app.Capability(func(ctx context.Context, in EchoIn, l *Ledger) (int, error) {
		f.calls.Add(1)
		l.entries = append(l.entries, in.Text)
		return len(l.entries), nil
	}, &agnara.CapabilityOptions{Name: "append", Description: "Append to the ledger.", Scopes: []string{"ledger:write"}})
	fail := app.Capability(func(ctx context.Context) error {
		return execution.Fail(execution.NotFound, "nothing here", map[string]any{"hint": "try echo"}).WithReason("fx_empty")
	}, &agnara.CapabilityOptions{Name: "fail", Description: "Always fails."})
	slow := app.Capability(func(ec *execution.Context, in SlowIn, l *Ledger) (string, error) {
		for i := 1; i <= in.Steps; i++ {
			ec.Progress(float64(i), float64(in.Steps), "step")
		}
		ec.Logger().Info("slow ran", "steps", in.Steps)
		if in.Steps == 10 {
			<-ec.Done()
			return "", ec.Err()
		}
		return "done", nil
	}, &agnara.CapabilityOptions{Name: "slow", Description: "Report progress; 10 steps blocks until cancelled."})
	render := app.Capability(func() ([]execution.Content, error) {
		return []execution.Content{execution.Text{Text: "hi"}, execution.Image{Data: []byte("png"), MIMEType: "image/png"}}, nil
	}, &agnara.CapabilityOptions{Name: "render", Description: "Rich content."})
	exp.Tool(echo, nil)
	exp.Tool(appendCap, &mcpexpose.ToolOptions{Name: "ledger.append"})
	exp.Tool(fail, nil)
	exp.Tool(slow, nil)
	exp.Tool(render, nil)
	snap, err := exp.Compile()
	if err != nil {
		return nil, err
	}
	f.snap = snap
	return f, nil
}

// tokens is a test token verifier: bearer tokens name fixed identities.
// It stands in for an authorization server, which the OIDC issue brings.
func tokens(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	switch token {
	case "writer":
		return &auth.TokenInfo{UserID: "wendy", Scopes: []string{"ledger:write"}, Expiration: time.Now().Add(time.Hour),
			Extra: map[string]any{mcpexpose.ExtraIssuer: "https://issuer.test", mcpexpose.ExtraClientID: "cli", "secret_claim": "x"}}, nil
	case "reader":
		return &auth.TokenInfo{UserID: "rita", Expiration: time.Now().Add(time.Hour)}, nil
	case "refused":
		return &auth.TokenInfo{UserID: "mallory", Expiration: time.Now().Add(time.Hour)}, nil
	}
	return nil, auth.ErrInvalidToken
}

// mapper refuses mallory and otherwise keeps the default mapping.
func mapper(ctx context.Context, id mcpexpose.Identity) (policy.Principal, error) {
	if id.Subject == "mallory" {
		return policy.Principal{}, errors.New("mallory is suspended")
	}
	return mcpexpose.SubjectPrincipal(ctx, id)
}

// serve starts the fixture's handler on a loopback test server.
func serve(t testing.TB, f *fixture, opts *mcpexpose.HandlerOptions) *httptest.Server {
	t.Helper()
	if opts == nil {
		opts = &mcpexpose.HandlerOptions{}
	}
	h, err := mcpexpose.NewHandler(f.snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens a Go SDK client session over HTTP. version "" lets the
// client negotiate (2026-07-28); "2025-11-25" pins the handshake era.
func connect(t testing.TB, url, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport}
	if token != "" {
		hc.Transport = bearer{token: token, base: http.DefaultTransport}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0.0.1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (version %q): %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(tools []*mcp.Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ",")
}

func textOf(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

func httptestServer(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// inMemory connects a Go SDK client to an invocable server for snap over
// in-memory transports.
func inMemory(t testing.TB, snap *mcpexpose.Snapshot) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := mustServer(mcpexpose.NewServer(snap, nil)).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callParams(name string, args any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: args}
}

// mustServer returns the server of a NewServer call that must succeed.
func mustServer(s *mcp.Server, err error) *mcp.Server {
	if err != nil {
		panic(err)
	}
	return s
}
