package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// Call is a single tools/call or tools/list the edge answers itself, as
// the strict scanner read it from its body (Read).
type Call struct {
	ID   []byte // the id token as sent: a string without escapes, or an integer
	List bool   // tools/list; otherwise tools/call
	Name string // the tool called
	Args []byte // its arguments object, as sent
	Meta []byte // the params' _meta object, as sent; nil when absent
	// A 2026-07-28 retry's inputResponses object as sent, and its
	// requestState.
	Responses []byte
	State     string

	// What the edge's decision decoded of it: the _meta as the SDK reads
	// it, and the retry's answers.
	Decoded mcp.Meta
	Answers mcp.InputResponseMap
}

// Accepted SDK header values and wire constants.
const (
	fastMaxDepth     = 900 // the SDK refuses bodies nested past 1000 levels
	metaVersionKey   = "io.modelcontextprotocol/protocolVersion"
	metaInfoKey      = "io.modelcontextprotocol/clientInfo"
	metaCapsKey      = "io.modelcontextprotocol/clientCapabilities"
	progressTokenKey = "progressToken"
	metaLogLevelKey  = "io.modelcontextprotocol/logLevel"
)

// Method is the call's JSON-RPC method.
func (fc *Call) Method() string {
	if fc.List {
		return "tools/list"
	}
	return "tools/call"
}

// Read reads body as a single JSON-RPC request the edge answers: an
// object of exactly "jsonrpc": "2.0", an "id", a "method" of tools/call or
// tools/list, and "params", each once; params of a "name", optionally an
// "arguments" object, and a "_meta" object (tools/call), or of a "_meta"
// object alone (tools/list). At 2026-07-28 (modern) the _meta is required,
// and a retry's "inputResponses" object and "requestState" string may
// follow; in the handshake era the _meta is optional, and a tools/list may
// come without params. Anything else reports false.
//
// Everything Read takes it has checked is valid JSON (rawComposite checks
// the objects it skips): a body it reads is one segmentio's Valid accepts,
// which the edge then need not run over it again.
func (fc *Call) Read(body []byte, modern bool) bool {
	var p scanner
	p.b = body
	var version, method string
	var seen [4]bool
	var named, stated bool
	ok := p.object(func(key []byte) bool {
		var i int
		switch string(key) {
		case "jsonrpc":
			i = 0
		case "id":
			i = 1
		case "method":
			i = 2
		case "params":
			i = 3
		default:
			return false
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		switch i {
		case 0:
			version = p.plainString()
		case 1:
			fc.ID = p.id()
			if fc.ID == nil {
				return false
			}
		case 2:
			method = p.plainString()
		case 3:
			// Read in place: what params may hold depends on the method,
			// which may come after it, and is checked once it is known.
			if !fc.readParams(&p, modern, &named, &stated) {
				return false
			}
		}
		return !p.bad
	})
	// The composites inside params are one level deeper than params.
	if !ok || !p.end() || !seen[1] || version != "2.0" || p.depthMax+1 > fastMaxDepth {
		return false
	}
	switch method {
	case "tools/list":
		fc.List = true
	case "tools/call":
	default:
		return false
	}
	if !seen[3] {
		return fc.List && !modern // a handshake-era tools/list may have no params
	}
	if fc.List && (named || fc.Args != nil || fc.Responses != nil || stated) {
		return false // a tools/list has only a _meta
	}
	if modern && fc.Meta == nil {
		return false
	}
	return fc.List || named
}

// readParams reads the params object at p: a "_meta", "name",
// "arguments", and at 2026-07-28 (modern) "inputResponses" and
// "requestState", each at most once; named and stated report the name
// and the request state. Anything else (cursor, task) reports false: the
// SDK's.
func (fc *Call) readParams(p *scanner, modern bool, named, stated *bool) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "_meta":
			if fc.Meta != nil {
				return false
			}
			fc.Meta = p.rawObject()
			return fc.Meta != nil
		case "name":
			if *named {
				return false
			}
			*named = true
			fc.Name = p.plainString()
			return !p.bad && fc.Name != ""
		case "arguments":
			if fc.Args != nil {
				return false
			}
			fc.Args = p.rawObject()
			return fc.Args != nil
		case "inputResponses":
			if !modern || fc.Responses != nil {
				return false
			}
			fc.Responses = p.rawObject()
			return fc.Responses != nil
		case "requestState":
			if !modern || *stated {
				return false
			}
			*stated = true
			fc.State = p.plainString()
			return !p.bad
		}
		return false
	})
}

// ModernMeta decodes a request's _meta as the SDK decodes it, when it holds
// exactly the protocol version of the fast path's revision, valid client
// capabilities, and optionally a valid client info, a progress token (a
// plain string, or an integer the SDK's float64 holds exactly) and a log
// level (a plain string), and nothing else. Capabilities and client info hold no
// number and no null, which the SDK's own reading would decode
// differently from its checks.
//
// The map returned is shared and must not be modified: a client sends the
// same _meta with every call, and the same bytes again are answered with
// the map decoded the last time (metas), which every reader of a
// request's _meta only reads (the SDK's accessors, the audit, the
// observer, whose RequestInfo.Meta "must not be modified"). A _meta with
// a progress token, which a client makes anew for each call, is decoded
// every time and not remembered (ADR 89).
func ModernMeta(raw []byte) (mcp.Meta, bool) {
	if m := metas.Load(); m != nil && bytes.Equal(m.raw, raw) {
		return m.meta, true
	}
	meta, ok := modernMeta(raw)
	if ok && len(raw) <= maxMetaMemo && meta[progressTokenKey] == nil {
		metas.Store(&metaMemo{raw: bytes.Clone(raw), meta: meta})
	}
	return meta, ok
}

// metaMemo is a _meta, as sent, that ModernMeta took, and the map it
// decoded it to. Neither is changed once stored.
type metaMemo struct {
	raw  []byte
	meta mcp.Meta
}

// metas is the last metaMemo, shared by every handler: what it remembers
// depends on the bytes alone.
var metas atomic.Pointer[metaMemo]

// maxMetaMemo bounds the _meta metas keeps (an ordinary one is a few
// hundred bytes); a larger one is decoded every time.
const maxMetaMemo = 4 << 10

// modernMeta is ModernMeta without its memo.
func modernMeta(raw []byte) (mcp.Meta, bool) {
	var p scanner
	p.b = raw
	var caps, info, token []byte
	var version, leveled bool
	var level string
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case metaLogLevelKey:
			if leveled {
				return false
			}
			leveled = true
			level = p.plainString()
			return !p.bad
		case progressTokenKey:
			if token != nil {
				return false
			}
			token = p.id()
			return token != nil
		case metaVersionKey:
			if version {
				return false
			}
			version = p.plainString() == mcpversion.Modern
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
	if !ok || !p.end() || !version || caps == nil || !noNumbersOrNulls(caps) || (info != nil && !noNumbersOrNulls(info)) {
		return nil, false
	}
	if !sdkDecodes(caps, info) {
		return nil, false
	}
	// The map the SDK would decode: built directly when it holds only
	// plain strings, booleans and objects, which decode to themselves.
	meta := make(mcp.Meta, 4)
	meta[metaVersionKey] = mcpversion.Modern
	if token != nil {
		meta[progressTokenKey] = tokenValue(token)
	}
	if leveled {
		meta[metaLogLevelKey] = level
	}
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

// sdkDecodes reports what the SDK requires of a request's client
// capabilities caps and client info info (nil when absent)
// (decodeMetaValue): that they decode into its types. The answer is a
// function of their bytes alone, and a client sends the same ones with
// every call: the last ones that decode are remembered (decodes), and
// the same bytes again are not decoded again.
func sdkDecodes(caps, info []byte) bool {
	if m := decodes.Load(); m != nil && bytes.Equal(m.caps, caps) && bytes.Equal(m.info, info) && (m.info == nil) == (info == nil) {
		return true
	}
	// clientCapabilitiesV2 is the SDK's ClientCapabilities with Roots a
	// pointer; this is that shape.
	var c struct {
		mcp.ClientCapabilities
		//lint:ignore SA1019 roots are deprecated at 2026-07-28 but still decoded: the client may declare them
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if _, err := segjson.Parse(caps, &c, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return false
	}
	if info != nil {
		var impl mcp.Implementation
		if _, err := segjson.Parse(info, &impl, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return false
		}
	}
	if len(caps)+len(info) <= maxDecodesMemo {
		decodes.Store(&decodesMemo{caps: bytes.Clone(caps), info: bytes.Clone(info)})
	}
	return true
}

// decodesMemo is client capabilities and client info, as sent, that the
// SDK's types decode (sdkDecodes). Neither is changed once stored.
type decodesMemo struct{ caps, info []byte }

// decodes is the last decodesMemo, shared by every handler: what it
// remembers depends on the bytes alone.
var decodes atomic.Pointer[decodesMemo]

// maxDecodesMemo bounds the bytes decodes keeps (ordinary ones are tens
// of bytes); larger ones are decoded every time.
const maxDecodesMemo = 4 << 10

// tokenValue is a progress token the scanner read (scanner.id) as the
// SDK's decoder decodes it into an any: a string, or a float64, which
// holds the integer exactly.
func tokenValue(b []byte) any {
	if b[0] == '"' {
		return string(b[1 : len(b)-1]) // plain: no escapes
	}
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return float64(n)
}

// LegacyMeta decodes a handshake-era request's _meta as the SDK decodes
// it, when it holds no key of the protocol's own
// ("io.modelcontextprotocol/…", which the SDK reads, or refuses on a
// session); nil for none.
func LegacyMeta(raw []byte) (mcp.Meta, bool) {
	if raw == nil {
		return nil, true
	}
	var p scanner
	p.b = raw
	ok := p.object(func(key []byte) bool {
		if bytes.HasPrefix(key, []byte("io.modelcontextprotocol/")) {
			return false
		}
		return p.skipValue()
	})
	if !ok || !p.end() {
		return nil, false
	}
	var meta mcp.Meta
	if _, err := segjson.Parse(raw, &meta, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, false
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

// PlainID returns id when it is one the fast path's scanner takes (a plain
// string, an integer of at most 15 digits), so that it compares byte for
// byte with the ids of the edge's calls; nil otherwise.
func PlainID(id []byte) json.RawMessage {
	p := scanner{b: id}
	p.ws()
	got := p.id()
	if got == nil || !p.end() {
		return nil
	}
	return json.RawMessage(got)
}
