//lint:file-ignore SA1019 logging is deprecated at 2026-07-28 (SEP-2577) but remains in the protocol during the deprecation window; agnara-go serves it on purpose.

package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callStream is the answer of a 2026-07-28 call the edge answers whose
// client may be told something before the answer (its progress): the
// event stream the SDK writes for such a call, written event by event as
// the SDK writes it. Until the call has told anything, nothing is
// written, and the answer is sent whole (writeFast), as for any call.
//
// A call's plan may report progress from any goroutine, also after the
// answer: what comes after the answer is dropped, as the SDK drops a
// notification for a request it has answered.
type callStream struct {
	w     http.ResponseWriter // nil while no request holds a session's stream (resume.go)
	sess  *sessionEvents      // a handshake-era session's stream; nil at 2026-07-28
	level mcp.LoggingLevel    // the log level the client asked for; "" for none

	mu      sync.Mutex
	started bool // an event is written: the status and headers are sent
	ended   bool // the answer is written, or is being written
	// resumed, on a session, is closed when the answer is written to a
	// GET that resumed the stream (resume), which waits for it; holder is
	// the context of the request whose response w is, while it lasts.
	resumed chan struct{}
	holder  context.Context
}

// send writes data, an encoded notification, as one event of the stream,
// and flushes it to the client.
func (cs *callStream) send(data []byte) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ended {
		return
	}
	var out []byte
	switch {
	case cs.sess != nil:
		// On a session: stored in its event store, with ids, primed.
		if !cs.started {
			out = cs.sess.open(cs.w, out)
		}
		out = cs.sess.event(out, data)
	default:
		if !cs.started {
			hd := cs.w.Header()
			hd.Set("Cache-Control", "no-cache, no-transform")
			hd.Set("Content-Type", "text/event-stream")
			hd.Set("Connection", "keep-alive")
		}
		out = appendEvent(nil, data)
	}
	cs.started = true
	if cs.w == nil {
		return // no request holds the stream: the event is stored, for a resume
	}
	if _, err := cs.w.Write(out); err == nil {
		_ = http.NewResponseController(cs.w).Flush()
	}
}

// end ends the stream to notifications and reports whether any was
// written: then the answer goes after them (writeTail), else it is the
// whole body (writeFast).
func (cs *callStream) end() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.ended = true
	return cs.started
}

// writeTail writes the answer to fc after the events already sent: as an
// event, or, for an error the revision maps to an HTTP status, as the SDK
// writes one whatever the stream holds before it: the plain JSON, its
// status and type too late to be sent.
func writeTail(w http.ResponseWriter, data []byte, status int) {
	if status != 0 {
		_, _ = w.Write(data)
		return
	}
	_, _ = w.Write(appendEvent(nil, data))
}

// appendEvent appends data, one message, to out as an event of a stream
// without ids, as the SDK frames one.
func appendEvent(out, data []byte) []byte {
	if out == nil {
		out = make([]byte, 0, len("event: message\ndata: \n\n")+len(data))
	}
	out = append(out, "event: message\ndata: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}

// edgeProgress reports a call's progress on its stream, as the SDK's
// ServerSession.NotifyProgress sends it.
type edgeProgress struct {
	cs    *callStream
	token any
}

func (p *edgeProgress) ReportProgress(_ context.Context, done, total float64, msg string) {
	// Encoded as the SDK encodes a notification's params: HTML left
	// unescaped.
	var params bytes.Buffer
	enc := json.NewEncoder(&params)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: done, Total: total, Message: msg}); err != nil {
		return // a token the decoder made cannot fail to encode
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/progress", Params: bytes.TrimSuffix(params.Bytes(), []byte("\n"))})
	if err != nil {
		return
	}
	p.cs.send(data)
}

// urlDone tells the client that the URL elicitation id is complete, as
// the SDK's ServerSession.NotifyElicitationComplete sends it with the
// call's context: on the call's stream.
func (cs *callStream) urlDone(id string) {
	var params bytes.Buffer
	enc := json.NewEncoder(&params)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&mcp.ElicitationCompleteParams{ElicitationID: id}); err != nil {
		return // a string cannot fail to encode
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/elicitation/complete", Params: bytes.TrimSuffix(params.Bytes(), []byte("\n"))})
	if err != nil {
		return
	}
	cs.send(data)
}

// edgeLog forwards a call's log records to its client, on its stream, as
// the SDK's mcp.LoggingHandler over the request's session forwards them at
// 2026-07-28 (ServerOptions.ForwardLogs): each record encoded by slog's
// JSON handler without its level, sent as a notifications/message when it
// is at or above the level the request's _meta asks for, and none when it
// asks for none.
type edgeLog struct {
	cs     *callStream
	level  mcp.LoggingLevel // the request's; "" sends nothing
	logger string
	mu     *sync.Mutex
	buf    *bytes.Buffer
	json   slog.Handler
}

func newEdgeLog(cs *callStream, level mcp.LoggingLevel, logger string) *edgeLog {
	buf := new(bytes.Buffer)
	return &edgeLog{cs: cs, level: level, logger: logger, mu: new(sync.Mutex), buf: buf,
		json: slog.NewJSONHandler(buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		}})}
}

func (l *edgeLog) Enabled(_ context.Context, level slog.Level) bool {
	return l.level != "" && level >= slogLevelOf(l.level)
}

func (l *edgeLog) WithAttrs(as []slog.Attr) slog.Handler {
	cp := *l
	cp.json = l.json.WithAttrs(as)
	return &cp
}

func (l *edgeLog) WithGroup(name string) slog.Handler {
	cp := *l
	cp.json = l.json.WithGroup(name)
	return &cp
}

func (l *edgeLog) Handle(ctx context.Context, r slog.Record) error {
	l.mu.Lock()
	l.buf.Reset()
	err := l.json.Handle(ctx, r)
	data := json.RawMessage(bytes.Clone(l.buf.Bytes()))
	l.mu.Unlock()
	if err != nil {
		return err
	}
	level := mcpLevelOf(r.Level)
	if l.level == "" || slogLevelOf(level) < slogLevelOf(l.level) {
		return nil
	}
	var params bytes.Buffer
	enc := json.NewEncoder(&params)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&mcp.LoggingMessageParams{Logger: l.logger, Level: level, Data: data}); err != nil {
		return err
	}
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/message", Params: bytes.TrimSuffix(params.Bytes(), []byte("\n"))})
	if err != nil {
		return err
	}
	l.cs.send(msg)
	return nil
}

// The protocol's log levels and slog's, as the SDK maps them (its Level
// constants).
var mcpLevels = []struct {
	mcp  mcp.LoggingLevel
	slog slog.Level
}{
	{"debug", mcp.LevelDebug}, {"info", mcp.LevelInfo}, {"notice", mcp.LevelNotice},
	{"warning", mcp.LevelWarning}, {"error", mcp.LevelError}, {"critical", mcp.LevelCritical},
	{"alert", mcp.LevelAlert}, {"emergency", mcp.LevelEmergency},
}

// slogLevelOf is the slog level of a protocol level; debug for one the
// protocol does not name, as the SDK reads it.
func slogLevelOf(l mcp.LoggingLevel) slog.Level {
	for _, m := range mcpLevels {
		if m.mcp == l {
			return m.slog
		}
	}
	return mcp.LevelDebug
}

// mcpLevelOf is the protocol level of a slog level; debug for one between
// the protocol's, as the SDK names it.
func mcpLevelOf(l slog.Level) mcp.LoggingLevel {
	for _, m := range mcpLevels {
		if m.slog == l {
			return m.mcp
		}
	}
	return "debug"
}
