package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"golang.org/x/oauth2"
)

// TestConsentRefreshRefusedForgetsTheGrant: docs/gateway.md promises that
// a grant whose refresh the upstream's authorization server refuses is
// forgotten (the person is asked again), and that one it cannot refresh
// for its own trouble (a 5xx) is kept and the call fails unavailable. The
// token endpoint here is a fault injector on loopback (a real server's
// refusal of a sealed refresh token cannot be provoked from outside:
// the test cannot read the token to revoke it).
func TestConsentRefreshRefusedForgetsTheGrant(t *testing.T) {
	status := http.StatusBadRequest
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]string{"issuer": "http://" + r.Host, "authorization_endpoint": "http://" + r.Host + "/authorize", "token_endpoint": "http://" + r.Host + "/token"})
		case "/token":
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(status)
			w.Write([]byte(`{"error":"invalid_grant"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(as.Close)
	store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg := &Config{Name: "gateway", Auth: Auth{Issuer: as.URL}, Connections: &Connections{URL: "http://127.0.0.1:1", SignIn: ClientRegistration{ClientID: "web"}}}
	conn, err := newConnector(cfg, make([]byte, 32), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	conn.store = store
	h := &HTTPUpstream{URL: "http://127.0.0.1:2/mcp", Consent: &Consent{AuthorizationServer: as.URL, ClientID: "gw"}}
	cc := newConsentClient(conn, "orders", h, "", as.Client(), slog.New(slog.DiscardHandler))
	alice := policy.NewPrincipal("alice", nil).WithIssuer("https://idp.example").WithAttributes(map[string]string{clientAttribute: "agent"})
	ctx := context.Background()
	expired := &oauth2.Token{AccessToken: "old", RefreshToken: "refresh", Expiry: time.Now().Add(-time.Minute)}

	// The server's own trouble: the grant is kept, the call unavailable.
	status = http.StatusBadGateway
	if err := cc.save(ctx, alice, "agent", expired, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.token(ctx, alice); execution.ReasonOf(err) != mcpimport.ReasonCredentialUnavailable {
		t.Errorf("a refresh the server failed: %v, want %s", err, mcpimport.ReasonCredentialUnavailable)
	}
	if _, err := store.LoadConnection(ctx, alice, "orders", "agent"); err != nil {
		t.Errorf("the grant after the server failed: %v, want kept", err)
	}

	// Refused: the grant is forgotten, and the person would be asked again.
	status = http.StatusBadRequest
	if _, err := cc.token(ctx, alice); !errors.Is(err, errNoGrant) {
		t.Errorf("a refresh the server refused: %v, want no grant", err)
	}
	if _, err := store.LoadConnection(ctx, alice, "orders", "agent"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("the grant after the refusal: %v, want forgotten", err)
	}
}
