package mcpimport

import (
	"net/http"
)

// HTTPProtocolVersion is the protocol version a host should ask an HTTP
// upstream for (in [ConnectOptions].SessionOptions.ProtocolVersion) when the
// upstream serves it, with the MCP Go SDK v1.8.0: the handshake era's
// 2025-11-25, one session for all calls.
//
// Measured in the repository's bench module (docs/PERFORMANCE.md,
// "Gateway"): asking for it instead of the SDK's default, 2026-07-28, cuts
// a gateway's CPU per imported call by about a quarter, and brings the
// upstream's CPU per call from the gateway down to what a direct caller
// costs it (at 2026-07-28 it spends 1.3–1.4× that). At 2026-07-28 the SDK
// client injects the request's _meta into every call and parses the
// request again to set its headers, and every request is a new server
// session upstream.
//
// A session can end (the upstream restarts, or drops sessions idle for
// long: set mcp.ClientOptions.KeepAlive); calls then fail with
// [ReasonConnectionClosed] and the host connects again. Leave the version
// empty (2026-07-28, no session) for upstreams behind a load balancer
// without session affinity.
const HTTPProtocolVersion = "2025-11-25"

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
