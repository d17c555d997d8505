package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Encoder writes JSON-RPC responses as the SDK's server and JSON-RPC layer
// write them, for the server whose identity it holds. It is immutable and
// safe for concurrent use.
type Encoder struct {
	impl *mcp.Implementation
	// prefix opens a 2026-07-28 tool result:
	// {"_meta":{"io.modelcontextprotocol/serverInfo":…},
	prefix []byte
}

// NewEncoder returns the encoder of the server impl identifies.
func NewEncoder(impl *mcp.Implementation) (*Encoder, error) {
	meta, err := json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: impl})
	if err != nil {
		return nil, err
	}
	return &Encoder{impl: impl, prefix: append(append([]byte(`{"_meta":`), meta...), ',')}, nil
}

var (
	errMethodNotFound = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}
	errNilResult      = errors.New("nil result")
)

// bufs are pooled response buffers (GetBuf, PutBuf).
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// PutBuf returns a response buffer to the pool, unless it grew large.
func PutBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		buf.Reset()
		bufs.Put(buf)
	}
}

// Response appends the JSON-RPC response to fc to buf as the SDK's
// JSON-RPC layer writes it: res, or err as that layer words it; with the
// annotations of a 2026-07-28 result when modern. It returns the HTTP
// status the revision gives the error, or 0 for an answer sent in the
// stream (always, in the handshake era).
func (e *Encoder) Response(buf *bytes.Buffer, fc *Call, res mcp.Result, err error, modern bool) int {
	start := buf.Len() // what buf held before is kept
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(fc.ID)
	if err == nil {
		buf.WriteString(`,"result":`)
		if res == nil {
			err = errNilResult
		} else if err = e.Result(buf, res, modern); err != nil {
			buf.Truncate(start)
			buf.WriteString(`{"jsonrpc":"2.0","id":`)
			buf.Write(fc.ID)
		}
	}
	status := 0
	if err != nil {
		if errors.Is(err, errMethodNotFound) {
			err = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + strconv.Quote(fc.Method())}
		}
		if modern {
			status = ErrorStatus(err)
		}
		buf.WriteString(`,"error":`)
		WriteWireError(buf, err)
	}
	buf.WriteByte('}')
	return status
}

// ErrorStatus is the HTTP status the revision gives a JSON-RPC error
// (SEP-2575), or 0 for an error sent in the stream.
func ErrorStatus(err error) int {
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

// WriteWireError encodes err as the SDK's JSON-RPC layer does: a
// *jsonrpc.Error as it is, any other error as its text with the code of
// the *jsonrpc.Error it wraps, or 0.
func WriteWireError(buf *bytes.Buffer, err error) {
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

// Result writes res as the SDK's server writes a result. A
// 2026-07-28 (modern) one it annotates: the server's identity in _meta
// (unless the result names one), a list result marked complete, a tool
// result marked complete or input_required. A handshake-era one it writes
// as it is.
func (e *Encoder) Result(buf *bytes.Buffer, res mcp.Result, modern bool) error {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		cp := *r
		if modern {
			cp.ResultType = "complete"
			cp.Meta = e.withServerInfo(r.Meta)
		}
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&cp); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
		return nil
	case *mcp.CallToolResult:
		if e.textResult(buf, r, modern) {
			return nil
		}
		if !modern {
			b, err := json.Marshal(r) // no result type: the SDK sets none
			buf.Write(b)
			return err
		}
		return e.callResult(buf, r)
	case json.Marshaler:
		// A result already encoded (a task's): sent as it is, as the
		// SDK sends it.
		b, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		buf.Write(b)
		return nil
	}
	return errors.New("mcpexpose: unexpected result type on the fast path")
}

// callResult writes any tool result as Result does, through
// the SDK's own encoding of the result.
func (e *Encoder) callResult(buf *bytes.Buffer, r *mcp.CallToolResult) error {
	cp := *r
	cp.Meta = e.withServerInfo(r.Meta)
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

// textResult writes r as Result would when r is what the
// projection makes of most outcomes — text blocks without metadata,
// structured content as raw JSON, no input requests — without encoding
// the result struct and each block through their MarshalJSON methods,
// each text and the structured content written straight into buf
// (appendQuoted, appendRaw), and reports whether it did. TestEncodeTextResult holds it to the
// general encoding, and to the SDK's fields.
func (e *Encoder) textResult(buf *bytes.Buffer, r *mcp.CallToolResult, modern bool) bool {
	if len(r.Meta) != 0 || r.InputRequests != nil || r.RequestState != "" {
		return false
	}
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); !ok || tc.Meta != nil || tc.Annotations != nil {
			return false
		}
	}
	var structured json.RawMessage
	switch sc := r.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if sc == nil {
			return false
		}
		structured = sc
	default:
		return false
	}
	start := buf.Len()
	if modern {
		buf.Write(e.prefix)
	} else {
		buf.WriteByte('{')
	}
	buf.WriteString(`"content":[`)
	for i, c := range r.Content {
		if i > 0 {
			buf.WriteByte(',')
		}
		text := c.(*mcp.TextContent).Text
		buf.WriteString(`{"type":"text","text":`)
		buf.Grow(len(text) + len(text)/4 + 2) // room for the usual escapes: appended in place
		buf.Write(appendQuoted(buf.AvailableBuffer(), text))
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	if structured != nil {
		buf.WriteString(`,"structuredContent":`)
		buf.Grow(len(structured) + 64)
		b, ok := appendRaw(buf.AvailableBuffer(), structured)
		if !ok {
			var err error
			if b, err = json.Marshal(structured); err != nil {
				buf.Truncate(start)
				return false
			}
		}
		buf.Write(b)
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
func (e *Encoder) withServerInfo(m mcp.Meta) mcp.Meta {
	if _, ok := m[mcp.MetaKeyServerInfo]; ok {
		return m
	}
	out := make(mcp.Meta, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[mcp.MetaKeyServerInfo] = e.impl
	return out
}

// GetBuf returns an empty response buffer from the pool; PutBuf returns it.
func GetBuf() *bytes.Buffer { return bufs.Get().(*bytes.Buffer) }
