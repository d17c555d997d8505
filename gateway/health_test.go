package gateway_test

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
)

// readyz returns the status and body of the gateway's /readyz.
func readyz(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// deadURL is an MCP URL on a loopback port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp"
}

// TestReadiness: /readyz names every upstream and the approval store. An
// upstream down leaves the gateway ready while another is up (it serves
// that one's tools); none up, or the approval store not answering, is 503
// naming it.
func TestReadiness(t *testing.T) {
	self := selfUpstream(t, "self", readTool("pid"))
	gone := gateway.Upstream{Name: "gone", Prefix: "gone_", Optional: true, HTTP: &gateway.HTTPUpstream{URL: deadURL(t)}, Tools: []gateway.Tool{readTool("x")}}
	lock := filepath.Join(t.TempDir(), "gateway.lock")
	accept(t, gateway.Config{Lock: lock, Upstreams: []gateway.Upstream{self}}, nil)

	store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	_, url, _ := started(t, gateway.Config{Lock: lock, Upstreams: []gateway.Upstream{self, gone}}, &gateway.Options{Approvals: store})
	if code, body := readyz(t, url); code != http.StatusOK || body != "ready\napprovals: ok\nupstream self: ok\nupstream gone: unreachable\nupstreams: ok\n" {
		t.Errorf("one upstream down: /readyz = %d %q, want 200 naming it", code, body)
	}
	store.Close()
	if code, body := readyz(t, url); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "not ready\napprovals: unreachable\n") {
		t.Errorf("approval store closed: /readyz = %d %q, want 503 naming it", code, body)
	}

	_, alone, _ := started(t, gateway.Config{Lock: lock, Upstreams: []gateway.Upstream{gone}}, nil)
	if code, body := readyz(t, alone); code != http.StatusServiceUnavailable || body != "not ready\nupstream gone: unreachable\nupstreams: unreachable\n" {
		t.Errorf("no upstream up: /readyz = %d %q, want 503", code, body)
	}
}
