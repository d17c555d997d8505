package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	fixedToken = "fixed-test-token"
	// forbiddenTool is the marker: a tools/call naming it is refused with 403.
	forbiddenTool = "admin.purge"
	// forbiddenChallenge is the WWW-Authenticate header of that 403.
	forbiddenChallenge = `Bearer error="insufficient_scope", scope="users:admin", error_description="users:admin is required"`
	// unauthorizedChallenge is the WWW-Authenticate header of every 401.
	unauthorizedChallenge = `Bearer error="invalid_token", error_description="the token is not valid", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`
)

// tokenRequest is what the test issuer saw.
type tokenRequest struct {
	basic bool
	form  url.Values
}

// testIssuer serves discovery and a token endpoint that hands out token to
// client demo/demo-secret, authenticated either way.
type testIssuer struct {
	url   string
	token string

	mu       sync.Mutex
	requests []tokenRequest
}

func startTestIssuer(t *testing.T, token string) *testIssuer {
	t.Helper()
	ti := &testIssuer{token: token}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                ti.url,
			"token_endpoint":                        ti.url + "/token",
			"jwks_uri":                              ti.url + "/jwks",
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
			"scopes_supported":                      []string{"users:read", "users:admin"},
		})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Errorf("token request: %v", err)
		}
		id, secret, basic := r.BasicAuth()
		if basic {
			id, _ = url.QueryUnescape(id)
			secret, _ = url.QueryUnescape(secret)
		} else {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		ti.mu.Lock()
		ti.requests = append(ti.requests, tokenRequest{basic: basic, form: r.PostForm})
		ti.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if id != "demo" || secret != "demo-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client","error_description":"unknown client or wrong secret"}`)
			return
		}
		if strings.Contains(r.PostForm.Get("scope"), "root") {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_scope","error_description":"scope \"root\" is not allowed"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"access_token": ti.token,
			"token_type":   "Bearer",
			"expires_in":   900,
			"scope":        r.PostForm.Get("scope"),
		})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ti.url = srv.URL
	return ti
}

func (ti *testIssuer) seen() []tokenRequest {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return append([]tokenRequest(nil), ti.requests...)
}

type echoIn struct {
	Text string `json:"text"`
}

// startMCP serves an SDK MCP server with tools echo, fail and admin.purge
// behind a check that the Authorization header is "Bearer "+fixedToken
// (otherwise 401) and that the body does not name admin.purge (otherwise
// 403). Both refusals carry a WWW-Authenticate challenge.
func startMCP(t *testing.T) string { return startMCPWith(t, nil) }

// startMCPWith is startMCP with the SDK handler's options.
func startMCPWith(t *testing.T, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0.0.1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "fail", Description: "Always fail."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `{"code":"not_found"}`}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: forbiddenTool, Description: "Never reached."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			t.Error("the forbidden tool ran")
			return &mcp.CallToolResult{}, nil, nil
		})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)

	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+fixedToken {
			w.Header().Set("WWW-Authenticate", unauthorizedChallenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(`"`+forbiddenTool+`"`)) && bytes.Contains(body, []byte("tools/call")) {
			w.Header().Set("WWW-Authenticate", forbiddenChallenge)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(w, r)
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func testConfig(issuer, mcpURL string) config {
	return config{
		Issuer:       issuer,
		MCP:          mcpURL,
		ClientID:     "demo",
		ClientSecret: "demo-secret",
		Scope:        "users:read",
		Tool:         "echo",
		Args:         `{"text":"hello"}`,
	}
}

func runWithTimeout(t *testing.T, cfg config) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, cfg, &out)
	t.Logf("output:\n%s", out.String())
	return out.String(), err
}

func TestRunCallsTool(t *testing.T) {
	ti := startTestIssuer(t, fixedToken)
	mcpURL := startMCP(t)

	out, err := runWithTimeout(t, testConfig(ti.url, mcpURL))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, want := range []string{
		`token:    scope "users:read" for ` + mcpURL,
		"protocol: 2025-11-25\n", // a stateful SDK handler: the handshake era
		"tools:    " + forbiddenTool + " echo fail\n",
		"result:   echo\necho: hello\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	reqs := ti.seen()
	if len(reqs) != 1 {
		t.Fatalf("%d token requests, want 1 (the token is reused)", len(reqs))
	}
	got := reqs[0]
	if !got.basic {
		t.Error("client_secret_basic is advertised but the client authenticated in the body")
	}
	for k, want := range map[string]string{
		"grant_type": "client_credentials",
		"scope":      "users:read",
		"resource":   mcpURL,
	} {
		if v := got.form.Get(k); v != want {
			t.Errorf("token request %s = %q, want %q", k, v, want)
		}
	}
}

// TestRunCallsToolStateless is TestRunCallsTool against a stateless SDK
// handler, which speaks the 2026-07-28 protocol (server/discover, no
// session).
func TestRunCallsToolStateless(t *testing.T) {
	ti := startTestIssuer(t, fixedToken)
	mcpURL := startMCPWith(t, &mcp.StreamableHTTPOptions{Stateless: true})
	out, err := runWithTimeout(t, testConfig(ti.url, mcpURL))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, want := range []string{
		"protocol: 2026-07-28\n",
		"result:   echo\necho: hello\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestRunPrintsForbiddenChallenge(t *testing.T) {
	ti := startTestIssuer(t, fixedToken)
	cfg := testConfig(ti.url, startMCP(t))
	cfg.Tool, cfg.Args = forbiddenTool, "{}"

	out, err := runWithTimeout(t, cfg)
	var re *refusedError
	if !errors.As(err, &re) {
		t.Fatalf("run: %v, want a *refusedError", err)
	}
	if re.Step != "tools/call" || re.StatusCode != http.StatusForbidden {
		t.Errorf("refused %s with %d, want tools/call with 403", re.Step, re.StatusCode)
	}
	for _, want := range []string{
		"tools:    " + forbiddenTool + " echo fail\n", // the session worked until the call
		"refused:  tools/call: HTTP 403 Forbidden\n",
		"WWW-Authenticate: " + forbiddenChallenge + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(err.Error(), `-scope "users:read users:admin"`) {
		t.Errorf("error %q does not say to ask for users:admin as well", err)
	}
}

func TestRunPrintsUnauthorizedChallenge(t *testing.T) {
	ti := startTestIssuer(t, "a-token-the-server-does-not-accept")
	out, err := runWithTimeout(t, testConfig(ti.url, startMCP(t)))
	var re *refusedError
	if !errors.As(err, &re) {
		t.Fatalf("run: %v, want a *refusedError", err)
	}
	if re.Step != "connect" || re.StatusCode != http.StatusUnauthorized {
		t.Errorf("refused %s with %d, want connect with 401", re.Step, re.StatusCode)
	}
	for _, want := range []string{
		"refused:  connect: HTTP 401 Unauthorized\n",
		"WWW-Authenticate: " + unauthorizedChallenge + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "protocol:") {
		t.Error("printed a protocol version for a refused connection")
	}
	if !strings.Contains(err.Error(), "-issuer") {
		t.Errorf("error %q does not point at -issuer", err)
	}
}

func TestRunToolError(t *testing.T) {
	ti := startTestIssuer(t, fixedToken)
	cfg := testConfig(ti.url, startMCP(t))
	cfg.Tool, cfg.Args = "fail", "{}"
	out, err := runWithTimeout(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "fail reported an error") {
		t.Fatalf("run: %v, want the tool's error", err)
	}
	if !strings.Contains(out, "error:    fail\n{\"code\":\"not_found\"}\n") {
		t.Error("the error result is not printed")
	}
}

func TestRunUnknownTool(t *testing.T) {
	ti := startTestIssuer(t, fixedToken)
	cfg := testConfig(ti.url, startMCP(t))
	cfg.Tool = "nope"
	_, err := runWithTimeout(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "check -tool") {
		t.Fatalf("run: %v, want an error pointing at -tool", err)
	}
}

func TestRunTokenErrors(t *testing.T) {
	ti := startTestIssuer(t, fixedToken)
	mcpURL := startMCP(t)
	for _, tc := range []struct {
		name   string
		change func(*config)
		want   []string
	}{
		{"wrong secret", func(c *config) { c.ClientSecret = "wrong" }, []string{"invalid_client", "-client-secret"}},
		{"bad scope", func(c *config) { c.Scope = "root" }, []string{"invalid_scope", "-scope", "users:read users:admin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(ti.url, mcpURL)
			tc.change(&cfg)
			out, err := runWithTimeout(t, cfg)
			if err == nil {
				t.Fatal("run succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if out != "" {
				t.Errorf("printed %q before failing to get a token", out)
			}
		})
	}
}

func TestRunConfigErrors(t *testing.T) {
	ti := startTestIssuer(t, fixedToken)
	for _, tc := range []struct {
		name   string
		change func(*config)
		want   string
	}{
		{"args not JSON", func(c *config) { c.Args = "{id:1}" }, "-args"},
		{"args not an object", func(c *config) { c.Args = `["x"]` }, "-args"},
		{"relative mcp", func(c *config) { c.MCP = "/mcp" }, "-mcp"},
		{"bad issuer", func(c *config) { c.Issuer = "127.0.0.1:9000" }, "-issuer"},
		{"issuer mismatch", func(c *config) { c.Issuer = strings.Replace(ti.url, "127.0.0.1", "localhost", 1) }, "pass exactly that as -issuer"},
		{"no issuer running", func(c *config) { c.Issuer = "http://127.0.0.1:1" }, "devissuer"},
		{"no tool", func(c *config) { c.Tool = "" }, "-tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(ti.url, "http://127.0.0.1:8080/mcp")
			tc.change(&cfg)
			_, err := runWithTimeout(t, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestParseArgsKeepsNumbers(t *testing.T) {
	m, err := parseArgs(`{"id":"1","limit":12345678901234567890}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	if got, want := string(b), `{"id":"1","limit":12345678901234567890}`; got != want {
		t.Errorf("re-encoded %s, want %s", got, want)
	}
	if _, err := parseArgs(`{} {}`); err == nil {
		t.Error("two objects accepted")
	}
}

func TestRefusalHints(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  refusedError
		want string
	}{
		{"insufficient scope", refusedError{Step: "tools/call", Asked: "users:read", refusal: refusal{StatusCode: 403, Status: "403 Forbidden",
			WWWAuthenticate: []string{`Bearer error="insufficient_scope", scope="users:write users:read"`}}}, `-scope "users:read users:write"`},
		{"invalid token", refusedError{Step: "connect", refusal: refusal{StatusCode: 401, Status: "401 Unauthorized",
			WWWAuthenticate: []string{`Bearer error="invalid_token"`}}}, "-issuer"},
		{"no token", refusedError{Step: "connect", refusal: refusal{StatusCode: 401, Status: "401 Unauthorized",
			WWWAuthenticate: []string{`Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"`}}}, "-issuer and -mcp"},
		{"403 without a challenge", refusedError{Step: "connect", refusal: refusal{StatusCode: 403, Status: "403 Forbidden"}}, "Host or Origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); !strings.Contains(got, tc.want) || !strings.Contains(got, tc.err.Status) {
				t.Errorf("%q lacks %q or the status", got, tc.want)
			}
		})
	}
}
