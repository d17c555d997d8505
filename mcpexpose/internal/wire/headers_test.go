package wire

import (
	"net/http"
	"net/textproto"
	"testing"
)

// TestHeaderKeysCanonical: the keys the edge reads straight from the
// header map are the ones net/http stores, so that reading them so is
// Header.Get, Header.Values.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, key := range []string{HeaderVersion, HeaderMethod, HeaderName, HeaderSession, HeaderOrigin, HeaderAuthorize,
		"Last-Event-Id", "Content-Type", "Accept"} {
		if c := textproto.CanonicalMIMEHeaderKey(key); c != key {
			t.Errorf("%q is read from the map, but net/http stores it as %q", key, c)
		}
	}
	if c := textproto.CanonicalMIMEHeaderKey("Last-Event-ID"); c != "Last-Event-Id" {
		t.Errorf("Last-Event-ID is stored as %q, not as postHeaders reads it", c)
	}
	h := http.Header{}
	h.Set("mcp-method", "tools/call")
	h.Add("MCP-METHOD", "tools/list")
	if got := Get(h, HeaderMethod); got != h.Get("Mcp-Method") || got != "tools/call" {
		t.Errorf("Get = %q, Header.Get = %q", got, h.Get("Mcp-Method"))
	}
	if got := Get(h, HeaderName); got != "" {
		t.Errorf("Get of an absent header = %q", got)
	}
}
