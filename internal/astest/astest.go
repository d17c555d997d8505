// Package astest starts a real OAuth 2.0 / OpenID Connect authorization
// server for tests — the program in peers/authserver, built on
// zitadel/oidc — and drives it: the authorization-code flow with PKCE
// through its login page, client credentials, refresh, revocation and
// RFC 8693 token exchange, over plain HTTP as a client would.
//
// The program is a nested module with its own dependencies, so this
// package imports none of them: [Start] builds it (once; later runs reuse
// the binary while its sources are unchanged), starts it on loopback with
// a configuration written from [Config], and stops it when the test ends.
// When its modules cannot be downloaded, the test ends through
// internal/peers, naming `make deps`.
package astest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Config is the authorization server's configuration: its clients, the
// users who can sign in, and token lifetimes.
type Config struct {
	Clients []Client `json:"clients"`
	Users   []User   `json:"users"`
	// AccessTokenLifetime is a duration such as "5m" (the default).
	AccessTokenLifetime string `json:"access_token_lifetime,omitempty"`
	// RefreshTokenLifetime is a duration such as "24h" (the default).
	RefreshTokenLifetime string `json:"refresh_token_lifetime,omitempty"`
}

// Client registers an OAuth client.
type Client struct {
	ID     string `json:"id"`
	Secret string `json:"secret,omitempty"`
	// RedirectURIs match exactly, except that a loopback one without a
	// port, such as http://127.0.0.1/cb, matches any port (RFC 8252 §7.3).
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	// GrantTypes: authorization_code, refresh_token, client_credentials,
	// urn:ietf:params:oauth:grant-type:token-exchange (see the Grant
	// constants); authorization_code and refresh_token when empty.
	GrantTypes []string `json:"grant_types,omitempty"`
	// Public clients have no secret and must use PKCE.
	Public bool `json:"public,omitempty"`
	// Audiences are the resources the client may ask tokens for, with
	// RFC 8707's resource or RFC 8693's audience.
	Audiences []string `json:"audiences,omitempty"`
	// Scopes the client may ask for (openid and offline_access always).
	Scopes []string `json:"scopes,omitempty"`
}

// User is someone who can sign in on the server's login page.
type User struct {
	Subject  string `json:"subject"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// The grant types a Client can be registered with.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// AccessTokenType is the RFC 8693 token type of an access token.
const AccessTokenType = "urn:ietf:params:oauth:token-type:access_token"

// Server is a running authorization server.
type Server struct {
	cfg    Config
	issuer string
	meta   metadata
	http   *http.Client
}

// metadata is the part of the discovery document the helpers use.
type metadata struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	RevocationEndpoint    string `json:"revocation_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
}

// Issuer returns the issuer URL, http://127.0.0.1:PORT.
func (s *Server) Issuer() string { return s.issuer }

// AuthorizeURL returns the authorization endpoint.
func (s *Server) AuthorizeURL() string { return s.meta.AuthorizationEndpoint }

// TokenURL returns the token endpoint.
func (s *Server) TokenURL() string { return s.meta.TokenEndpoint }

// RevokeURL returns the RFC 7009 revocation endpoint.
func (s *Server) RevokeURL() string { return s.meta.RevocationEndpoint }

// JWKSURL returns the URL of the server's signing keys.
func (s *Server) JWKSURL() string { return s.meta.JWKSURI }

// startTimeout bounds the wait for the server's first line of output.
const startTimeout = 60 * time.Second

// Start builds (see the package doc) and starts an authorization server
// configured with cfg, and returns it once its discovery document answers.
// It is stopped, by closing its standard input, when the test ends.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	bin := binary(t)
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatalf("astest: %v", err)
	}
	path := filepath.Join(t.TempDir(), "authserver.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("astest: %v", err)
	}

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-config", path)
	stderr := new(lockedBuffer)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("astest: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("astest: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("astest: starting %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { stop(t, stdin, cmd, exited, stderr) })

	var line string
	select {
	case line = <-lines:
	case <-time.After(startTimeout):
		t.Fatalf("astest: the authorization server printed no issuer within %v; its standard error:\n%s", startTimeout, stderr)
	}
	issuer := strings.TrimSpace(line)
	if !strings.HasPrefix(issuer, "http://127.0.0.1:") {
		t.Fatalf("astest: the authorization server printed %q, not its issuer; its standard error:\n%s", line, stderr)
	}
	s := &Server{cfg: cfg, issuer: issuer, http: &http.Client{Timeout: 30 * time.Second}}
	if err := s.discover(); err != nil {
		t.Fatalf("astest: %v; the server's standard error:\n%s", err, stderr)
	}
	return s
}

// stop closes the server's standard input, which stops it, and waits for
// it; one that does not exit within 10 seconds is killed and the test
// fails. When the test failed, the server's log is shown.
func stop(t testing.TB, stdin io.Closer, cmd *exec.Cmd, exited <-chan error, stderr *lockedBuffer) {
	_ = stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("astest: the authorization server exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("astest: the authorization server did not exit when its standard input closed; killed")
	}
	if t.Failed() {
		t.Logf("astest: the authorization server's log:\n%s", stderr)
	}
}

// discover reads the discovery document at both of its well-known paths.
func (s *Server) discover() error {
	for _, p := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
		var m metadata
		if err := s.getJSON(s.issuer+p, &m); err != nil {
			return err
		}
		if m.Issuer != s.issuer || m.TokenEndpoint == "" || m.AuthorizationEndpoint == "" {
			return fmt.Errorf("%s: unexpected metadata %+v", p, m)
		}
		s.meta = m
	}
	return nil
}

// getJSON decodes the JSON document at url into v.
func (s *Server) getJSON(url string, v any) error {
	resp, err := s.http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

// lockedBuffer is a bytes.Buffer safe for the process's writes and the
// test's reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// errNoSource reports that peers/authserver could not be found.
var errNoSource = errors.New("astest: peers/authserver not found from this source file nor above the working directory")
