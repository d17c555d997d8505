// Package httpserver builds the hardened *http.Server every listener of
// this module serves on: an MCP endpoint (mcpexpose.NewHTTPServer, whose
// documentation says which timeout protects what) and the listeners the
// programs open beside it (internal/health's metrics listener). It is the
// one owner of the timeouts and limits, so that a listener the module opens
// for itself needs no public package to get them.
package httpserver

import (
	"net/http"
	"time"
)

// Timeouts are the timeouts of the server [New] returns: a zero field
// means the default, a negative one turns that timeout off.
type Timeouts struct {
	ReadHeader time.Duration
	Read       time.Duration
	Write      time.Duration
	Idle       time.Duration
}

// The defaults of [Timeouts].
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 10 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
)

// DefaultMaxHeaderBytes is the header size limit of the server [New]
// returns.
const DefaultMaxHeaderBytes = 64 << 10

// New returns an *http.Server for h with the timeouts t and a 64 KiB
// header limit.
func New(h http.Handler, t Timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: timeout(t.ReadHeader, DefaultReadHeaderTimeout),
		ReadTimeout:       timeout(t.Read, DefaultReadTimeout),
		WriteTimeout:      timeout(t.Write, DefaultWriteTimeout),
		IdleTimeout:       timeout(t.Idle, DefaultIdleTimeout),
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
	}
}

// timeout is v, def when v is zero, or 0 (none) when v is negative.
func timeout(v, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
