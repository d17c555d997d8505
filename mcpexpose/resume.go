package mcpexpose

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
)

// A client whose POST stream dropped while the edge's call on it was
// still running resumes it with a GET carrying Last-Event-ID, as from the
// SDK's: it is sent the events it missed, from the session's event store,
// and then the rest of the stream as the call goes on, until its answer
// (the SDK keeps a resumed GET on the live stream too). A stream that has
// ended, or that the edge does not know, is the SDK's to replay from the
// store.

// finish writes data, the call's answer, as the last event of cs, a
// session's stream that has begun, to whichever request holds it now,
// and reports true; for a stream that has not begun it marks cs ended and
// reports false, for the answer to be written whole (writeSession).
func (cs *callStream) finish(data []byte) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.ended = true
	if !cs.started {
		return false
	}
	if out := cs.sess.event(nil, data); cs.w != nil {
		_, _ = cs.w.Write(out)
	}
	if cs.resumed != nil {
		close(cs.resumed)
		cs.resumed = nil
	}
	return true
}

// resumeLive serves r, a GET of a session's stream with Last-Event-ID,
// when the stream is one of the edge's calls still running, and reports
// whether it did.
func (h *Handler) resumeLive(w http.ResponseWriter, r *http.Request) bool {
	last, id := r.Header.Get("Last-Event-ID"), r.Header.Get("Mcp-Session-Id")
	if last == "" || id == "" || h.sessions.idle <= 0 || len(r.Header.Values("Last-Event-ID")) != 1 {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !mcpversion.IsServed(v) {
		return false // the SDK words the refusal
	}
	if _, streamOK := wire.Accepts(r.Header.Values("Accept")); !streamOK {
		return false
	}
	cut := strings.LastIndexByte(last, '_')
	if cut <= 0 {
		return false
	}
	index, err := strconv.Atoi(last[cut+1:])
	if err != nil || index < 0 {
		return false
	}
	ls := h.sessions.lookup(id)
	if ls == nil {
		return false
	}
	cs := h.sessions.liveStream(ls, last[:cut])
	if cs == nil {
		return false
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	aw := &aliveWriter{w: w, every: h.keepAlive, cancel: cancel}
	defer aw.end()
	done, ok, conflict := cs.resume(ctx, aw, index)
	switch {
	case conflict:
		// As the SDK answers a resume of a stream whose request is
		// still there: its client has not gone, as far as the server
		// knows.
		http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
		return true
	case !ok:
		return false
	}
	select {
	case <-done:
	case <-ctx.Done():
		cs.release(aw) // nothing is written to a request that has ended
	}
	return true
}

// release detaches w, the writer of a request that is ending, from cs:
// what the call sends until another request resumes the stream is only
// stored.
func (cs *callStream) release(w http.ResponseWriter) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.w == w {
		cs.w, cs.holder = nil, nil
	}
}

// resume sends w the events of cs after index, from the session's event
// store, and makes w, whose request's context is ctx, the writer of the
// rest of the stream; it returns what is closed when the answer is
// written, or reports false when the stream has ended meanwhile, or a
// conflict while the request that holds the stream is still there.
func (cs *callStream) resume(ctx context.Context, w http.ResponseWriter, index int) (done <-chan struct{}, ok, conflict bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ended {
		return nil, false, false
	}
	if cs.holder != nil && cs.holder.Err() == nil {
		return nil, false, true
	}
	se := cs.sess
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Connection", "keep-alive")
	var out []byte
	for data, err := range se.h.events.After(ctx, se.ls.id, se.id(), index) {
		if err != nil {
			break
		}
		if len(data) == 0 {
			continue // the priming event: not replayed
		}
		index++
		out = append(out, "event: message\nid: "...)
		out = append(out, se.id()...)
		out = append(out, '_')
		out = strconv.AppendInt(out, int64(index), 10)
		out = append(out, "\ndata: "...)
		out = append(out, data...)
		out = append(out, "\n\n"...)
	}
	if len(out) > 0 {
		if _, err := w.Write(out); err == nil {
			_ = http.NewResponseController(w).Flush()
		}
	}
	cs.w, cs.holder = w, ctx
	if cs.resumed != nil {
		close(cs.resumed) // an earlier GET that resumed it, gone, lets go
	}
	cs.resumed = make(chan struct{})
	return cs.resumed, true, false
}
