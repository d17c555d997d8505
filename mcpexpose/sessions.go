//lint:file-ignore SA1019 logging is deprecated at 2026-07-28 (SEP-2577) but remains in the protocol during the deprecation window; agnara-go serves it on purpose.

package mcpexpose

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The limits named in a refusal, as the options that set them.
const (
	limitSessions             = "MaxSessions"
	limitSessionsPerPrincipal = "MaxSessionsPerPrincipal"
)

// sessions counts the live handshake-era sessions of one handler, in all
// and per principal, and ends each one when the token that opened it
// expires. It is safe for concurrent use.
//
// Counting is exact because it follows the SDK's own lifecycle. The SDK
// creates a session for every stateful POST without Mcp-Session-Id; such a
// POST first reserves a slot ([sessions.reserve]); when the SDK answers it
// with a Mcp-Session-Id (only an initialize is so answered), the slot is
// bound to that id ([sessions.bind]), otherwise it is released when the
// request ends (the SDK closed the session it made for it). A bound slot is
// freed when the SDK closes the session for any reason (DELETE, idle
// timeout, failed initialization, expiry): the SDK then calls the event
// store's SessionClosed, which [countingStore] forwards to
// [sessions.closed]. No session can close before it is bound: its id is
// first revealed by the very response that binds it.
//
// It is also what the edge knows of each live session, to answer the
// session's ordinary calls itself (handshake.go): its SDK session, who
// opened it, the calls the edge answers for it, and — when the edge owns
// it, idle > 0 — its idle timer.
type sessions struct {
	server *mcp.Server
	logger *slog.Logger
	rate   logRate
	idle   time.Duration // the idle timeout the edge keeps; 0: the SDK keeps it
	meter  Meter         // told of refusals; nil for none

	mu    sync.Mutex
	slots slots // reserved and live
	live  map[string]*liveSession
}

// slots counts what a handler holds open, in all and per principal key,
// against a cap on each: the one counting rule of sessions and streams.
// Its owner locks it.
type slots struct {
	max, perPrincipal int  // negative: no limit
	anonymousCapped   bool // the key "" is capped per principal too (with Tokens)
	total             int
	by                map[string]int
}

// overCap names the cap a slot was refused by.
type overCap int

const (
	withinCaps overCap = iota
	overTotal
	overPerPrincipal
)

// take takes a slot for key, or reports the cap that refuses it.
func (s *slots) take(key string) overCap {
	if s.max >= 0 && s.total >= s.max {
		return overTotal
	}
	capped := s.perPrincipal >= 0 && (key != "" || s.anonymousCapped)
	if capped && s.by[key] >= s.perPrincipal {
		return overPerPrincipal
	}
	if s.by == nil {
		s.by = make(map[string]int)
	}
	s.total++
	s.by[key]++
	return withinCaps
}

// give gives back a slot of key.
func (s *slots) give(key string) {
	s.total--
	if s.by[key]--; s.by[key] <= 0 {
		delete(s.by, key)
	}
}

// liveSession is one live handshake-era session. Its fields after ss are
// guarded by sessions.mu.
type liveSession struct {
	id     string
	key    string
	expiry *time.Timer // nil for a token without expiry or no token
	ss     *mcp.ServerSession
	owner  string // the caller it belongs to (tokenKey of the token that opened it), "" for anyone

	posts  int         // POSTs in flight, which pause the idle timer
	idle   *time.Timer // stopped while a POST is in flight; nil before the first POST ends, or when the SDK keeps it
	calls  inFlight    // calls in flight by id: the edge's (with their cancel) and the SDK's (nil)
	closed bool
	level  mcp.LoggingLevel // the log level the client set (logging/setLevel); "" for none
	// asks are the edge's questions to the client awaiting its answer, by
	// request id (edgeask.go).
	asks map[string]chan *jsonrpc.Response
	// streams are the streams of the edge's calls running on the session
	// that have begun, by stream id, for a GET that resumes one
	// (resume.go).
	streams map[string]*callStream
}

func newSessions(max, perPrincipal int, anonymousCapped bool, idle time.Duration, server *mcp.Server, logger *slog.Logger) *sessions {
	return &sessions{
		slots:  slots{max: max, perPrincipal: perPrincipal, anonymousCapped: anonymousCapped},
		server: server,
		logger: logger,
		rate:   logRate{burst: 1, interval: time.Minute},
		idle:   idle,
		live:   make(map[string]*liveSession),
	}
}

// reserve takes a slot for a session key may open, or names the limit that
// refuses it.
func (s *sessions) reserve(key string) (limit string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.slots.take(key) {
	case overTotal:
		return limitSessions, false
	case overPerPrincipal:
		return limitSessionsPerPrincipal, false
	}
	return "", true
}

// release gives back a reserved slot no session was bound to.
func (s *sessions) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slots.give(key)
}

// bind turns a reserved slot into the live session id, which belongs to
// owner ("" for anyone), to be ended at expiry when that is not zero. The
// POST that opened it is still in flight (see begin).
func (s *sessions) bind(id, key, owner string, expiry time.Time) {
	var ss *mcp.ServerSession
	for sess := range s.server.Sessions() {
		if sess.ID() == id {
			ss = sess
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ls := &liveSession{id: id, key: key, ss: ss, owner: owner, posts: 1}
	if !expiry.IsZero() {
		// Under the lock, so that a timer firing at once (a token
		// accepted within its clock skew) finds the session bound.
		ls.expiry = time.AfterFunc(time.Until(expiry), func() { s.expire(id) })
	}
	s.live[id] = ls
}

// closed frees the slot of session id, which the SDK has closed. Ids of
// sessions never bound (the SDK's sessions for POSTs that were not an
// initialize) are ignored: their slots are released by their requests.
func (s *sessions) closed(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls, ok := s.live[id]
	if !ok {
		return
	}
	delete(s.live, id)
	ls.closed = true
	for id, answer := range ls.asks {
		delete(ls.asks, id)
		answer <- nil // no answer will come: the question fails as the SDK's does
	}
	if ls.expiry != nil {
		ls.expiry.Stop()
	}
	if ls.idle != nil {
		ls.idle.Stop()
	}
	s.slots.give(ls.key)
}

// expire closes session id because the token that opened it has expired;
// the SDK then answers its requests with 404 and the client must initialize
// again, with a fresh token. Close waits for the session's calls in flight,
// on the timer's goroutine.
func (s *sessions) expire(id string) {
	for ss := range s.server.Sessions() {
		if ss.ID() == id {
			if err := ss.Close(); err != nil {
				s.logger.LogAttrs(context.Background(), slog.LevelWarn, "closing an expired session failed", slog.Any("error", err))
			}
			return
		}
	}
}

// stranger reports whether r, with the verified token ti (nil for none),
// is a request to a live handshake-era session from someone other than the
// caller it belongs to: the issuer and subject of the token that opened
// it (tokenKey). A session opened without a token, or with a token without
// a subject, belongs to anyone who knows its id, as the SDK has it.
//
// The SDK's own check compares auth.TokenInfo.UserID, the subject alone,
// which the same subject from another issuer passes; the edge hands it no
// token for a stranger's request (ServeHTTP), so that it refuses it.
func (s *sessions) stranger(r *http.Request, ti *auth.TokenInfo) bool {
	id := wire.Get(r.Header, wire.HeaderSession)
	if id == "" || modernRequest(r) {
		return false
	}
	ls := s.lookup(id)
	return ls != nil && ls.owner != "" && tokenKey(ti) != ls.owner
}

// count reports the live and reserved sessions, in all and of key.
func (s *sessions) count(key string) (total, of int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slots.total, s.slots.by[key]
}

// refuse answers an initialize past limit with 503, Retry-After and a
// JSON-RPC error naming the limit, and logs the refusal within the rate:
// one record a minute, and the count of the others with the next one.
func (s *sessions) refuse(w http.ResponseWriter, r *http.Request, limit string) {
	if s.meter != nil {
		s.meter.Count(EventSessionRefused, "initialize")
	}
	ok, held, since := s.rate.take()
	if held > 0 {
		s.logger.LogAttrs(r.Context(), slog.LevelWarn, "more sessions refused than logged",
			slog.Int("count", held), slog.Time("since", since))
	}
	if ok {
		s.logger.LogAttrs(r.Context(), slog.LevelWarn, "session refused: limit reached", slog.String("limit", limit))
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(sessionRetryAfter/time.Second)))
	msg := "too many sessions are open on this server; retry later"
	if limit == limitSessionsPerPrincipal {
		msg = "too many sessions are open for this caller; end one (DELETE) or retry later"
	}
	wire.WriteNoIDError(w, http.StatusServiceUnavailable, codeSessionLimit, fmt.Sprintf("%s (limit %s)", msg, limit))
}

// codeSessionLimit is the JSON-RPC code of a refused initialize: a server
// error in the implementation-defined range.
const codeSessionLimit = -32000

// serveNew serves, on the stateful handler, a POST without Mcp-Session-Id,
// for which the SDK creates a session: within the limits, or refused. rec
// is its record: who it counts against (record.key), and the expiry of
// its token, at which the session ends.
func (s *sessions) serveNew(stateful http.Handler, w http.ResponseWriter, r *http.Request, rec *record) {
	ti := rec.ti
	key := rec.key()
	limit, ok := s.reserve(key)
	if !ok {
		s.refuse(w, r, limit)
		return
	}
	sw := &sessionWriter{ResponseWriter: w, s: s, key: key}
	if ti != nil {
		sw.expiry, sw.owner = ti.Expiration, tokenKey(ti)
	}
	stateful.ServeHTTP(sw, r)
	if !sw.bound {
		s.release(key)
		return
	}
	if ls := s.lookup(sw.id); ls != nil {
		s.end(ls) // the POST that opened it
	}
}

// sessionWriter sees the Mcp-Session-Id the SDK sets on the answer to an
// initialize, when the header is written, and binds the request's slot to
// it.
type sessionWriter struct {
	http.ResponseWriter
	s       *sessions
	key     string
	owner   string
	expiry  time.Time
	checked bool // the header has been looked at
	bound   bool
	id      string // the session's, once bound
}

func (w *sessionWriter) check() {
	if w.checked {
		return
	}
	w.checked = true
	if id := w.Header().Get("Mcp-Session-Id"); id != "" {
		w.s.bind(id, w.key, w.owner, w.expiry)
		w.bound, w.id = true, id
	}
}

func (w *sessionWriter) WriteHeader(code int) {
	w.check()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWriter) Write(b []byte) (int, error) {
	w.check()
	return w.ResponseWriter.Write(b)
}

// FlushError is what http.ResponseController calls to flush SSE events.
func (w *sessionWriter) FlushError() error {
	w.check()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *sessionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingStore is the stateful handler's event store, which also tells
// the session count when the SDK closes a session.
type countingStore struct {
	*eventStore
	sessions *sessions
}

var _ mcp.EventStore = countingStore{}

// SessionClosed implements [mcp.EventStore].
func (c countingStore) SessionClosed(ctx context.Context, sessionID string) error {
	c.sessions.closed(sessionID)
	return c.eventStore.SessionClosed(ctx, sessionID)
}

// setLevel records the log level the client of the session id set, which
// the SDK accepted (logging/setLevel), for the edge's own calls on it.
func (s *sessions) setLevel(id string, level mcp.LoggingLevel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls := s.live[id]; ls != nil {
		ls.level = level
	}
}

// logLevel returns the log level the client of ls set last.
func (s *sessions) logLevel(ls *liveSession) mcp.LoggingLevel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ls.level
}

// await records the edge's question id to the client of ls, and returns
// where its answer will be delivered; nil when ls is closed.
func (s *sessions) await(ls *liveSession, id string) chan *jsonrpc.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls.closed {
		return nil
	}
	if ls.asks == nil {
		ls.asks = make(map[string]chan *jsonrpc.Response)
	}
	answer := make(chan *jsonrpc.Response, 1)
	ls.asks[id] = answer
	return answer
}

// forgetAsk forgets the question id, whose call stopped waiting.
func (s *sessions) forgetAsk(ls *liveSession, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls.dropAsk(id)
}

// dropAsk forgets the question id, and the map of questions once empty,
// so that an idle session holds none. Its caller holds sessions.mu.
func (ls *liveSession) dropAsk(id string) {
	delete(ls.asks, id)
	if len(ls.asks) == 0 {
		ls.asks = nil
	}
}

// answered delivers resp, a client's response POSTed to ls, to the edge's
// question it answers, and reports whether it answered one.
func (s *sessions) answered(ls *liveSession, resp *jsonrpc.Response) bool {
	id, ok := resp.ID.Raw().(string)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	answer := ls.asks[id]
	if answer == nil {
		return false
	}
	ls.dropAsk(id)
	answer <- resp
	return true
}

// keepStream records cs, the stream of one of the edge's calls on ls, as
// live until dropStream.
func (s *sessions) keepStream(ls *liveSession, cs *callStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls.streams == nil {
		ls.streams = make(map[string]*callStream)
	}
	ls.streams[cs.sess.id()] = cs
}

// dropStream forgets cs, whose call has answered.
func (s *sessions) dropStream(ls *liveSession, cs *callStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(ls.streams, cs.sess.id())
	if len(ls.streams) == 0 {
		ls.streams = nil // an idle session holds no map
	}
}

// liveStream returns the live stream id of ls, or nil.
func (s *sessions) liveStream(ls *liveSession, id string) *callStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ls.streams[id]
}
