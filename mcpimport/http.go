package mcpimport

import (
	"net/http"

	"github.com/agnara-go/agnara/internal/mcpversion"
)

// HTTPProtocolVersion is the protocol version a host should ask an HTTP
// upstream for (in [ConnectOptions].SessionOptions.ProtocolVersion):
// 2026-07-28, the newest the MCP Go SDK v1.8.0 speaks, which is also what
// the SDK asks for when none is named. The SDK client asks with
// server/discover; an upstream that does not serve 2026-07-28 answers the
// handshake that follows at the newest revision it does serve, down to
// 2024-11-05. So the session negotiates the newest revision the upstream
// offers.
//
// At 2026-07-28 a session has no state upstream (each request stands
// alone, so a load balancer needs no affinity and an upstream restart
// loses nothing), and its ordinary tools/call requests take the fast path
// ([ConnectOptions].DisableFastPath): measured in the repository's bench
// module (docs/PERFORMANCE.md, "Gateway"), a gateway's CPU per imported call
// then falls below the agnara-go upstream's own.
//
// Against an upstream built on the SDK's stateless handler, 2025-11-25
// costs the upstream less per call (one session for all calls, where
// 2026-07-28 builds a server session per request); ask for it to spend the
// upstream's CPU rather than the gateway's. Such a session can end (the
// upstream restarts, or drops sessions idle for long: set
// mcp.ClientOptions.KeepAlive); calls then fail with
// [ReasonConnectionClosed] and the host connects again.
const HTTPProtocolVersion = mcpversion.Modern

// HTTPOptions configures [HTTPClient]. A nil *HTTPOptions and every zero
// field mean the documented default.
type HTTPOptions struct {
	// MaxIdleConnsPerHost is the most idle keep-alive connections kept to
	// one upstream host. Default 64. net/http's own default, 2, makes every
	// concurrent call beyond the second open a new TCP connection and close
	// it again, on both ends.
	MaxIdleConnsPerHost int
	// Transport is the transport to start from; it is cloned, not changed.
	// Default: http.DefaultTransport (proxies from the environment, dial
	// and TLS handshake timeouts, HTTP/2 when offered).
	Transport *http.Transport
}

// HTTPClient returns the HTTP client a host should give an
// mcp.StreamableClientTransport for an upstream: its own transport (a clone
// of opts.Transport) that keeps up to opts.MaxIdleConnsPerHost idle
// connections to each upstream host.
//
// The client has no overall Timeout: a session's event streams stay open
// for as long as it does, and [Limits].CallTimeout bounds each call. It does
// not bound response bodies; wrap its Transport to (see [Limits]). Wrap it,
// too, to add the host's own credentials (an oauth2 transport, say).
//
// The client is safe for concurrent use.
func HTTPClient(opts *HTTPOptions) *http.Client {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = 64
	}
	base := o.Transport
	if base == nil {
		base, _ = http.DefaultTransport.(*http.Transport)
	}
	var t *http.Transport
	if base != nil {
		t = base.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	t.MaxIdleConnsPerHost = o.MaxIdleConnsPerHost
	if t.MaxIdleConns != 0 && t.MaxIdleConns < o.MaxIdleConnsPerHost {
		t.MaxIdleConns = o.MaxIdleConnsPerHost
	}
	return &http.Client{Transport: t}
}
