package mcpimport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path: the client half's commonest call, a 2026-07-28 tools/call
// over streamable HTTP, posted and read here instead of through the SDK
// client's connection (ADR 44). The SDK client builds the request as ever
// (ClientSession.CallTool injects the per-request _meta); a sending
// middleware then writes it with one pooled buffer, posts it with the
// transport's own HTTP client, and reads the answer into the SDK's own
// types with the decoder the SDK decodes them with (segmentio's, in
// wire.go's shapes), without the SDK's per-call JSON-RPC call, response
// goroutine and 32 KiB streaming decoders. Everything it is not sure of goes
// to the SDK unchanged, and where it answers, it answers as the SDK client
// would (fastcall_test.go proves it against the SDK client, call by call,
// and fuzzes it with upstream answers).
//
// It takes a call when, before anything is sent:
//   - the session negotiated 2026-07-28 over an mcp.StreamableClientTransport
//     without an OAuthHandler and without stream resumption (MaxRetries < 0),
//     and is not over; MCPGODEBUG is not set;
//   - no list result of the session was cacheable (ttlMs), so that no SDK
//     cache can hold what a notification in a call's stream would clear;
//   - the call is a tools/call of arguments as JSON (json.RawMessage), not a
//     retry (no inputResponses, requestState), not a task call, and of a
//     tool whose listed input schema has no x-mcp-header annotation (the SDK
//     would add Mcp-Param headers).
//
// An answer that asks for input (MRTR) is asked again through the SDK
// client, whose multi-round-trip handling then does what it does: a
// 2026-07-28 server re-runs a call from the start on every round, so one
// more first round is one the protocol already allows.
type fastCaller struct {
	url      string
	client   *http.Client
	maxEvent int  // bound of one server-sent event; <= 0: none
	mrtr     bool // the SDK client handles input requests itself
	notify   notifiers

	cs     atomic.Pointer[mcp.ClientSession] // nil: every call goes to the SDK
	off    atomic.Bool                       // a cacheable list was seen
	ids    atomic.Int64
	meta   atomic.Pointer[metaBytes]
	header sync.Map // names of tools listed with an x-mcp-header annotation

	// Calls answered here, handed to the SDK, and asked again through it
	// (an answer asking for input), and streams left open after their
	// answer (drained in the background), for tests.
	taken, passed, resent, drained atomic.Int64
}

// newFastCaller returns the fast path for a session over transport whose
// client has the options co, or nil when the transport or options rule it
// out. It takes calls once armed with the connected session.
func newFastCaller(transport mcp.Transport, co *mcp.ClientOptions, disabled bool) *fastCaller {
	st, ok := transport.(*mcp.StreamableClientTransport)
	// MCPGODEBUG switches SDK behaviours back to older ones, process-wide;
	// the fast path copies only today's.
	if disabled || !ok || st.OAuthHandler != nil || st.MaxRetries >= 0 || os.Getenv("MCPGODEBUG") != "" {
		return nil
	}
	hc := st.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	f := &fastCaller{
		url:    st.Endpoint,
		client: hc,
		// As the SDK v1.8.0's streamable connection reads it: unresolved,
		// so that 0 means no bound (its documentation says 0 selects
		// mcp.DefaultMaxEventSize, which only its SSE transport does).
		maxEvent: st.MaxEventSize,
		mrtr:     co.MultiRoundTrip == nil || !co.MultiRoundTrip.Disabled,
		notify:   notifiersOf(co),
	}
	// The call ids are the fast path's own, not the SDK's sequence: they
	// start at a random point in [2^40, 2^41), exact in any JSON number
	// reader, so that an answer with an id the server made up (a small
	// one, say), which the SDK client would wait past, meets a call's id
	// by no more than chance (FuzzFastCallAnswers found one that met the
	// first call's id, 1).
	f.ids.Store(1<<40 + rand.Int64N(1<<40))
	return f
}

// arm lets the fast path take calls of cs once it negotiated 2026-07-28,
// until the session ends; it reports whether it did.
func (f *fastCaller) arm(cs *mcp.ClientSession) bool {
	if cs.InitializeResult().ProtocolVersion != mcpversion.Modern {
		return false
	}
	f.cs.Store(cs)
	go func() {
		_ = cs.Wait() // the session's end is its host's to report
		f.cs.Store(nil)
	}()
	return true
}

// middleware is the client's outermost sending middleware.
func (f *fastCaller) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if cs := f.cs.Load(); cs != nil && !f.off.Load() {
				if p, ok := req.GetParams().(*mcp.CallToolParams); ok {
					if args, ok := f.takes(ctx, p); ok {
						return f.call(ctx, cs, p, args, req, next)
					}
				}
			}
			f.passed.Add(1)
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err == nil {
			f.note(res)
		}
		return res, err
	}
}

// takes reports whether the fast path takes the call p, and its arguments.
func (f *fastCaller) takes(ctx context.Context, p *mcp.CallToolParams) ([]byte, bool) {
	args, ok := p.Arguments.(jsonRaw)
	if !ok || len(args) == 0 || p.InputResponses != nil || p.RequestState != "" || captureFrom(ctx) != nil {
		return nil, false
	}
	if _, annotated := f.header.Load(p.Name); annotated {
		return nil, false
	}
	return args, true
}

// note records what a listing tells the fast path: tools whose input schema
// names request headers, and whether the server lets results be cached.
func (f *fastCaller) note(res mcp.Result) {
	if c, ok := res.(interface{ GetTTLMs() int }); ok && c.GetTTLMs() > 0 {
		f.off.Store(true)
	}
	lr, ok := res.(*mcp.ListToolsResult)
	if !ok {
		return
	}
	for _, t := range lr.Tools {
		if t == nil {
			continue
		}
		b, err := jsonMarshal(t.InputSchema)
		if err != nil || bytes.Contains(b, []byte(`"x-mcp-header"`)) {
			f.header.Store(t.Name, struct{}{})
		}
	}
}

// call posts p and reads its answer.
func (f *fastCaller) call(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams, args []byte, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	id := f.ids.Add(1)
	body, ok := f.encode(id, p, args)
	if !ok {
		f.passed.Add(1)
		return next(ctx, "tools/call", req) // the SDK fails it as it fails it
	}
	f.taken.Add(1)
	// The request lives until its answer is read; the caller's end ends
	// it, but not the reading of the rest of a stream once the answer is in,
	// which keeps the connection for the next call.
	rctx, rcancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, rcancel)
	hreq, err := http.NewRequestWithContext(rctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		rcancel()
		return nil, callErr(ctx, fmt.Errorf("sending %q: %w", "tools/call", err))
	}
	h := hreq.Header // canonical names; the constant values shared, as net/http only reads a request's
	h["Content-Type"] = headerJSON
	h["Accept"] = headerAccept
	h["Mcp-Protocol-Version"] = headerModern
	h["Mcp-Method"] = headerToolsCall
	h["Mcp-Name"] = []string{p.Name}
	resp, err := f.client.Do(hreq)
	if err != nil {
		rcancel()
		return nil, callErr(ctx, fmt.Errorf("sending %q: %w", "tools/call", err))
	}
	a := f.read(rctx, cs, resp, id)
	if stop() && a.stream {
		f.drained.Add(1)
		go drain(resp.Body, rcancel)
	} else {
		resp.Body.Close()
		rcancel()
	}
	if a.wait {
		// The SDK client would go on waiting for an answer that cannot come.
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if a.err != nil {
		return nil, callErr(ctx, a.err)
	}
	if a.res.InputRequests != nil && f.mrtr {
		f.taken.Add(-1)
		f.passed.Add(1)
		f.resent.Add(1)
		return next(ctx, "tools/call", req)
	}
	return a.res, nil
}

// The constant header values of a call, as the SDK sets them.
var (
	headerJSON      = []string{"application/json"}
	headerAccept    = []string{"application/json, text/event-stream"}
	headerModern    = []string{mcpversion.Modern}
	headerToolsCall = []string{"tools/call"}
)

// drainFor bounds the reading of a stream's rest after its answer: a
// server that keeps it open loses the connection, not the call.
const drainFor = 5 * time.Second

func drain(body io.ReadCloser, cancel context.CancelFunc) {
	t := time.AfterFunc(drainFor, cancel)
	_, _ = io.Copy(io.Discard, body)
	t.Stop()
	body.Close()
	cancel()
}

// callErr words err as the SDK's call does: the caller's context error when
// it is done, else the error of the call.
func callErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("calling %q: %w", "tools/call", err)
}

// answer is what the fast path read of one call's HTTP response.
type answer struct {
	res    *mcp.CallToolResult
	err    error
	wait   bool // no answer can come: the SDK client would wait for the caller's end
	stream bool // the body is a stream whose rest is still to be read
}

// errRejected is the SDK's jsonrpc2.ErrRejected (internal to the SDK), the
// JSON-RPC error its transport wraps a transient status in: a caller tells
// it from a broken connection by its being a *jsonrpc.Error.
var errRejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// transient are the statuses the SDK client reports as a rejected request
// without reading a JSON-RPC error from the body.
func transient(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}

// read reads the response to the call with the given id as the SDK
// client's streamable connection and JSON-RPC layer read it.
func (f *fastCaller) read(ctx context.Context, cs *mcp.ClientSession, resp *http.Response, id int64) answer {
	switch {
	case transient(resp.StatusCode):
		return answer{err: fmt.Errorf("%w: %s", errRejected, http.StatusText(resp.StatusCode))}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		buf := getBuf()
		defer putBuf(buf)
		_, _ = buf.ReadFrom(resp.Body)
		if msg, err := decodeMessage(buf.Bytes()); err == nil && msg.response && msg.wireErr != nil {
			return answer{err: fmt.Errorf("%w: %s", msg.wireErr, http.StatusText(resp.StatusCode))}
		}
		return answer{err: errors.New(http.StatusText(resp.StatusCode))}
	}
	ct, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		ct = ""
	}
	switch ct {
	case "application/json":
		buf := getBuf()
		defer putBuf(buf)
		if _, err := buf.ReadFrom(resp.Body); err != nil {
			return answer{err: fmt.Errorf("failed to read body: %v", err)}
		}
		msg, err := decodeMessage(buf.Bytes())
		if err != nil {
			return answer{err: fmt.Errorf("failed to decode response: %v", err)}
		}
		if a, done := f.take(ctx, cs, msg, id); done {
			return a
		}
		return answer{wait: true}
	case "text/event-stream":
		return f.readStream(ctx, cs, resp.Body, id)
	}
	return answer{err: fmt.Errorf("unsupported content type %q", ct)}
}

// readStream reads server-sent events up to the answer to the call.
func (f *fastCaller) readStream(ctx context.Context, cs *mcp.ClientSession, body io.Reader, id int64) answer {
	sc := newEventScanner(body, f.maxEvent)
	defer sc.release()
	for {
		data, err := sc.next()
		switch {
		case errors.Is(err, io.EOF):
			// The SDK reconnects only to resume a stream with event ids, which
			// it is not asked to (MaxRetries < 0): either way the call fails.
			return answer{err: errors.New("request terminated without response")}
		case err != nil && ctx.Err() != nil:
			return answer{err: ctx.Err()}
		case err != nil && !sc.malformed:
			return answer{err: errors.New("request terminated without response")}
		case err != nil:
			return answer{err: err}
		}
		msg, err := decodeMessage(data)
		if err != nil {
			return answer{err: fmt.Errorf("failed to decode event: %v", err)}
		}
		if a, done := f.take(ctx, cs, msg, id); done {
			// A stream sent whole (an agnara-go server's, with its length)
			// has ended with its answer: nothing is left to drain.
			a.stream = !sc.ended()
			return a
		}
	}
}

// take handles one message of an answer: the response to the call ends it
// (done); a notification reaches the session's handlers, as the SDK
// client's would; a response to another id and a request of the server are
// passed over (a 2026-07-28 server has no session to receive an answer on).
func (f *fastCaller) take(ctx context.Context, cs *mcp.ClientSession, msg message, id int64) (answer, bool) {
	if !msg.response {
		if !msg.call {
			f.notify.deliver(context.WithoutCancel(ctx), cs, msg.method, msg.params)
		}
		return answer{}, false
	}
	if !msg.idIsInt || msg.intID != id {
		return answer{}, false
	}
	if msg.wireErr != nil {
		return answer{err: msg.wireErr}, true
	}
	res, err := decodeResult(msg.result)
	if err != nil {
		return answer{err: err}, true
	}
	return answer{res: res}, true
}

// metaBytes is the encoded _meta of the last call, with the values it was
// encoded from: the SDK injects the same protocol version, client info and
// capabilities into every call of a session.
type metaBytes struct {
	info, caps any
	b          []byte
}

// metaFor returns the encoded meta m, from the last call's when it holds
// the same values.
func (f *fastCaller) metaFor(m mcp.Meta) ([]byte, bool) {
	info, caps := m[mcp.MetaKeyClientInfo], m[mcp.MetaKeyClientCapabilities]
	usual := len(m) == 3 && m[mcp.MetaKeyProtocolVersion] == mcpversion.Modern && info != nil && caps != nil
	if c := f.meta.Load(); usual && c != nil && reflect.DeepEqual(c.info, info) && reflect.DeepEqual(c.caps, caps) {
		return c.b, true
	}
	b, err := jsonMarshal(m)
	if err != nil {
		return nil, false
	}
	if usual {
		f.meta.Store(&metaBytes{info: info, caps: caps, b: b})
	}
	return b, true
}

// encode returns the request's body as the SDK's JSON-RPC layer writes it,
// or false when the SDK would fail to write it.
func (f *fastCaller) encode(id int64, p *mcp.CallToolParams, args []byte) ([]byte, bool) {
	buf := getBuf()
	defer putBuf(buf)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(appendInt(buf.AvailableBuffer(), id))
	buf.WriteString(`,"method":"tools/call","params":{`)
	if len(p.Meta) > 0 {
		meta, ok := f.metaFor(p.Meta)
		if !ok {
			return nil, false
		}
		buf.WriteString(`"_meta":`)
		buf.Write(meta)
		buf.WriteByte(',')
	}
	buf.WriteString(`"name":`)
	if !writeString(buf, p.Name) {
		return nil, false
	}
	buf.WriteString(`,"arguments":`)
	if !compact(buf, args) {
		return nil, false
	}
	buf.WriteString(`}}`)
	return bytes.Clone(buf.Bytes()), true
}

// fastStats reports how many calls the fast path answered and how many it
// handed to the SDK, for tests.
func (s *Session) fastStats() (taken, passed int64) {
	if s.fast == nil {
		return 0, 0
	}
	return s.fast.taken.Load(), s.fast.passed.Load()
}
