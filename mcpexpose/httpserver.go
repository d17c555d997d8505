package mcpexpose

import (
	"net/http"
	"time"

	"github.com/agnara-go/agnara/internal/httpserver"
)

// HTTPTimeouts are the timeouts of the *http.Server that [NewHTTPServer]
// returns. A nil *HTTPTimeouts and every zero field mean the documented
// default; a negative field turns that timeout off.
type HTTPTimeouts struct {
	// ReadHeader bounds reading a request's headers, against clients that
	// open connections and send headers a byte at a time. Default: 10
	// seconds.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included, against clients
	// that send a body a byte at a time. Default: 30 seconds, ample for a
	// 1 MiB body (the default [Limits.MaxBodyBytes]) on a slow link.
	Read time.Duration
	// Write bounds writing a response, from the end of the request's
	// headers: it is the longest a response may stream, so it must exceed
	// the longest tool call (ServerOptions.Timeout) and is the longest a
	// handshake-era GET event stream lasts before the client reconnects
	// (resuming with Last-Event-ID). It also frees a connection whose
	// client stopped reading. Default: 10 minutes.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next
	// request. Default: 2 minutes.
	Idle time.Duration
}

// NewHTTPServer returns an *http.Server for h hardened for MCP: bounded
// header and body reads (slow clients are cut off), a write timeout sized
// for streamed responses, an idle timeout for kept-alive connections, and a
// 64 KiB header limit. docs/operating.md says which timeout protects what.
// Serve it as usual (srv.Serve(ln), srv.Shutdown(ctx)); set its other
// fields (TLSConfig, ErrorLog, BaseContext) before serving.
func NewHTTPServer(h http.Handler, t *HTTPTimeouts) *http.Server {
	var o HTTPTimeouts
	if t != nil {
		o = *t
	}
	return httpserver.New(h, httpserver.Timeouts(o))
}
