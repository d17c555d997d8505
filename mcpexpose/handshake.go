package mcpexpose

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The edge answers the ordinary calls of a live handshake-era session
// (2025-11-25, 2025-06-18) itself, as it answers stateless 2026-07-28 ones:
// a tools/list, and a tools/call. A call talks to its client only on its
// POST's stream: its progress, its forwarded logs (at the level the client
// set, sessions.setLevel), its questions (server-to-client requests whose
// answers the client POSTs back, edgeask.go) and its answer, which the
// edge writes and stores as the SDK does (sessionEvents), so the call
// needs nothing of the session the SDK keeps to itself. The SDK keeps the
// session's lifecycle: initialize, the GET stream, notifications, DELETE,
// requests other than tools/call and tools/list, and a call that may be
// polled (SDK-SESSION-POST.md, ADR 68, ADR 74).
//
// What the SDK would do for such a POST besides answering, the edge does:
//
//   - it keeps the session's idle timer, for every POST to the session
//     (the SDK's is off: the SDK re-arms it only for POSTs it serves):
//     paused while a POST is in flight, re-armed when the last ends, and
//     closing the session through the SDK when it fires;
//   - it runs the call as the SDK runs a session's calls: not cancelled
//     when the POST's connection goes away, cancelled by a
//     notifications/cancelled naming it;
//   - it refuses, by leaving to the SDK, an id already in flight;
//   - it writes the answer as the SDK frames it (a priming event when the
//     request's header asks for 2025-11-25, then the message) and keeps
//     it in the session's event store first, under a stream id of the
//     SDK's form, so that a GET resuming the stream with Last-Event-ID is
//     replayed by the SDK as if it had written it: a stream written whole
//     as one entry of the store's log (ADR 88), one written event by
//     event as the SDK's events.

// lookup returns the live session id, or nil.
func (s *sessions) lookup(id string) *liveSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// begin marks a POST to the live session id in flight, pausing its idle
// timer, and returns the session, or nil when id is not live.
func (s *sessions) begin(id string) *liveSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls := s.live[id]
	if ls == nil {
		return nil
	}
	ls.posts++
	if ls.idle != nil {
		ls.idle.Stop() // kept, stopped, for end to start again
	}
	return ls
}

// end marks a POST to ls ended; when it was the last in flight, the idle
// timer starts again (when the edge keeps it).
func (s *sessions) end(ls *liveSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls.posts--
	if ls.posts > 0 || ls.closed || s.idle <= 0 || ls.ss == nil {
		return
	}
	if ls.idle != nil {
		// The session's one timer, stopped by begin: started again
		// rather than made anew for every POST. (A timer that had fired
		// when begin stopped it is closing the session already; started
		// again, it closes it again, as a new timer would.)
		ls.idle.Reset(s.idle)
		return
	}
	ss := ls.ss
	ls.idle = time.AfterFunc(s.idle, func() {
		// The SDK's own close: it ends the session's streams and calls
		// the event store's SessionClosed, which forgets ls.
		if err := ss.Close(); err != nil {
			s.logger.LogAttrs(context.Background(), slog.LevelWarn, "closing an idle session failed", slog.Any("error", err))
		}
	})
}

// claim records the call id in flight on ls, with cancel for the edge's
// own calls (nil for one the SDK serves); it reports false, recording
// nothing, when id is in flight already, and then whether the call in
// flight is the edge's.
func (s *sessions) claim(ls *liveSession, id string, cancel context.CancelFunc) (ok, edges bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, dup := ls.calls.get(id); dup {
		return false, c != nil
	}
	if ls.closed {
		return false, false
	}
	ls.calls.put(id, cancel)
	return true, false
}

// unclaim ends the call id on ls.
func (s *sessions) unclaim(ls *liveSession, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls.calls.del(id)
}

// cancelCall cancels the edge's call id on ls, if it is one in flight: a
// notifications/cancelled naming it (the SDK, which does not know it, does
// nothing with the notification).
func (s *sessions) cancelCall(ls *liveSession, id string) {
	s.mu.Lock()
	cancel, _ := ls.calls.get(id)
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// inFlight is the set of a session's calls in flight, by id, each with its
// cancel (nil for the SDK's). One call, what a session mostly has, is
// held in place; a map is made only for more at once, and dropped when
// they end, so that an idle session holds none (issue 42).
type inFlight struct {
	id     string
	cancel context.CancelFunc
	held   bool // id is in flight
	more   map[string]context.CancelFunc
}

func (f *inFlight) get(id string) (context.CancelFunc, bool) {
	if f.held && f.id == id {
		return f.cancel, true
	}
	c, ok := f.more[id]
	return c, ok
}

func (f *inFlight) put(id string, cancel context.CancelFunc) {
	if !f.held {
		f.id, f.cancel, f.held = id, cancel, true
		return
	}
	if f.more == nil {
		f.more = make(map[string]context.CancelFunc)
	}
	f.more[id] = cancel
}

func (f *inFlight) del(id string) {
	if f.held && f.id == id {
		f.id, f.cancel, f.held = "", nil, false
		return
	}
	delete(f.more, id)
	if len(f.more) == 0 {
		f.more = nil
	}
}

// store runs write, which stores events of ls, unless ls is closed, and
// reports whether it ran: under the lock closed takes, so that no event of
// a session outlives its SessionClosed.
func (s *sessions) store(ls *liveSession, write func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls.closed {
		return false
	}
	write()
	return true
}

// session returns the live session a handshake-era POST r is to, when the
// edge keeps it and the SDK would serve the POST on it (its media type, its
// Accept, its version header and its caller are what the SDK accepts: a
// stranger's, sessions.stranger, is not), with the POST marked in flight
// (sessions.begin); or nil, for the SDK to serve or refuse as it does.
func (h *Handler) session(r *http.Request, rec *record, stranger bool) *liveSession {
	if h.sessions.idle <= 0 || rec.modern || stranger {
		return nil
	}
	id := wire.Get(r.Header, wire.HeaderSession)
	if id == "" || !wire.LegacyHeaders(r) {
		return nil
	}
	return h.sessions.begin(id)
}

// polled reports whether a call on ls may be polled (server.poll): with
// Limits.PollAfter set, on a session not known to be older than
// 2025-11-25. (A call on the edge carries no protocol version of its own
// in _meta, so the session's is the call's.)
func (h *Handler) polled(ls *liveSession) bool {
	if h.srv.pollAfter <= 0 {
		return false
	}
	if ls.ss == nil {
		return true
	}
	p := ls.ss.InitializeParams()
	return p == nil || p.ProtocolVersion == mcpversion.Handshake20251125
}

// answersSession is the edge's one decision for a POST to the live session
// ls: it answers a single tools/list or tools/call that the strict scanner
// read whole, with no _meta of the protocol's own, whose id is not in
// flight, from a caller still there (a tool that may ask, or a call that
// may be polled, on a session the SDK has made, whose client's
// capabilities and revision it reads; a polled call only when the POST's
// version header is the session's, which the SDK's poll writes by).
// Deciding to answer claims the id; answerSession gives it back. A request the edge would answer but for its id, in
// flight as one of the edge's own calls, it answers as the SDK answers a
// duplicate id it knows of, and reports done.
func (h *Handler) answersSession(w http.ResponseWriter, r *http.Request, rec *record, ls *liveSession) (ctx context.Context, cancel context.CancelFunc, ok, done bool) {
	fc := rec.fast
	if !h.fast || fc == nil || (!fc.List && h.polled(ls) && !pollsAsTheSDK(r, ls)) {
		return nil, nil, false, false
	}
	if rec.ti != nil && len(strings.Fields(wire.Get(r.Header, wire.HeaderAuthorize))) != 2 {
		return nil, nil, false, false // the SDK's bearer middleware splits it so, and refuses it
	}
	meta, ok := wire.LegacyMeta(fc.Meta)
	if !ok {
		return nil, nil, false, false
	}
	fc.Decoded = meta
	if !fc.List && rec.tool != nil && rec.tool.asks && ls.ss == nil {
		return nil, nil, false, false // no session to read the client's capabilities from yet
	}
	if r.Context().Err() != nil {
		return nil, nil, false, false // gone: the SDK serves it as it serves any
	}
	// The SDK runs a session's calls in no request's lifetime: only a
	// notifications/cancelled ends them early.
	ctx, cancel = context.WithCancel(context.WithoutCancel(r.Context()))
	claimed, edges := h.sessions.claim(ls, string(fc.ID), cancel)
	if claimed {
		return ctx, cancel, true, false
	}
	cancel()
	if !edges {
		return nil, nil, false, false // the SDK answers the duplicate of its own call
	}
	h.writeDuplicate(w, fc.ID)
	return nil, nil, false, true
}

// writeDuplicate answers a call whose id is one of the edge's calls in
// flight on the session, as the SDK answers a duplicate id: after it set
// the event stream's headers, a 400 JSON-RPC -32600 naming the id.
func (h *Handler) writeDuplicate(w http.ResponseWriter, id []byte) {
	raw := string(id)
	if strings.HasPrefix(raw, `"`) {
		raw = raw[1 : len(raw)-1] // a plain string: no escapes
	}
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Connection", "keep-alive")
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	h.srv.wire.Response(buf, &wire.Call{ID: id}, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate in-flight request ID " + raw}, false)
	hd.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(buf.Bytes())
}

// answerSession answers rec, a POST to the live session ls that the edge
// decided to answer (answersSession), in ctx, and gives its id back. A
// call with a progress token, or on a server that forwards logs, is
// answered on a callStream whose events are the session's (sessionEvents),
// as the SDK writes and stores a call's notifications; a call that may be
// polled, on one that the poll may end (answerPolled). It reports
// whether rec is free once it returns: but for a call that may be polled,
// which goes on with rec after the POST ends.
func (h *Handler) answerSession(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, r *http.Request, rec *record, ls *liveSession) bool {
	fc := rec.fast
	if !fc.List && h.polled(ls) {
		h.answerPolled(ctx, cancel, w, r, rec, ls)
		return false
	}
	defer func() {
		h.sessions.unclaim(ls, string(fc.ID))
		cancel()
	}()
	s := h.srv
	se := h.sessionEvents(r, ls)
	var res mcp.Result
	var err error
	var cs *callStream
	if fc.List {
		res, err = s.listToolsOf(ctx, rec, &mcp.ListToolsRequest{Session: ls.ss, Params: &mcp.ListToolsParams{Meta: fc.Decoded}, Extra: &mcp.RequestExtra{TokenInfo: rec.ti, Header: r.Header}})
	} else {
		req := sessionCall(r, rec, ls)
		var route callRoute // none: the session's capabilities, read by the call
		if req.Params.GetProgressToken() != nil || s.opts.ForwardLogs || (rec.tool != nil && rec.tool.asks) {
			cs = &callStream{w: w, sess: se, level: h.sessions.logLevel(ls), holder: r.Context()}
			route = &edgeCaps{h: h, req: req, stream: cs}
			h.sessions.keepStream(ls, cs)
			defer h.sessions.dropStream(ls, cs)
		}
		res, err = s.callTool(ctx, rec, req, route)
		res = finished(res)
	}
	h.fastServed.Add(1) // before the write, as answer counts
	h.finishSession(w, se, cs, fc, res, err)
	return true
}

// sessionCall is the SDK's request value of rec, a tools/call POSTed as r
// that the edge answers on the live session ls.
func sessionCall(r *http.Request, rec *record, ls *liveSession) *mcp.CallToolRequest {
	fc := rec.fast
	return &mcp.CallToolRequest{Session: ls.ss, Params: &mcp.CallToolParamsRaw{Meta: fc.Decoded, Name: fc.Name, Arguments: fc.Args}, Extra: &mcp.RequestExtra{TokenInfo: rec.ti, Header: r.Header}}
}

// finishSession writes the answer to fc, res or err, on the session's
// stream se: as the last event after those cs began with, to whichever
// request holds the stream now; or, when there is no cs or it told
// nothing, whole on w (writeSession).
func (h *Handler) finishSession(w http.ResponseWriter, se *sessionEvents, cs *callStream, fc *wire.Call, res mcp.Result, err error) {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	h.srv.wire.Response(buf, fc, res, err, false)
	if cs != nil && cs.finish(buf.Bytes()) {
		return
	}
	h.writeSession(w, se, buf.Bytes())
}

// sessionEvents is the event stream of one POST the edge answers on the
// live session ls, as the SDK writes and stores it: under a stream id of
// the SDK's own form, each event stored in the session's event store
// before it is written, so that a GET resuming the stream with
// Last-Event-ID is replayed by the SDK as if it had written them; opened
// with a priming event when the request's version header is 2025-11-25
// or later.
type sessionEvents struct {
	h      *Handler
	ls     *liveSession
	stream string
	prime  bool
	next   int // the index of the next event
}

func (h *Handler) sessionEvents(r *http.Request, ls *liveSession) *sessionEvents {
	return &sessionEvents{h: h, ls: ls, prime: wire.Get(r.Header, wire.HeaderVersion) >= mcpversion.Handshake20251125}
}

// id returns the stream's id, made at its first use: a stream written
// whole and kept in the store's log has an id of the store's instead
// (writeSession). Its first use is before the stream is shared
// (sessions.keepStream), or in the one goroutine writing it.
func (se *sessionEvents) id() string {
	if se.stream == "" {
		se.stream = crand.Text()
	}
	return se.stream
}

// open sets the stream's headers on w and appends its opening to out:
// the priming event, stored first, when the revision primes; nothing
// otherwise.
func (se *sessionEvents) open(w http.ResponseWriter, out []byte) []byte {
	se.headers(w)
	if !se.prime {
		return out
	}
	h, ls := se.h, se.ls
	h.sessions.store(ls, func() {
		ctx := context.Background()
		_ = h.events.Open(ctx, ls.id, se.id())
		_ = h.events.Append(ctx, ls.id, se.id(), nil)
	})
	se.next = 1
	return se.primed(out)
}

// headers sets the stream's headers on w.
func (se *sessionEvents) headers(w http.ResponseWriter) {
	streamHeaders(w.Header(), "text/event-stream")
}

// primed appends the stream's priming event to out.
func (se *sessionEvents) primed(out []byte) []byte {
	out = append(out, "event: prime\nid: "...)
	out = append(out, se.id()...)
	return append(out, "_0\ndata: \n\n"...)
}

// event stores data, one message, as the stream's next event and appends
// the event to out; a session closed meanwhile gets nothing of it, as
// the SDK sends nothing of a message to a closed session.
func (se *sessionEvents) event(out []byte, data []byte) []byte {
	h, ls := se.h, se.ls
	stored := h.sessions.store(ls, func() {
		ctx := context.Background()
		if se.next == 0 {
			_ = h.events.Open(ctx, ls.id, se.id())
		}
		_ = h.events.Append(ctx, ls.id, se.id(), bytes.Clone(data))
	})
	if !stored {
		return out
	}
	out = append(out, "event: message\nid: "...)
	out = append(out, se.id()...)
	out = append(out, '_')
	out = strconv.AppendInt(out, int64(se.next), 10)
	se.next++
	out = append(out, "\ndata: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}

// writeSession writes data, a call's answer, on the session's stream se, whole,
// as the SDK writes a call's answer on a session's POST: the priming
// event (when the revision primes) and the message. A session closed
// meanwhile gets what the SDK sends then: the stream, primed, without the
// message.
//
// The stream is kept for a client that resumes it (ADR 88) as the
// message written, in the event store's log of whole streams, under an
// id the store gives it (eventStore.keepWritten): one copy of the answer,
// the one written, and an entry appended to a log, where the SDK's Open
// and Appends would take a copy of their own, a map entry and a list
// element for each stream, and a random id.
func (h *Handler) writeSession(w http.ResponseWriter, se *sessionEvents, data []byte) {
	msg := bytes.Clone(data)
	ls := se.ls
	var tick uint64
	if !h.sessions.store(ls, func() { tick = h.events.keepWritten(ls.id, se.prime, msg) }) {
		se.headers(w)
		var out []byte
		if se.prime {
			out = se.primed(out)
		}
		writeStream(w, out)
		return
	}
	var id [writtenIDLen]byte
	h.events.writtenID(&id, tick)
	se.headers(w)
	head := wire.GetBuf()
	defer wire.PutBuf(head)
	out := head.AvailableBuffer()
	next := byte('0')
	if se.prime {
		out = append(out, "event: prime\nid: "...)
		out = append(out, id[:]...)
		out = append(out, "_0\ndata: \n\n"...)
		next = '1'
	}
	out = append(out, "event: message\nid: "...)
	out = append(out, id[:]...)
	out = append(out, '_', next)
	out = append(out, "\ndata: "...)
	hd := w.Header()
	if n := len(out) + len(msg) + len(eventEnd); n >= autoLength {
		hd.Set("Content-Length", strconv.Itoa(n))
	}
	_, _ = w.Write(out)
	_, _ = w.Write(msg)
	_, _ = w.Write(eventEnd)
}

// eventEnd ends an event.
var eventEnd = []byte("\n\n")
