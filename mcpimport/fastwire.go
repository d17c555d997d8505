package mcpimport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// How the fast path reads and writes the SDK's bytes. Each decoder here is
// the SDK's decoding done by the same library (segmentio's, with the flag
// the SDK sets) into the same shapes, so that a value decodes to what the
// SDK decodes it to and an error is an error on both; what the SDK then
// does with a decoded value is repeated line for line, or left to the SDK's
// own code (CallToolResult.UnmarshalJSON) where a shape is not the
// commonest.

type jsonRaw = json.RawMessage

const segFlags = segjson.DontMatchCaseInsensitiveStructFields

// maxDepth is the nesting the SDK's decoder refuses beyond.
const maxDepth = 1000

// depthOK reports whether data nests objects and arrays at most maxDepth
// deep, counting brackets outside strings as the SDK's decoder does before
// it decodes anything (and whether or not the brackets balance).
func depthOK(data []byte) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > maxDepth {
				return false
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return true
}

var errTooDeep = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)

// unmarshal decodes the first JSON value of data into v as the SDK's
// internal Unmarshal does: the depth check over all of data, then the first
// value alone (what follows it is never read).
func unmarshal(data []byte, v any) error {
	if !depthOK(data) {
		return errTooDeep
	}
	rest, err := segjson.Parse(data, v, segFlags)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		// The SDK's stream decoder parses the first value on its own; the
		// flags the parser derives from its input must be that value's.
		_, err = segjson.Parse(data[:len(data)-len(rest)], v, segFlags)
	}
	return err
}

// message is one JSON-RPC message as the SDK's DecodeMessage reads it.
type message struct {
	response bool // else a request: a call (with an id) or a notification
	call     bool
	method   string
	params   []byte
	result   []byte
	wireErr  *jsonrpc.Error
	idIsInt  bool // the id decoded to a number, as int64(n) the SDK's Int64ID
	intID    int64
}

// wireMessage is the SDK's JSON-RPC decode form.
type wireMessage struct {
	VersionTag string         `json:"jsonrpc"`
	ID         any            `json:"id,omitempty"`
	Method     jsonRaw        `json:"method"`
	Params     jsonRaw        `json:"params,omitempty"`
	Result     jsonRaw        `json:"result,omitempty"`
	Error      *jsonrpc.Error `json:"error,omitempty"`
}

// decodeMessage decodes data as the SDK's jsonrpc.DecodeMessage does.
func decodeMessage(data []byte) (message, error) {
	var w wireMessage
	if err := unmarshal(data, &w); err != nil {
		return message{}, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.VersionTag != "2.0" {
		return message{}, fmt.Errorf("invalid message version tag %q; expected %q", w.VersionTag, "2.0")
	}
	var m message
	valid := false
	switch id := w.ID.(type) {
	case nil:
	case float64:
		m.idIsInt, m.intID, valid = true, int64(id), true
	case string:
		valid = true
	default:
		return message{}, fmt.Errorf("invalid ID type %T", id)
	}
	if len(w.Method) > 0 {
		if err := unmarshal(w.Method, &m.method); err != nil {
			return message{}, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		m.call, m.params = valid, w.Params
		return m, nil
	}
	if !valid {
		return message{}, errors.New("JSON RPC invalid request")
	}
	m.response, m.result, m.wireErr = true, w.Result, w.Error
	return m, nil
}

// wireResult is CallToolResult's decode form (its UnmarshalJSON's), field
// for field, but for _meta, kept raw: decoded into a nil map, segmentio's
// decoder makes it with room for 64 keys (4.75 KiB, the largest allocation
// of a gateway's call, for the one key an agnara-go server sends), so
// decodeResult decodes it into a map of its own size (metaOf).
type wireResult struct {
	Meta              jsonRaw             `json:"_meta,omitempty"`
	Content           []*wireContent      `json:"content"`
	StructuredContent any                 `json:"structuredContent,omitempty"`
	IsError           bool                `json:"isError,omitempty"`
	InputRequests     mcp.InputRequestMap `json:"inputRequests,omitempty"`
	RequestState      string              `json:"requestState,omitempty"`
	ResultType        string              `json:"resultType"`
}

// wireContent is the SDK's decode form of a content block, field for field:
// a block decodes, or fails, on every field the SDK reads, whatever its
// type.
type wireContent struct {
	Type              string                `json:"type"`
	Text              string                `json:"text,omitempty"`
	MIMEType          string                `json:"mimeType,omitempty"`
	Data              []byte                `json:"data,omitempty"`
	Resource          *mcp.ResourceContents `json:"resource,omitempty"`
	URI               string                `json:"uri,omitempty"`
	Name              string                `json:"name,omitempty"`
	Title             string                `json:"title,omitempty"`
	Description       string                `json:"description,omitempty"`
	Size              *int64                `json:"size,omitempty"`
	Meta              mcp.Meta              `json:"_meta,omitempty"`
	Annotations       *mcp.Annotations      `json:"annotations,omitempty"`
	Icons             []mcp.Icon            `json:"icons,omitempty"`
	ID                string                `json:"id,omitempty"`
	Input             map[string]any        `json:"input,omitempty"`
	ToolUseID         string                `json:"toolUseId,omitempty"`
	NestedContent     []*wireContent        `json:"content,omitempty"`
	StructuredContent any                   `json:"structuredContent,omitempty"`
	IsError           bool                  `json:"isError,omitempty"`
}

// Results carry their result type in a field the SDK keeps to itself; these
// are decoded by the SDK once, and copied.
// Should the SDK ever refuse the complete one, such results go through its
// own method instead (completeOK false).
var (
	resultUntyped              mcp.CallToolResult
	resultComplete, completeOK = func() (mcp.CallToolResult, bool) {
		var r mcp.CallToolResult
		err := r.UnmarshalJSON([]byte(`{"resultType":"complete"}`))
		return r, err == nil
	}()
)

// decodeResult decodes a call's result as the SDK's call does: into a
// CallToolResult, through its UnmarshalJSON. Results of text blocks and of
// no result type or "complete" (every result of agnara-go's and the SDK's
// servers but those with other content) are built here from the same
// decoded fields; any other goes through the SDK's own method.
//
// raw is the result of a message decodeMessage read: one whole JSON value
// nested in a message whose depth was checked, so within the SDK's bound
// already; it is not scanned for depth again.
func decodeResult(raw []byte) (*mcp.CallToolResult, error) {
	var w wireResult
	if first := bytes.TrimLeft(raw, " \t\r\n"); len(first) == 0 || first[0] != '{' {
		return sdkResult(raw)
	}
	if rest, err := segjson.Parse(raw, &w, segFlags); err != nil || len(rest) > 0 {
		return sdkResult(raw)
	}
	var res mcp.CallToolResult
	switch w.ResultType {
	case "":
		res = resultUntyped
	case "complete":
		if !completeOK {
			return sdkResult(raw)
		}
		res = resultComplete
	default:
		return sdkResult(raw)
	}
	meta, ok := metaOf(w.Meta)
	if !ok {
		return sdkResult(raw)
	}
	blocks := make([]mcp.Content, 0, len(w.Content))
	for _, c := range w.Content {
		if c == nil || c.Type != "text" {
			return sdkResult(raw)
		}
		blocks = append(blocks, &mcp.TextContent{Text: c.Text, Meta: c.Meta, Annotations: c.Annotations})
	}
	res.Meta = meta
	res.Content = blocks
	res.StructuredContent = w.StructuredContent
	res.IsError = w.IsError
	res.InputRequests = w.InputRequests
	res.RequestState = w.RequestState
	return &res, nil
}

// metaOf decodes a result's raw _meta as the SDK decodes it into mcp.Meta:
// nil when absent or null, else the object's keys; false when it is not an
// object (the SDK's decoding fails, and decodeResult leaves it to the SDK).
// The map is made with room for the keys counted at the object's top level
// first, which segmentio's decoder then fills instead of making its own.
func metaOf(raw jsonRaw) (mcp.Meta, bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	m := make(mcp.Meta, topLevelKeys(raw))
	if _, err := segjson.Parse(raw, &m, segFlags); err != nil {
		return nil, false
	}
	return m, true
}

// topLevelKeys counts the colons of data outside strings at depth one: the
// keys of an object, a hint only (data need not be an object).
func topLevelKeys(data []byte) int {
	n, depth := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ':':
			if depth == 1 {
				n++
			}
		}
	}
	return n
}

// sdkResult decodes raw as the SDK's call decodes a result.
func sdkResult(raw []byte) (*mcp.CallToolResult, error) {
	res := new(mcp.CallToolResult)
	if err := unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

// notifiers are the session's notification handlers, each given a
// notification as the SDK client gives it: its params decoded into the
// method's type (nil when absent, if the method allows that), and nothing
// when they do not decode. The SDK clears its list caches first; the fast
// path stops at the first cacheable list (fastCaller.note), so there is
// nothing to clear.
type notifiers map[string]func(ctx context.Context, cs *mcp.ClientSession, params []byte)

func notifiersOf(co *mcp.ClientOptions) notifiers {
	n := notifiers{}
	add := func(method string, f func(ctx context.Context, cs *mcp.ClientSession, params []byte)) {
		if f != nil {
			n[method] = f
		}
	}
	add("notifications/tools/list_changed", handlerOf(co.ToolListChangedHandler, true))
	add("notifications/prompts/list_changed", handlerOf(co.PromptListChangedHandler, true))
	add("notifications/resources/list_changed", handlerOf(co.ResourceListChangedHandler, true))
	add("notifications/resources/updated", handlerOf(co.ResourceUpdatedHandler, true))
	//lint:ignore SA1019 deprecated at 2026-07-28 but still delivered by the SDK client, so here too
	add("notifications/message", handlerOf(co.LoggingMessageHandler, false))
	add("notifications/progress", handlerOf(co.ProgressNotificationHandler, false))
	return n
}

func handlerOf[P any, PP interface {
	*P
	mcp.Params
}](h func(context.Context, *mcp.ClientRequest[PP]), missingOK bool) func(context.Context, *mcp.ClientSession, []byte) {
	if h == nil {
		return nil
	}
	return func(ctx context.Context, cs *mcp.ClientSession, params []byte) {
		var p PP
		if params != nil && unmarshal(params, &p) != nil {
			return
		}
		if p == nil && !missingOK {
			return
		}
		h(ctx, &mcp.ClientRequest[PP]{Session: cs, Params: p})
	}
}

func (n notifiers) deliver(ctx context.Context, cs *mcp.ClientSession, method string, params []byte) {
	if f := n[method]; f != nil {
		f(ctx, cs, params)
	}
}

// Encoding, as the SDK's JSON-RPC layer encodes: encoding/json without
// HTML escaping.

func jsonMarshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// writeString writes s as a JSON string.
func writeString(buf *bytes.Buffer, s string) bool {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return true
	}
	b, err := jsonMarshal(s)
	if err != nil {
		return false
	}
	buf.Write(b)
	return true
}

// compact writes JSON data without insignificant space, or reports false
// for data that is not JSON.
func compact(buf *bytes.Buffer, data []byte) bool {
	return json.Compact(buf, data) == nil
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// bufs are the pooled buffers of bodies and events.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { return bufs.Get().(*bytes.Buffer) }

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		b.Reset()
		bufs.Put(b)
	}
}

var readers = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

// eventScanner reads the data of server-sent events as the SDK's event
// scanner does: lines "key: value", data lines joined with newlines, values
// trimmed, comments and unknown keys ignored, a line without a colon
// malformed, at most max bytes an event (none when max <= 0). next returns
// the data of each event the SDK hands on (named "message" or not named,
// with data), io.EOF at the end, and any other error with malformed set
// when the stream itself is corrupt.
type eventScanner struct {
	src       eofReader // what r reads
	r         *bufio.Reader
	data      *bytes.Buffer
	long      []byte // a line longer than r's buffer
	max       int
	malformed bool
}

func newEventScanner(r io.Reader, max int) *eventScanner {
	s := &eventScanner{src: eofReader{r: r}, r: readers.Get().(*bufio.Reader), data: getBuf(), max: max}
	s.r.Reset(&s.src)
	return s
}

// ended reports whether the stream is over: its reader said io.EOF and
// nothing read from it is left unscanned.
func (s *eventScanner) ended() bool { return s.src.eof && s.r.Buffered() == 0 }

// eofReader is a reader that remembers having said io.EOF.
type eofReader struct {
	r   io.Reader
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof = true
	}
	return n, err
}

func (s *eventScanner) release() {
	s.r.Reset(nil)
	readers.Put(s.r)
	putBuf(s.data)
}

var errEventTooLarge = errors.New("malformed event: SSE event too large")

// line reads one line within budget bytes (< 0: any), as ReadBytes would
// return it. A line that fits the reader's buffer is returned from it,
// valid until the next read; a longer one is gathered in s.long.
func (s *eventScanner) line(budget int) ([]byte, error) {
	s.long = s.long[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		if budget >= 0 && len(s.long)+len(frag) > budget {
			return nil, errEventTooLarge
		}
		if !errors.Is(err, bufio.ErrBufferFull) && len(s.long) == 0 {
			return frag, err
		}
		s.long = append(s.long, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return s.long, err
	}
}

func (s *eventScanner) next() ([]byte, error) {
	var name string
	hasData := false
	s.data.Reset()
	size := 0
	for {
		budget := -1
		if s.max > 0 {
			budget = s.max - size
		}
		line, err := s.line(budget)
		if errors.Is(err, errEventTooLarge) {
			s.malformed = true
			return nil, err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("error reading event: %v", err)
		}
		eof := err != nil
		size += len(line)
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			key, value, found := bytes.Cut(line, []byte{':'})
			if !found {
				s.malformed = true
				return nil, fmt.Errorf("malformed event: malformed line in SSE stream: %q", line)
			}
			switch string(key) {
			case "event":
				name = string(bytes.TrimSpace(value))
			case "data":
				if hasData {
					s.data.WriteByte('\n')
				}
				hasData = true
				s.data.Write(bytes.TrimSpace(value))
			}
			if !eof {
				continue
			}
		}
		// The end of an event (a blank line, or the end of the stream): the
		// SDK hands on its data when there is some, under no name or
		// "message"; ids and retry delays only matter to resumption, which
		// the fast path leaves to the SDK.
		if s.data.Len() > 0 && (name == "" || name == "message") {
			return s.data.Bytes(), nil
		}
		if eof {
			return nil, io.EOF
		}
		name, hasData = "", false
		s.data.Reset()
		size = 0
	}
}
