package mcpexpose

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/agnara-go/agnara/internal/mcpversion"
)

// A call on a 2025-11-25 session with Limits.PollAfter set is polled: once
// PollAfter has passed, its POST's stream ends with a close event whose
// retry: field is Limits.PollRetry, and the call goes on; what it sends
// afterwards waits in the session's event store until the client resumes
// the stream with a GET (resume.go). The SDK does this for the calls it
// serves (server.poll, through CloseSSEStream); the edge does it for the
// calls it answers, as the SDK does (ADR 74, stage 2c).

// pollsAsTheSDK reports whether the edge can poll a call POSTed as r on ls
// as the SDK would: on a session the SDK has made at 2025-11-25 (whose
// calls the SDK polls, server.poll), POSTed with that version header
// (under which the SDK primes the stream and ends it with a close event).
func pollsAsTheSDK(r *http.Request, ls *liveSession) bool {
	if ls.ss == nil || r.Header.Get("Mcp-Protocol-Version") != mcpversion.Handshake20251125 {
		return false
	}
	p := ls.ss.InitializeParams()
	return p != nil && p.ProtocolVersion == mcpversion.Handshake20251125
}

// answerPolled answers rec, a call on the live session ls that may be
// polled, on a callStream of the session's events: the call runs apart
// from the POST, which holds its stream until the call answers or
// PollAfter has passed, whichever comes first; then the POST ends, with
// the close event (callStream.poll), and the call goes on, holding its
// snapshot, its id in flight and its stream for a resume until it
// answers.
func (h *Handler) answerPolled(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, r *http.Request, rec *record, ls *liveSession) {
	fc, s := rec.fast, h.srv
	req := sessionCall(r, rec, ls)
	cs := &callStream{w: w, sess: h.sessionEvents(r, ls), level: h.sessions.logLevel(ls), holder: r.Context()}
	route := &edgeCaps{h: h, req: req, stream: cs}
	h.sessions.keepStream(ls, cs)
	if rec.e != nil {
		rec.e.pin() // ServeHTTP lets the edge's hold go when the POST ends
	}
	h.fastServed.Add(1)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		defer func() {
			h.sessions.dropStream(ls, cs)
			h.sessions.unclaim(ls, string(fc.ID))
			cancel()
			if rec.e != nil {
				s.release(rec.e)
			}
		}()
		res, err := s.callTool(ctx, rec, req, route)
		h.finishSession(w, cs.sess, cs, fc, finished(res), err)
	}()
	t := time.NewTimer(s.pollAfter)
	defer t.Stop()
	select {
	case <-answered:
	case <-t.C:
		if !cs.poll(w, s.pollRetry) {
			<-answered // the answer is being written to w
		}
	}
}

// poll ends the hold of w, the POST's writer, on cs, as the SDK's
// CloseSSEStream ends a polled call's stream: the stream primed if it has
// not begun, then a close event with a retry: field of retry (when
// positive), flushed; what the call sends from then on is only stored,
// until a GET resumes the stream. It reports false when the answer is
// written or being written to w, which the POST must then wait for; true
// also when w no longer holds the stream (its client went, and a GET
// resumed it).
func (cs *callStream) poll(w http.ResponseWriter, retry time.Duration) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ended {
		return false
	}
	if cs.w != w {
		return true
	}
	var out []byte
	if !cs.started {
		out = cs.sess.open(w, out)
		cs.started = true
	}
	if retry > 0 {
		out = append(out, "event: close\nretry: "...)
		out = strconv.AppendInt(out, retry.Milliseconds(), 10)
		out = append(out, "\ndata: \n\n"...)
	}
	if _, err := w.Write(out); err == nil {
		_ = http.NewResponseController(w).Flush()
	}
	cs.w, cs.holder = nil, nil
	return true
}
