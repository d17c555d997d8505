package mcpexpose

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
)

// The limits named in a refused listen, as the options that set them.
const (
	limitStreams             = "MaxStreams"
	limitStreamsPerPrincipal = "MaxStreamsPerPrincipal"
)

// streams counts the open 2026-07-28 subscriptions/listen streams of one
// handler, in all and per principal (keyed as sessions are:
// [record.key]). A listen POST takes a slot before the edge holds it
// (listen.go) or the SDK sees it, and gives it back when the edge's
// handler or the SDK's for it returns, however the stream ends: the client goes away (the SDK cancels a stateless request whose
// connection ends, and closes its session before returning; behind a
// proxy, the stream's keep-alive comment makes the proxy see it, within
// two Limits.StreamKeepAlive), a write fails (keepalive.go), the stream's
// lifetime or token runs out ([server.boundListen]), the server shuts
// down, or the SDK refuses the request. It is safe for concurrent use.
//
// Streams are counted apart from sessions: a listen has none. The other
// long-lived responses need no count of their own: a handshake-era
// session's standalone GET stream is one per session (the SDK refuses a
// second with 409 while the first is held, which its keep-alive bounds
// behind a proxy) and ends with it; a handshake-era session may not
// listen (the server answers -32601: its handler would outlive its
// client's connection, as the stateful SDK handler does not cancel a
// request whose connection ends); and a POST's event stream ends with its
// call, bounded by ServerOptions.Timeout and the capability's own.
type streams struct {
	logger *slog.Logger
	rate   logRate
	meter  Meter // told of refusals; nil for none

	mu    sync.Mutex
	slots slots
}

func newStreams(max, perPrincipal int, anonymousCapped bool, logger *slog.Logger) *streams {
	return &streams{
		slots:  slots{max: max, perPrincipal: perPrincipal, anonymousCapped: anonymousCapped},
		logger: logger,
		rate:   logRate{burst: 1, interval: time.Minute},
	}
}

// serve passes r, a POST opening a listen stream, to next within the caps,
// or refuses it with 503. rec is its record: its id, and who it counts
// against (record.key).
func (st *streams) serve(w http.ResponseWriter, r *http.Request, rec *record, next http.Handler) {
	id, key := rec.id, rec.key()
	st.mu.Lock()
	over := st.slots.take(key)
	st.mu.Unlock()
	if over != withinCaps {
		st.refuse(w, r, id, over)
		return
	}
	defer func() {
		st.mu.Lock()
		st.slots.give(key)
		st.mu.Unlock()
	}()
	next.ServeHTTP(w, r)
}

// count reports the open streams, in all and of key.
func (st *streams) count(key string) (total, of int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.slots.total, st.slots.by[key]
}

// refuse answers a listen past a cap as an initialize past a session cap
// is answered: 503, Retry-After and a JSON-RPC error naming the limit, and
// a warning within the log rate.
func (st *streams) refuse(w http.ResponseWriter, r *http.Request, id json.RawMessage, over overCap) {
	if st.meter != nil {
		st.meter.Count(EventStreamRefused, methodListen)
	}
	limit, msg := limitStreams, "too many streams are open on this server; retry later"
	if over == overPerPrincipal {
		limit, msg = limitStreamsPerPrincipal, "too many streams are open for this caller; close one or retry later"
	}
	ok, held, since := st.rate.take()
	if held > 0 {
		st.logger.LogAttrs(r.Context(), slog.LevelWarn, "more streams refused than logged",
			slog.Int("count", held), slog.Time("since", since))
	}
	if ok {
		st.logger.LogAttrs(r.Context(), slog.LevelWarn, "stream refused: limit reached", slog.String("limit", limit))
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(sessionRetryAfter/time.Second)))
	wire.WriteError(w, http.StatusServiceUnavailable, id, codeSessionLimit, fmt.Sprintf("%s (limit %s)", msg, limit))
}
