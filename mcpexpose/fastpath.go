package mcpexpose

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The fast path answers the commonest 2026-07-28 requests — a single
// tools/call or tools/list POSTed without a session — without the SDK's
// per-request session, goroutines and decoders, with the bytes the SDK
// path would send (ADR 35). It takes a request only when every rule the
// SDK would check is known to pass; any request it is not sure of
// (another method, a notification, a batch, a progress token, a task, an
// unusual header, id or _meta, an escape in a string it reads) goes to the
// SDK unchanged. The tool's own work —
// the middleware, the plan, the projection — is the one the SDK path
// runs: only the transport and the JSON-RPC framing are the fast path's.
//
// The differential test (fastpath_test.go) and FuzzFastPath send the same
// requests both ways and require equal answers.

// FastPathRequests returns how many requests the handler has answered on
// its fast path (see HandlerOptions.DisableFastPath): a way to see, in a
// test or a metric, that the traffic one expects to be fast is.
func (h *Handler) FastPathRequests() int64 { return h.fastServed.Load() }

// fastCall is a request the fast path answers, as read from its body.
type fastCall struct {
	id   []byte // the id token as sent: a string without escapes, or an integer
	list bool   // tools/list; otherwise tools/call
	name string // the tool called
	args []byte // its arguments object, as sent
	meta []byte // the params' _meta object, as sent
	// A retry's inputResponses object as sent, and its requestState.
	responses []byte
	state     string

	// What the decision (answers) decoded: the _meta the SDK would read,
	// and the retry's answers.
	metaMap mcp.Meta
	answers mcp.InputResponseMap
}

// Accepted SDK header values and wire constants.
const (
	fastMaxDepth   = 900 // the SDK refuses bodies nested past 1000 levels
	metaVersionKey = "io.modelcontextprotocol/protocolVersion"
	metaInfoKey    = "io.modelcontextprotocol/clientInfo"
	metaCapsKey    = "io.modelcontextprotocol/clientCapabilities"
)

// answers is the edge's one decision: whether it answers rec itself, on
// the fast path, or hands it to the SDK. It answers a single 2026-07-28
// tools/call or tools/list that the strict scanner read whole, whose
// headers pass every check the SDK makes (as the SDK makes them), whose
// _meta the SDK would read as the fast path does, of a tool that runs no
// task, from a caller still there.
func (h *Handler) answers(r *http.Request, rec *record) bool {
	fc := rec.fast
	if !h.fast || fc == nil || !fastHeaders(r) {
		return false
	}
	if rec.ti != nil && len(strings.Fields(r.Header.Get("Authorization"))) != 2 {
		return false // the SDK's bearer middleware splits it so, and refuses it
	}
	if r.Header.Get("Mcp-Method") != fc.method() || (!fc.list && r.Header.Get("Mcp-Name") != fc.name) {
		return false // the SDK words the mismatch
	}
	meta, ok := fastMeta(fc.meta)
	if !ok {
		return false
	}
	fc.metaMap = meta
	if fc.responses != nil {
		// Decoded by the SDK's own type, with the SDK's decoder and
		// options: the answers read as they read on the SDK path.
		if _, err := segjson.Parse(fc.responses, &fc.answers, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return false // the SDK words the refusal
		}
	}
	if !fc.list {
		// Tasks answer with their own result; the SDK path serves them.
		// The call runs on the snapshot this is decided on, rec's.
		if rec.tool != nil && rec.tool.task != TaskNever {
			return false
		}
		if h.fastDecided != nil {
			h.fastDecided(r.Context())
		}
	}
	// The caller has gone: the SDK hands no request whose context is done
	// to the server (jsonrpc2's handleAsync answers it with the context's
	// error, to no one), so nothing of the call runs — identity, audit,
	// the round's state, the plan. Leaving it to the SDK drops it so.
	return r.Context().Err() == nil
}

// answer answers rec, which the edge decided to answer itself (answers),
// with the bytes the SDK would send: the same list or call, framed as
// the SDK frames a 2026-07-28 answer.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, rec *record) {
	fc := rec.fast
	s := h.srv
	extra := &mcp.RequestExtra{TokenInfo: rec.ti, Header: r.Header}
	var res mcp.Result
	var err error
	if fc.list {
		res, err = s.listToolsOf(r.Context(), rec, &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{Meta: fc.metaMap}, Extra: extra})
	} else {
		params := &mcp.CallToolParamsRaw{Meta: fc.metaMap, Name: fc.name, Arguments: json.RawMessage(fc.args), RequestState: fc.state, InputResponses: fc.answers}
		res, err = s.callTool(r.Context(), rec, &mcp.CallToolRequest{Params: params, Extra: extra})
		res = finished(res)
	}
	h.writeFast(w, fc, res, err)
	h.fastServed.Add(1)
}

func (fc *fastCall) method() string {
	if fc.list {
		return "tools/list"
	}
	return "tools/call"
}

// fastHeaders reports whether r's headers pass every check the SDK's
// streamable handler makes before it reads the body, as the SDK makes
// them: no Last-Event-ID, a JSON body, and an Accept of both JSON and
// event streams. (The Host of a loopback listener, the SDK's first check,
// ServeHTTP has made before anything: see rebound.)
func fastHeaders(r *http.Request) bool {
	if r.Header.Get("Mcp-Protocol-Version") != modernVersion {
		return false
	}
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if ct := r.Header.Values("Content-Type"); len(ct) != 1 || !asciiFold(ct[0], "application/json") {
		return false
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	return jsonOK && streamOK
}

// rebound reports whether r came on a connection to a loopback address
// but names another host, which the SDK's streamable handler refuses with
// 403 (DNS rebinding protection): ServeHTTP refuses it first, the same way.
func rebound(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && isLoopback(local.String()) && !isLoopback(r.Host)
}

// isLoopback is the SDK's test of a loopback address or host.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// accepts reads Accept values as the SDK does: whether they accept JSON
// and event streams.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for value != "" {
			var token string
			token, value, _ = strings.Cut(value, ",")
			base, _, _ := strings.Cut(token, ";")
			base = strings.TrimSpace(base)
			switch {
			case asciiFold(base, "application/json"), asciiFold(base, "application/*"):
				jsonOK = true
			case asciiFold(base, "text/event-stream"), asciiFold(base, "text/*"):
				streamOK = true
			case base == "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// asciiFold reports whether s is lower, a lower-case ASCII string, in any
// ASCII case: strings.ToLower(s) == lower, without its allocation, and
// without the Unicode folds of strings.EqualFold ("ſ" is not "s").
func asciiFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// parse reads body as a single JSON-RPC request the edge answers: an
// object of exactly "jsonrpc": "2.0", an "id", a "method" of tools/call or
// tools/list, and "params", each once; params of a "name", optionally an
// "arguments" object, and a "_meta" object (tools/call), or of a "_meta"
// object alone (tools/list). At 2026-07-28 (modern) the _meta is required,
// and a retry's "inputResponses" object and "requestState" string may
// follow; in the handshake era the _meta is optional, and a tools/list may
// come without params. Anything else reports false.
func (fc *fastCall) parse(body []byte, modern bool) bool {
	var p scanner
	p.b = body
	var version, method string
	var params []byte
	var seen [4]bool
	ok := p.object(func(key []byte) bool {
		var i int
		switch string(key) {
		case "jsonrpc":
			i, version = 0, p.plainString()
		case "id":
			i = 1
			fc.id = p.id()
			if fc.id == nil {
				return false
			}
		case "method":
			i, method = 2, p.plainString()
		case "params":
			i = 3
			params = p.rawObject()
			if params == nil {
				return false
			}
		default:
			return false
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		return !p.bad
	})
	if !ok || !p.end() || !seen[1] || version != "2.0" || p.depthMax > fastMaxDepth {
		return false
	}
	switch method {
	case "tools/list":
		fc.list = true
	case "tools/call":
	default:
		return false
	}
	if !seen[3] {
		return fc.list && !modern // a handshake-era tools/list may have no params
	}
	var q scanner
	q.b = params
	var named, stated bool
	ok = q.object(func(key []byte) bool {
		switch string(key) {
		case "_meta":
			if fc.meta != nil {
				return false
			}
			fc.meta = q.rawObject()
			return fc.meta != nil
		case "name":
			if fc.list || named {
				return false
			}
			named = true
			fc.name = q.plainString()
			return !q.bad && fc.name != ""
		case "arguments":
			if fc.list || fc.args != nil {
				return false
			}
			fc.args = q.rawObject()
			return fc.args != nil
		case "inputResponses":
			if fc.list || !modern || fc.responses != nil {
				return false
			}
			fc.responses = q.rawObject()
			return fc.responses != nil
		case "requestState":
			if fc.list || !modern || stated {
				return false
			}
			stated = true
			fc.state = q.plainString()
			return !q.bad
		}
		return false // cursor, task, anything else: the SDK's
	})
	if !ok || !q.end() || (modern && fc.meta == nil) {
		return false
	}
	return fc.list || named
}

// fastMeta decodes a request's _meta as the SDK decodes it, when it holds
// exactly the protocol version of the fast path's revision, valid client
// capabilities and optionally a valid client info, and nothing else (no
// progress token, no log level). It holds no number and no null, which
// the SDK's own reading would decode differently from its checks.
func fastMeta(raw []byte) (mcp.Meta, bool) {
	var p scanner
	p.b = raw
	var caps, info []byte
	var version bool
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case metaVersionKey:
			if version {
				return false
			}
			version = p.plainString() == modernVersion
			return version
		case metaCapsKey:
			if caps != nil {
				return false
			}
			caps = p.rawObject()
			return caps != nil
		case metaInfoKey:
			if info != nil {
				return false
			}
			info = p.rawObject()
			return info != nil
		}
		return false
	})
	if !ok || !p.end() || !version || caps == nil || !noNumbersOrNulls(raw) {
		return nil, false
	}
	// What the SDK requires of them (decodeMetaValue): that they decode
	// into its types. clientCapabilitiesV2 is the SDK's ClientCapabilities
	// with Roots a pointer; this is that shape.
	var c struct {
		mcp.ClientCapabilities
		//lint:ignore SA1019 roots are deprecated at 2026-07-28 but still decoded: the client may declare them
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if _, err := segjson.Parse(caps, &c, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, false
	}
	if info != nil {
		var impl mcp.Implementation
		if _, err := segjson.Parse(info, &impl, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return nil, false
		}
	}
	// The map the SDK would decode: built directly when it holds only
	// plain strings, booleans and objects, which decode to themselves.
	meta := make(mcp.Meta, 3)
	meta[metaVersionKey] = modernVersion
	for key, b := range map[string][]byte{metaCapsKey: caps, metaInfoKey: info} {
		if b == nil {
			continue
		}
		q := scanner{b: b}
		v, ok := q.plainValue()
		if !ok || !q.end() {
			meta = nil
			if _, err := segjson.Parse(raw, &meta, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
				return nil, false
			}
			return meta, true
		}
		meta[key] = v
	}
	return meta, true
}

// plainValue decodes an object, a string or a boolean the way the SDK's
// decoder decodes it into an any, when its strings are plain printable
// ASCII: anything else reports false.
func (p *scanner) plainValue() (any, bool) {
	p.ws()
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		s := p.stringBytes()
		return string(s), s != nil
	case c == 't' && bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return true, true
	case c == 'f' && bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return false, true
	case c == '{':
		m := map[string]any{}
		ok := p.object(func(key []byte) bool {
			v, ok := p.plainValue()
			m[string(key)] = v
			return ok
		})
		return m, ok
	}
	return nil, false
}

// noNumbersOrNulls reports whether the JSON document b holds no number and
// no null outside its strings.
func noNumbersOrNulls(b []byte) bool {
	in, esc := false, false
	for _, c := range b {
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == '-' || (c >= '0' && c <= '9') || c == 'n':
			return false
		}
	}
	return true
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

var (
	errMethodNotFound = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}
	errNilResult      = errors.New("nil result")
)

// fastBuf is a pooled response buffer.
var fastBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBuf returns a response buffer to the pool, unless it grew large.
func putBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		buf.Reset()
		fastBufs.Put(buf)
	}
}

// encodeResponse writes the JSON-RPC response to fc as the SDK's JSON-RPC
// layer writes it: res, or err as that layer words it; with the
// annotations of a 2026-07-28 result when modern. It returns the HTTP
// status the revision gives the error, or 0 for an answer sent in the
// stream (always, in the handshake era).
func (s *server) encodeResponse(buf *bytes.Buffer, fc *fastCall, res mcp.Result, err error, modern bool) int {
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(fc.id)
	if err == nil {
		buf.WriteString(`,"result":`)
		if res == nil {
			err = errNilResult
		} else if err = s.encodeResult(buf, res, modern); err != nil {
			buf.Reset()
			buf.WriteString(`{"jsonrpc":"2.0","id":`)
			buf.Write(fc.id)
		}
	}
	status := 0
	if err != nil {
		if errors.Is(err, errMethodNotFound) {
			err = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + strconv.Quote(fc.method())}
		}
		if modern {
			status = errorStatus(err)
		}
		buf.WriteString(`,"error":`)
		writeWireError(buf, err)
	}
	buf.WriteByte('}')
	return status
}

// writeFast writes the SDK's answer to fc, a 2026-07-28 request: in an
// event stream, or, for the errors the revision maps to an HTTP status, as
// a plain JSON body with that status.
func (h *Handler) writeFast(w http.ResponseWriter, fc *fastCall, res mcp.Result, err error) {
	buf := fastBufs.Get().(*bytes.Buffer)
	defer putBuf(buf)
	status := h.srv.encodeResponse(buf, fc, res, err, true)
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Connection", "keep-alive")
	if status != 0 {
		hd.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(buf.Bytes())
		return
	}
	hd.Set("Content-Type", "text/event-stream")
	out := make([]byte, 0, len("event: message\ndata: \n\n")+buf.Len())
	out = append(out, "event: message\ndata: "...)
	out = append(out, buf.Bytes()...)
	out = append(out, "\n\n"...)
	_, _ = w.Write(out)
	_ = http.NewResponseController(w).Flush()
}

// errorStatus is the HTTP status the revision gives a JSON-RPC error
// (SEP-2575), or 0 for an error sent in the stream.
func errorStatus(err error) int {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return 0
	}
	switch je.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}

// writeWireError encodes err as the SDK's JSON-RPC layer does: a
// *jsonrpc.Error as it is, any other error as its text with the code of
// the *jsonrpc.Error it wraps, or 0.
func writeWireError(buf *bytes.Buffer, err error) {
	we, ok := err.(*jsonrpc.Error)
	if !ok {
		we = &jsonrpc.Error{Message: err.Error()}
		var wrapped *jsonrpc.Error
		if errors.As(err, &wrapped) {
			we.Code = wrapped.Code
		}
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(we)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// encodeResult writes res as the SDK's server writes a result. A
// 2026-07-28 (modern) one it annotates: the server's identity in _meta
// (unless the result names one), a list result marked complete, a tool
// result marked complete or input_required. A handshake-era one it writes
// as it is.
func (s *server) encodeResult(buf *bytes.Buffer, res mcp.Result, modern bool) error {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		cp := *r
		if modern {
			cp.ResultType = "complete"
			cp.Meta = s.withServerInfo(r.Meta)
		}
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&cp); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
		return nil
	case *mcp.CallToolResult:
		if s.encodeTextResult(buf, r, modern) {
			return nil
		}
		if !modern {
			b, err := json.Marshal(r) // no result type: the SDK sets none
			buf.Write(b)
			return err
		}
		return s.encodeCallResult(buf, r)
	}
	return errors.New("mcpexpose: unexpected result type on the fast path")
}

// encodeCallResult writes any tool result as encodeResult does, through
// the SDK's own encoding of the result.
func (s *server) encodeCallResult(buf *bytes.Buffer, r *mcp.CallToolResult) error {
	cp := *r
	cp.Meta = s.withServerInfo(r.Meta)
	cp.InputRequests = nil
	b, err := json.Marshal(&cp)
	if err != nil {
		return err
	}
	// CallToolResult's own encoding puts its result type, then its
	// input requests, after every other field.
	buf.Write(b[:len(b)-1])
	if len(b) > 2 {
		buf.WriteByte(',')
	}
	if r.InputRequests == nil {
		buf.WriteString(`"resultType":"complete"}`)
		return nil
	}
	ir, err := json.Marshal(r.InputRequests)
	if err != nil {
		return err
	}
	buf.WriteString(`"resultType":"input_required","inputRequests":`)
	buf.Write(ir)
	buf.WriteByte('}')
	return nil
}

// encodeTextResult writes r as encodeResult would when r is what the
// projection makes of most outcomes — text blocks without metadata,
// structured content as raw JSON, no input requests — without encoding
// the result struct and each block through their MarshalJSON methods,
// and reports whether it did. TestEncodeTextResult holds it to the
// general encoding, and to the SDK's fields.
func (s *server) encodeTextResult(buf *bytes.Buffer, r *mcp.CallToolResult, modern bool) bool {
	if len(r.Meta) != 0 || r.InputRequests != nil || r.RequestState != "" {
		return false
	}
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); !ok || tc.Meta != nil || tc.Annotations != nil {
			return false
		}
	}
	var structured []byte
	switch sc := r.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if sc == nil {
			return false
		}
		var err error
		if structured, err = json.Marshal(sc); err != nil {
			return false
		}
	default:
		return false
	}
	start := buf.Len()
	if modern {
		buf.Write(s.resultPrefix)
	} else {
		buf.WriteByte('{')
	}
	buf.WriteString(`"content":[`)
	for i, c := range r.Content {
		if i > 0 {
			buf.WriteByte(',')
		}
		text, err := json.Marshal(c.(*mcp.TextContent).Text)
		if err != nil {
			buf.Truncate(start)
			return false
		}
		buf.WriteString(`{"type":"text","text":`)
		buf.Write(text)
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	if structured != nil {
		buf.WriteString(`,"structuredContent":`)
		buf.Write(structured)
	}
	if r.IsError {
		buf.WriteString(`,"isError":true`)
	}
	if modern {
		buf.WriteString(`,"resultType":"complete"`)
	}
	buf.WriteByte('}')
	return true
}

// withServerInfo returns m with the server's identity, as the SDK
// annotates every 2026-07-28 result, without changing m.
func (s *server) withServerInfo(m mcp.Meta) mcp.Meta {
	if _, ok := m[mcp.MetaKeyServerInfo]; ok {
		return m
	}
	out := make(mcp.Meta, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[mcp.MetaKeyServerInfo] = s.impl
	return out
}

// scanner reads the JSON values the fast path needs from a body already
// known to be valid JSON, and gives up (bad) on anything it does not
// read exactly as the SDK's decoder would.
type scanner struct {
	b        []byte
	i        int
	bad      bool
	depthMax int
}

func (p *scanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace is left.
func (p *scanner) end() bool {
	p.ws()
	return !p.bad && p.i == len(p.b)
}

// object reads an object, calling field with each key (without escapes)
// positioned at its value; field reads the value and reports whether to go
// on.
func (p *scanner) object(field func(key []byte) bool) bool {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.ws()
		key := p.stringBytes()
		if key == nil || p.bad {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		if !field(key) || p.bad {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// stringBytes reads a string of printable ASCII without escapes and
// returns its contents (non-nil, possibly empty), or nil.
func (p *scanner) stringBytes() []byte {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		p.bad = true
		return nil
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			p.i = j + 1
			return p.b[start:j:j]
		}
		if c == '\\' || c < 0x20 || c > 0x7e {
			p.bad = true
			return nil
		}
	}
	p.bad = true
	return nil
}

// plainString reads a string of printable ASCII without escapes.
func (p *scanner) plainString() string {
	s := p.stringBytes()
	if s == nil {
		return ""
	}
	return string(s)
}

// id reads a request id the SDK echoes byte for byte: a plain string, or
// an integer of at most 15 digits (exact in the float64 the SDK decodes
// it into), not -0.
func (p *scanner) id() []byte {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '"' {
		if p.stringBytes() == nil {
			return nil
		}
		return p.b[start:p.i:p.i]
	}
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	n := j - digits
	if n == 0 || n > 15 || (n > 1 && p.b[digits] == '0') {
		return nil
	}
	if j < len(p.b) && (p.b[j] == '.' || p.b[j] == 'e' || p.b[j] == 'E') {
		return nil
	}
	if digits > start && n == 1 && p.b[digits] == '0' {
		return nil // -0 is echoed as 0
	}
	p.i = j
	return p.b[start:j:j]
}

// skipValue skips any value, which the body's validity guarantees is
// well formed.
func (p *scanner) skipValue() bool {
	p.ws()
	if p.i >= len(p.b) {
		return false
	}
	switch p.b[p.i] {
	case '{', '[':
		return p.rawComposite() != nil
	case '"':
		p.i++
		for p.i < len(p.b) && p.b[p.i] != '"' {
			if p.b[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
		return p.i <= len(p.b)
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		p.i++
	}
	return true
}

// rawObject skips an object and returns its bytes, or nil when the value
// is not an object.
func (p *scanner) rawObject() []byte {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil
	}
	return p.rawComposite()
}

// rawComposite skips the object or array at p.i and returns its bytes.
func (p *scanner) rawComposite() []byte {
	start := p.i
	depth := 0
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch c {
		case '"':
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			p.i++
		case '{', '[':
			depth++
			if depth > p.depthMax {
				p.depthMax = depth
			}
		case '}', ']':
			depth--
			if depth == 0 {
				if p.i > len(p.b) {
					return nil
				}
				return p.b[start:p.i:p.i]
			}
		}
	}
	p.bad = true
	return nil
}
