package mcpimport_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEveryDiscoveryErrorAnswersItsReason: each discovery reason, from a
// real connection or discovery that fails with it, is read by
// execution.ReasonOf as returned and wrapped, while errors.As still finds
// the *mcpimport.Error; a discovery error is no canonical failure.
func TestEveryDiscoveryErrorAnswersItsReason(t *testing.T) {
	ctx := context.Background()
	bind := func(remote string) map[string]mcpimport.Binding {
		return map[string]mcpimport.Binding{remote: {Name: "t", Title: "T", NoScopeValidator: true}}
	}
	discover := func(t *testing.T, d *docs, bindings map[string]mcpimport.Binding, limits mcpimport.Limits) error {
		cs, mon := connect(t, d.server, "2025-11-25")
		_, err := mcpimport.Discover(ctx, newSession(t, cs, mon, "docs"), bindings, &mcpimport.Options{Limits: limits})
		return err
	}
	for _, tc := range []struct {
		want execution.Reason
		err  func(t *testing.T) error
	}{
		{mcpimport.BindingInvalid, func(t *testing.T) error { return discover(t, newDocs(nil), nil, mcpimport.Limits{}) }},
		{mcpimport.ConnectFailed, func(t *testing.T) error {
			srv := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(srv.Close)
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := mcpimport.Connect(cctx, "docs", &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
			return err
		}},
		{mcpimport.ProtocolUnsupported, func(*testing.T) error { return mcpimport.NewMonitor().AcceptProtocolVersion("2024-10-07") }},
		{mcpimport.DiscoveryFailed, func(t *testing.T) error {
			cs, mon := connect(t, newDocs(nil).server, "2025-11-25")
			cs.Close() // the monitor stays open: tools/list is what fails
			_, err := mcpimport.Discover(ctx, newSession(t, cs, mon, "docs"), readBindings(), nil)
			return err
		}},
		{mcpimport.CatalogTooLarge, func(t *testing.T) error { return discover(t, newDocs(nil), readBindings(), mcpimport.Limits{Tools: 1}) }},
		{mcpimport.ToolMissing, func(t *testing.T) error { return discover(t, newDocs(nil), bind("nosuch"), mcpimport.Limits{}) }},
		{mcpimport.ToolDuplicate, func(t *testing.T) error { return discover(t, listingSearchTwice(), readBindings(), mcpimport.Limits{}) }},
		{mcpimport.SchemaUnsupported, func(t *testing.T) error { return discover(t, newDocs(nil), bind("delete"), mcpimport.Limits{}) }},
		{mcpimport.DescriptionTooLarge, func(t *testing.T) error {
			return discover(t, newDocs(nil), bind("search"), mcpimport.Limits{DescriptionBytes: 4})
		}},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			err := tc.err(t)
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			for _, err := range []error{err, fmt.Errorf("host: %w", fmt.Errorf("step: %w", err))} {
				if got := execution.ReasonOf(err); got != tc.want {
					t.Errorf("ReasonOf(%v) = %q, want %q", err, got, tc.want)
				}
				var e *mcpimport.Error
				if !errors.As(err, &e) || e.Reason != tc.want {
					t.Errorf("errors.As(%v) = %v; want an *mcpimport.Error with reason %s", err, e, tc.want)
				}
				if f := (*execution.Failure)(nil); errors.As(err, &f) {
					t.Errorf("a discovery error is the canonical failure %v", f)
				}
			}
		})
	}
}

// TestConnectFailedKeepsItsCause: a failed handshake's *Error says so in
// the package's own words; the transport's error, which may quote the
// remote server, is its cause, for the host's logs.
func TestConnectFailedKeepsItsCause(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "remote secret", http.StatusForbidden)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := mcpimport.Connect(ctx, "docs", &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	cause := errors.Unwrap(err)
	if execution.ReasonOf(err) != mcpimport.ConnectFailed || cause == nil {
		t.Fatalf("err = %v (cause %v), want %s with a cause", err, cause, mcpimport.ConnectFailed)
	}
	if got, want := err.Error(), "mcpimport: mcp_connect_failed: the handshake with the remote server failed"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !strings.Contains(cause.Error(), "Forbidden") {
		t.Errorf("cause %q does not say what the transport met", cause)
	}
}
