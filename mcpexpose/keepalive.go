package mcpexpose

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// keepAliveComment is what a quiet stream writes: an SSE comment (a line
// beginning with ':', which every SSE client ignores) and the blank line
// that ends it, as the SDK's own ": ok" opening a GET stream.
const keepAliveComment = ": keepalive\n\n"

// A long-lived event stream — a 2026-07-28 subscriptions/listen, a
// handshake-era session's GET stream — is quiet between its events, and a
// proxy in front learns that its client went away only when it writes to
// it: until then the proxy holds its connection to the server open, the
// server's request context is not cancelled, and the stream keeps its
// slot (MaxStreams) or its id (the SDK answers 409 to the client that
// opens it again). So such a stream writes a comment whenever it has
// written nothing for Limits.StreamKeepAlive: the proxy's write to a
// dead client fails, the proxy closes its connection to the server, and
// net/http cancels the request. A write that fails here cancels the
// request too, for writers that do not (ADR 59).

// aliveWriter is the response writer of a request that may answer with a
// long-lived event stream (Handler.forward wraps it). Once the response
// has begun as an event stream (200, text/event-stream, something
// written), it writes keepAliveComment whenever nothing was written for
// every, from its own timer's goroutine: the runtime's timer heap is the
// wheel, and no goroutine waits while the stream is quiet. The comment
// goes between events only: every write to w holds mu, and the writes
// before it must have ended an event. It is safe for concurrent use.
type aliveWriter struct {
	w      http.ResponseWriter
	every  time.Duration
	cancel context.CancelFunc // cancels the request, ending the stream

	mu     sync.Mutex
	status int         // written with WriteHeader; 0 before
	timer  *time.Timer // nil until the stream has begun
	last   time.Time   // of the last write
	tail   [2]byte     // the last two bytes written
	done   bool        // no comment is written again: the handler returned, or w broke
}

// Header implements http.ResponseWriter. Headers are set before anything
// is written, on the handler's goroutine: the timer runs only after.
func (a *aliveWriter) Header() http.Header { return a.w.Header() }

// WriteHeader implements http.ResponseWriter.
func (a *aliveWriter) WriteHeader(code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.status == 0 {
		a.status = code
	}
	a.w.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (a *aliveWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.status == 0 {
		a.status = http.StatusOK
	}
	n, err := a.w.Write(p)
	a.wrote(p[:n])
	if err != nil {
		a.fail()
		return n, err
	}
	if a.timer == nil && !a.done && a.status == http.StatusOK && n > 0 && isEventStream(a.w.Header()) {
		a.timer = time.AfterFunc(a.every, a.ping)
	}
	return n, nil
}

// wrote records p, just written. a.mu is held.
func (a *aliveWriter) wrote(p []byte) {
	switch len(p) {
	case 0:
		return
	case 1:
		a.tail = [2]byte{a.tail[1], p[0]}
	default:
		a.tail = [2]byte{p[len(p)-2], p[len(p)-1]}
	}
	a.last = time.Now()
}

// FlushError flushes w; http.ResponseController calls it, as the SDK does
// after each event.
func (a *aliveWriter) FlushError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.flush()
}

// Flush implements http.Flusher, for a writer that asserts it.
func (a *aliveWriter) Flush() { _ = a.FlushError() }

// flush flushes w, and ends the stream when the connection is broken.
// a.mu is held.
func (a *aliveWriter) flush() error {
	err := http.NewResponseController(a.w).Flush()
	if err != nil && !errors.Is(err, http.ErrNotSupported) {
		a.fail()
	}
	return err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (a *aliveWriter) Unwrap() http.ResponseWriter { return a.w }

// ping writes the comment, on the timer's goroutine, when nothing was
// written for every and the last write ended an event, and arms the timer
// again (the runtime's timer, Reset from its own function).
func (a *aliveWriter) ping() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	if quiet := time.Since(a.last); quiet < a.every {
		a.timer.Reset(a.every - quiet)
		return
	}
	if a.tail == [2]byte{'\n', '\n'} {
		comment := []byte(keepAliveComment)
		n, err := a.w.Write(comment)
		a.wrote(comment[:n])
		if err != nil {
			a.fail()
			return
		}
		if a.flush() != nil && a.done {
			return
		}
	}
	a.timer.Reset(a.every)
}

// fail ends the stream: the connection is broken, so the request is
// cancelled, the handler returns and gives back what it holds. a.mu is
// held.
func (a *aliveWriter) fail() {
	a.done = true
	if a.timer != nil {
		a.timer.Stop()
	}
	a.cancel()
}

// end stops the timer: the handler returned, and w is not written again.
func (a *aliveWriter) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
	if a.timer != nil {
		a.timer.Stop()
	}
}

// isEventStream reports whether h, a response's headers, make it an event
// stream.
func isEventStream(h http.Header) bool {
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}
