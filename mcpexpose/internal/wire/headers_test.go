package wire

import (
	"net"
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

// TestLocalLoopback: the loopback test of a listener's address reads as
// the SDK's test of its string.
func TestLocalLoopback(t *testing.T) {
	for _, a := range []net.Addr{
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80},
		&net.TCPAddr{IP: net.IP{127, 1, 2, 3}, Port: 80},
		&net.TCPAddr{IP: net.IPv6loopback, Port: 80},
		&net.TCPAddr{IP: net.IPv6loopback, Port: 80, Zone: "lo"},
		&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 80, Zone: "eth0"},
		&net.TCPAddr{IP: net.ParseIP("::"), Port: 80},
		&net.TCPAddr{Port: 80},
		&net.TCPAddr{IP: net.IP{1, 2, 3}, Port: 80},
		&net.UnixAddr{Name: "/tmp/s", Net: "unix"},
		&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80},
	} {
		if got, want := localLoopback(a), IsLoopback(a.String()); got != want {
			t.Errorf("localLoopback(%v) = %v, IsLoopback(%q) = %v", a, got, a.String(), want)
		}
	}
}
