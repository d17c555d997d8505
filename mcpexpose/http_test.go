package mcpexpose_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTaskMcpNameMustBeTheTaskID sends tasks/get, tasks/update and
// tasks/cancel of a live task with an Mcp-Name header that does not name
// the task the body names (SEP-2663 routes tasks by that header): each is
// refused with 400 and -32020 before it reaches the task, and the task is
// still working afterwards. The same requests with the header right are
// answered.
func TestTaskMcpNameMustBeTheTaskID(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{})
	id := tasktest.StartTask(t, url, "alice", "work", map[string]any{"label": "m"})
	send := func(method, header string, set bool) (*http.Response, map[string]any) {
		t.Helper()
		params := map[string]any{"taskId": id, "_meta": mcptest.Meta(map[string]any{"extensions": map[string]any{mcpversion.TasksExtension: map[string]any{}}})}
		if method == "tasks/update" {
			params["inputResponses"] = map[string]any{}
		}
		req := mcptest.Request(t, url, method, params, "alice")
		if set {
			req.Header.Set("Mcp-Name", header)
		}
		resp, _, msg := mcptest.Do(t, req)
		return resp, msg
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		for _, tc := range []struct {
			name   string
			header string
			set    bool
		}{
			{"absent", "", false},
			{"empty", "", true},
			{"another id", "no-such-task-id-at-all-xx", true},
			{"a prefix", id[:len(id)-1], true},
			{"other case", strings.ToUpper(id), true},
		} {
			t.Run(method+"/"+tc.name, func(t *testing.T) {
				if tc.name == "other case" && strings.ToUpper(id) == id {
					t.Fatalf("task id %q has no letters to re-case", id)
				}
				resp, msg := send(method, tc.header, tc.set)
				e, _ := msg["error"].(map[string]any)
				if resp.StatusCode != http.StatusBadRequest || e == nil || e["code"] != float64(mcp.CodeHeaderMismatch) {
					t.Fatalf("HTTP %d, %v: want 400 with JSON-RPC %d", resp.StatusCode, msg, mcp.CodeHeaderMismatch)
				}
			})
		}
	}
	if res, e := tasktest.GetTask(t, url, "alice", id); e != nil || res["status"] != "working" {
		t.Fatalf("after the refused requests the task is %v %v, want working", res, e)
	}
	if resp, msg := send("tasks/get", id, true); resp.StatusCode != http.StatusOK || msg["result"] == nil {
		t.Fatalf("tasks/get with Mcp-Name the task id: HTTP %d %v", resp.StatusCode, msg)
	}
	if resp, msg := send("tasks/cancel", id, true); resp.StatusCode != http.StatusOK || msg["result"] == nil {
		t.Fatalf("tasks/cancel with Mcp-Name the task id: HTTP %d %v", resp.StatusCode, msg)
	}
	tasktest.WaitStatus(t, url, "alice", id, "cancelled")
}

// TestOriginIsSchemeHostAndPort sends a tools/call with an Origin header
// to a handler on a plain and on a TLS loopback listener: only an origin
// of the same scheme, host and port as the request (a default port
// written or not, the host in any case), an AllowedOrigins entry compared
// the same way, or the origin of Resource.URL is let through; everything
// else, including what is not an origin at all, is 403 and runs nothing.
func TestOriginIsSchemeHostAndPort(t *testing.T) {
	f := newFixture(t)
	opts := &mcpexpose.HandlerOptions{
		AllowedOrigins: []string{"https://app.example.com", "http://[::1]:8080", "HTTP://Tools.Example.com:8443", "chrome-extension://abcdef"},
		Resource:       &mcpexpose.Resource{URL: "https://api.example.com/mcp", AuthorizationServers: []string{"https://issuer.test"}},
	}
	h, err := mcpexpose.NewHandler(f.snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	plain, tls := httptest.NewServer(h), httptest.NewTLSServer(h)
	defer plain.Close()
	defer tls.Close()
	port := func(srv *httptest.Server) string { u, _ := url.Parse(srv.URL); return u.Port() }
	p, tp := port(plain), port(tls)
	other := strconv.Itoa(map[bool]int{true: 1, false: 2}[p == "1"] + 40000)
	cases := []struct {
		name   string
		tls    bool   // sent to the TLS listener
		host   string // the request's Host, when not the listener's
		origin string
		ok     bool
	}{
		{"same origin", false, "", "http://127.0.0.1:" + p, true},
		{"same origin over TLS", true, "", "https://127.0.0.1:" + tp, true},
		{"origin host in upper case", false, "localhost:" + p, "http://LOCALHOST:" + p, true},
		{"IPv6 host and origin", false, "[::1]:" + p, "http://[::1]:" + p, true},
		{"default port written in the origin", false, "localhost", "http://localhost:80", true},
		{"default port written in the Host", false, "localhost:80", "http://localhost", true},
		{"ftp scheme", false, "", "ftp://127.0.0.1:" + p, false},
		{"another port", false, "", "http://127.0.0.1:" + other, false},
		{"https on a plain listener", false, "", "https://127.0.0.1:" + p, false},
		{"http on a TLS listener", true, "", "http://127.0.0.1:" + tp, false},
		{"no port for a listener on another", false, "", "http://127.0.0.1", false},
		{"IPv6 origin, IPv4 host", false, "", "http://[::1]:" + p, false},
		{"null", false, "", "null", false},
		{"trailing slash", false, "", "http://127.0.0.1:" + p + "/", false},
		{"path", false, "", "http://127.0.0.1:" + p + "/mcp", false},
		{"userinfo", false, "", "http://user@127.0.0.1:" + p, false},
		{"query", false, "", "http://127.0.0.1:" + p + "?x", false},
		{"fragment", false, "", "http://127.0.0.1:" + p + "#x", false},
		{"empty port", false, "", "http://127.0.0.1:", false},
		{"port out of range", false, "", "http://127.0.0.1:70000", false},
		{"host only", false, "", "127.0.0.1:" + p, false},
		{"a host suffix", false, "", "http://127.0.0.1.evil.example:" + p, false},
		{"allowed", false, "", "https://app.example.com", true},
		{"allowed, default port written", false, "", "https://app.example.com:443", true},
		{"allowed, upper case", false, "", "HTTPS://APP.EXAMPLE.COM", true},
		{"allowed host, other scheme", false, "", "http://app.example.com", false},
		{"allowed host, other port", false, "", "https://app.example.com:8443", false},
		{"allowed host, ftp", false, "", "ftp://app.example.com", false},
		{"allowed, path", false, "", "https://app.example.com/", false},
		{"allowed IPv6", false, "", "http://[::1]:8080", true},
		{"allowed IPv6, other port", false, "", "http://[::1]:8081", false},
		{"allowed, entry in upper case", false, "", "http://tools.example.com:8443", true},
		{"allowed scheme without a default port", false, "", "chrome-extension://abcdef", true},
		{"the resource's origin", false, "", "https://api.example.com", true},
		{"the resource's host over http", false, "", "http://api.example.com", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := plain
			if tc.tls {
				srv = tls
			}
			params := map[string]any{"name": "fx.echo", "arguments": map[string]any{"text": "x"}, "_meta": mcptest.Meta(nil)}
			req := mcptest.Request(t, srv.URL, "tools/call", params, "")
			req.Header.Set("Origin", tc.origin)
			if tc.host != "" {
				req.Host = tc.host
			}
			before := f.calls.Load()
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ran := f.calls.Load() != before
			if tc.ok && (resp.StatusCode != http.StatusOK || !ran) {
				t.Errorf("Origin %q, Host %q: HTTP %d (handler ran: %v), want it let through", tc.origin, req.Host, resp.StatusCode, ran)
			}
			if !tc.ok && (resp.StatusCode != http.StatusForbidden || ran) {
				t.Errorf("Origin %q, Host %q: HTTP %d (handler ran: %v), want 403", tc.origin, req.Host, resp.StatusCode, ran)
			}
		})
	}
	for _, bad := range []string{"app.example.com", "https://app.example.com/", "https://app.example.com/path", "https://user@app.example.com", "null", "https://app.example.com:0", "https://app.example.com?x"} {
		if _, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{AllowedOrigins: []string{bad}}); err == nil {
			t.Errorf("AllowedOrigins %q was accepted", bad)
		}
	}
}
