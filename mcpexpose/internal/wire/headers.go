package wire

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/agnara-go/agnara/internal/mcpversion"
)

// ModernHeaders reports whether r's headers pass every check the SDK's
// streamable handler makes before it reads the body, as the SDK makes
// them: no Last-Event-ID, a JSON body, and an Accept of both JSON and
// event streams. (The Host of a loopback listener, the SDK's first check,
// ServeHTTP has made before anything: see Rebound.)
func ModernHeaders(r *http.Request) bool {
	return Get(r.Header, HeaderVersion) == mcpversion.Modern && postHeaders(r)
}

// LegacyHeaders reports whether a handshake-era POST's headers pass the
// checks the SDK's streamable handler makes before it reads the body, as
// the SDK makes them: a version header, when there is one, of a revision
// served; a JSON body; an Accept of both JSON and event streams; no
// Last-Event-ID.
func LegacyHeaders(r *http.Request) bool {
	v := Get(r.Header, HeaderVersion)
	return (v == "" || mcpversion.IsServed(v)) && postHeaders(r)
}

// postHeaders reports whether r, a POST, has the headers of every era the
// SDK accepts before it reads the body: no Last-Event-ID, one
// Content-Type, application/json (the edge takes no parameters the SDK
// would strip), and an Accept of both JSON and event streams.
func postHeaders(r *http.Request) bool {
	if len(r.Header["Last-Event-Id"]) > 0 {
		return false
	}
	if ct := r.Header["Content-Type"]; len(ct) != 1 || !ASCIIFold(ct[0], "application/json") {
		return false
	}
	jsonOK, streamOK := Accepts(r.Header["Accept"])
	return jsonOK && streamOK
}

// The request headers the edge reads on every POST, in canonical form
// (textproto.CanonicalMIMEHeaderKey), as net/http stores them: read with
// Get, or straight from the map, which is what Header.Get and
// Header.Values do after canonicalising the key they are given.
const (
	HeaderVersion   = "Mcp-Protocol-Version"
	HeaderMethod    = "Mcp-Method"
	HeaderName      = "Mcp-Name"
	HeaderSession   = "Mcp-Session-Id"
	HeaderOrigin    = "Origin"
	HeaderAuthorize = "Authorization"
)

// Get is h.Get(key) for a key in canonical form, such as the Header
// constants, without canonicalising it again on every request.
func Get(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Rebound reports whether r came on a connection to a loopback address
// but names another host, which the SDK's streamable handler refuses with
// 403 (DNS rebinding protection): ServeHTTP refuses it first, the same way.
func Rebound(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && localLoopback(local) && !IsLoopback(r.Host)
}

// localLoopback is IsLoopback(a.String()), for a TCP address without a
// zone read from its IP, without writing it out and parsing it again.
func localLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok && t != nil && t.Zone == "" {
		ip, ok := netip.AddrFromSlice(t.IP)
		return ok && ip.IsLoopback()
	}
	return IsLoopback(a.String())
}

// IsLoopback is the SDK's test of a loopback address or host.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Accepts reads Accept values as the SDK does: whether they accept JSON
// and event streams.
func Accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for value != "" {
			var token string
			token, value, _ = strings.Cut(value, ",")
			base, _, _ := strings.Cut(token, ";")
			base = strings.TrimSpace(base)
			switch {
			case ASCIIFold(base, "application/json"), ASCIIFold(base, "application/*"):
				jsonOK = true
			case ASCIIFold(base, "text/event-stream"), ASCIIFold(base, "text/*"):
				streamOK = true
			case base == "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// ASCIIFold reports whether s is lower, a lower-case ASCII string, in any
// ASCII case: strings.ToLower(s) == lower, without its allocation, and
// without the Unicode folds of strings.EqualFold ("ſ" is not "s").
func ASCIIFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
