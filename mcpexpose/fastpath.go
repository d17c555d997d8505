package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The fast path answers 2026-07-28 requests — a single tools/call or
// tools/list POSTed without a session — without the SDK's per-request
// session, goroutines and decoders, with the bytes the SDK path would
// send (ADR 68). At 2026-07-28 it owns every call it can read (ADR 74):
// tasks, and calls that report progress or forward logs, whose
// notifications it writes on the call's own stream (callstream.go). It
// takes a request only when every rule the SDK would check is known to
// pass; any request it is not sure of (another method, a notification, a
// batch, an unusual header, id or _meta, an escape in a string it reads)
// goes to the SDK unchanged. The tool's own work —
// the middleware, the plan, the projection — is the one the SDK path
// runs: only the transport and the JSON-RPC framing are the fast path's.
//
// The differential test (fastpath_test.go) and FuzzFastPath send the same
// requests both ways and require equal answers.

// FastPathRequests returns how many requests the handler has answered on
// its fast path (see HandlerOptions.DisableFastPath), subscriptions/listen
// streams its edge holds itself included: a way to see, in a test or a
// metric, that the traffic one expects to be fast is. A request is
// counted before its answer is written, so a client that has read the
// answer finds it counted.
func (h *Handler) FastPathRequests() int64 { return h.fastServed.Load() }

// answers is the edge's one decision: whether it answers rec itself, on
// the fast path, or hands it to the SDK. It answers a single 2026-07-28
// tools/call or tools/list that the strict scanner read whole, whose
// headers pass every check the SDK makes (as the SDK makes them), whose
// _meta the SDK would read as the fast path does, from a caller still
// there.
func (h *Handler) answers(r *http.Request, rec *record) bool {
	fc := rec.fast
	if !h.fast || fc == nil || !wire.ModernHeaders(r) {
		return false
	}
	if rec.ti != nil && len(strings.Fields(wire.Get(r.Header, wire.HeaderAuthorize))) != 2 {
		return false // the SDK's bearer middleware splits it so, and refuses it
	}
	if wire.Get(r.Header, wire.HeaderMethod) != fc.Method() || (!fc.List && wire.Get(r.Header, wire.HeaderName) != fc.Name) {
		return false // the SDK words the mismatch
	}
	meta, ok := wire.ModernMeta(fc.Meta)
	if !ok {
		return false
	}
	fc.Decoded = meta
	if fc.Responses != nil {
		// Decoded by the SDK's own type, with the SDK's decoder and
		// options: the answers read as they read on the SDK path.
		if _, err := segjson.Parse(fc.Responses, &fc.Answers, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return false // the SDK words the refusal
		}
	}
	if !fc.List && h.fastDecided != nil {
		h.fastDecided(r.Context())
	}
	// The caller has gone: the SDK hands no request whose context is done
	// to the server (jsonrpc2's handleAsync answers it with the context's
	// error, to no one), so nothing of the call runs — identity, audit,
	// the round's state, the plan. Leaving it to the SDK drops it so.
	return r.Context().Err() == nil
}

// answer answers rec, which the edge decided to answer itself (answers),
// with the bytes the SDK would send: the same list or call, framed as
// the SDK frames a 2026-07-28 answer (sent whole, writeStream).
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, rec *record) {
	fc := rec.fast
	s := h.srv
	var res mcp.Result
	var err error
	if fc.List {
		extra := &mcp.RequestExtra{TokenInfo: rec.ti, Header: r.Header}
		res, err = s.listToolsOf(r.Context(), rec, &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{Meta: fc.Decoded}, Extra: extra})
	} else {
		// The call's request, its parts and its route, in one allocation.
		c := &struct {
			extra  mcp.RequestExtra
			params mcp.CallToolParamsRaw
			req    mcp.CallToolRequest
			ec     edgeCaps
		}{}
		c.extra = mcp.RequestExtra{TokenInfo: rec.ti, Header: r.Header}
		c.params = mcp.CallToolParamsRaw{Meta: fc.Decoded, Name: fc.Name, Arguments: json.RawMessage(fc.Args), RequestState: fc.State, InputResponses: fc.Answers}
		c.req = mcp.CallToolRequest{Params: &c.params, Extra: &c.extra}
		c.ec = edgeCaps{h: h, req: &c.req, meta: fc.Meta}
		params, req, ec := &c.params, &c.req, &c.ec
		if params.GetProgressToken() != nil || s.opts.ForwardLogs {
			//lint:ignore SA1019 logging is deprecated at 2026-07-28 (SEP-2577) but served during the deprecation window
			level, _ := fc.Decoded[mcp.MetaKeyLogLevel].(string)
			//lint:ignore SA1019 logging is deprecated at 2026-07-28 (SEP-2577) but served during the deprecation window
			ec.stream = &callStream{w: w, level: mcp.LoggingLevel(level)}
		}
		res, err = s.callTool(r.Context(), rec, req, ec)
		res = finished(res)
		if ec.stream != nil && ec.stream.end() {
			h.fastServed.Add(1)
			buf := wire.GetBuf()
			defer wire.PutBuf(buf)
			status := h.srv.wire.Response(buf, fc, res, err, true)
			writeTail(w, buf.Bytes(), status)
			return
		}
	}
	// Counted before it is written: a client that has read its answer
	// finds it counted.
	h.fastServed.Add(1)
	h.writeFast(w, fc, res, err)
}

// finished does to a tool result what the SDK does before it leaves the
// server (Server.callTool): a complete result's null content is an empty
// list. (The check that a result holds content or input requests, never
// both, callTool makes on either route.)
func finished(res mcp.Result) mcp.Result {
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.Content == nil && r.InputRequests == nil {
		cp := *r
		cp.Content = []mcp.Content{}
		return &cp
	}
	return res
}

// writeFast writes the SDK's answer to fc, a 2026-07-28 request: in an
// event stream, or, for the errors the revision maps to an HTTP status, as
// a plain JSON body with that status.
func (h *Handler) writeFast(w http.ResponseWriter, fc *wire.Call, res mcp.Result, err error) {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	// The response is written inside its event, in the one buffer: an
	// error the revision gives a status goes without the event's framing.
	buf.WriteString(eventOpening)
	status := h.srv.wire.Response(buf, fc, res, err, true)
	if status != 0 {
		streamHeaders(w.Header(), "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(buf.Bytes()[len(eventOpening):])
		return
	}
	buf.WriteString("\n\n")
	streamHeaders(w.Header(), "text/event-stream")
	writeBody(w, buf.Bytes())
}

// streamHeaders sets the headers the SDK sets on a POST's answer
// (Cache-Control, Connection, and the Content-Type contentType) in hd, as
// Header.Set would, their values in one allocation where Set makes one
// each. Each value is a slice of its own (its capacity its length), so
// that appending to one leaves the others as they are.
func streamHeaders(hd http.Header, contentType string) {
	v := make([]string, 3)
	v[0], v[1], v[2] = "no-cache, no-transform", "keep-alive", contentType
	hd["Cache-Control"] = v[0:1:1]
	hd["Connection"] = v[1:2:2]
	hd["Content-Type"] = v[2:3:3]
}

// eventOpening opens the event of a 2026-07-28 answer, as appendEvent
// writes it.
const eventOpening = "event: message\ndata: "

// writeStream writes out, a whole event stream, as the one write of an
// answer whose length is known before its first byte: with a
// Content-Length, where the SDK sends the same bytes chunked and flushed
// event by event. The body is the SDK's, byte for byte; its framing saves
// the connection a write (the chunked body's end) and lets the client see
// the stream's end with its last event, and reuse the connection at once
// (ADR 68). net/http gives a body shorter than its chunking buffer its
// length itself, without allocating, when the handler returns without
// flushing (as http.ResponseWriter documents); a longer one is given it
// here.
func writeStream(w http.ResponseWriter, out []byte) {
	w.Header().Set("Content-Type", "text/event-stream")
	writeBody(w, out)
}

// writeBody is writeStream once the stream's headers are set.
func writeBody(w http.ResponseWriter, out []byte) {
	if len(out) >= autoLength {
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	_, _ = w.Write(out)
}

// autoLength is the shortest body net/http would send chunked when its
// handler sets no length: its chunking buffer's size.
const autoLength = 2048

// A client sends the same _meta with every call, and the SDK's reading of
// the capabilities in it (ServerRequest.ClientCapabilities) re-encodes and
// re-decodes them each time. A fast-path call reads them through its
// handler's memo instead: the capabilities the SDK read from the last
// _meta, by its bytes. The value is a function of those bytes alone (a
// fast-path request has no session to fall back on), so a hit is what the
// SDK would read; a miss asks the SDK.

// capsMemo is one _meta, as sent, and the capabilities the SDK reads from
// it. Neither is changed once stored; the capabilities are only read.
type capsMemo struct {
	meta []byte
	caps *mcp.ClientCapabilities
}

// maxMemoMeta bounds the _meta a memo keeps (an ordinary one is a few
// hundred bytes); a larger one is read by the SDK every time.
const maxMemoMeta = 4 << 10

// edgeCaps is what the edge gives a call it answers (callRoute, passed to
// server.callTool): its client capabilities, read as the SDK reads them
// and memoised, and its stream.
type edgeCaps struct {
	h    *Handler
	req  *mcp.CallToolRequest
	meta []byte // the request's _meta, as sent
	// stream is the answer's event stream, for a call with a progress
	// token, whose logs are forwarded, that may ask on a session or that
	// may be polled (callStream); nil otherwise.
	stream *callStream
}

// caps returns the client capabilities of e's request, as the SDK reads them.
func (e *edgeCaps) caps() *mcp.ClientCapabilities {
	if e.req.Session != nil {
		// A session's call: its capabilities are the session's, which
		// the memo, keyed by a request's own _meta, does not know.
		return e.req.ClientCapabilities()
	}
	if m := e.h.fastCaps.Load(); m != nil && bytes.Equal(m.meta, e.meta) {
		return m.caps
	}
	caps := e.req.ClientCapabilities()
	if len(e.meta) <= maxMemoMeta {
		e.h.fastCaps.Store(&capsMemo{meta: bytes.Clone(e.meta), caps: caps})
	}
	return caps
}

func (e *edgeCaps) supports(k execution.InputKind) bool { return supports(e.caps(), k) }

// progress reports the call's progress under token on its stream
// (edgeProgress), when it has one.
func (e *edgeCaps) progress(token any) execution.ProgressReporter {
	if e.stream == nil {
		return nil
	}
	return &edgeProgress{cs: e.stream, token: token}
}

// logs forwards the call's logs on its stream (edgeLog), when it has one.
func (e *edgeCaps) logs(logger string) slog.Handler {
	if e.stream == nil {
		return nil
	}
	return newEdgeLog(e.stream, e.stream.level, logger)
}

// urlDone tells the session's client that a URL elicitation is
// complete, on the call's stream, when it is a session's (edgeURLDone).
func (e *edgeCaps) urlDone(id string) bool {
	if e.stream == nil || e.stream.sess == nil {
		return false
	}
	e.stream.urlDone(id)
	return true
}

// asker asks a question on the call's stream, when it is a session's.
func (e *edgeCaps) asker() func(context.Context, *mcp.ServerSession, mcp.InputRequest) (mcp.InputResponse, error) {
	if e.stream == nil || e.stream.sess == nil {
		return nil
	}
	return e.stream.ask
}
