// Package projection turns canonical outcomes into MCP results: the one
// place an outcome becomes a tool result (Project), with the canonical JSON
// of a structured value (keys sorted, compact, nesting bounded). It knows
// nothing of requests, transports or tools.
package projection

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxDepth bounds the nesting of a structured result.
const MaxDepth = 128

// ErrProjection is what a caller learns when a result cannot be projected;
// the details go to the server log.
var ErrProjection = errors.New("mcpexpose: result cannot be projected")

// Project converts a canonical outcome into a tool result, as
// [mcpexpose.ProjectResult] documents: the one place outcomes become MCP
// results.
func Project(out execution.Outcome) (*mcp.CallToolResult, error) {
	switch o := out.(type) {
	case execution.Success:
		if o.Content != nil {
			res := &mcp.CallToolResult{Content: Content(o.Content)}
			if o.Structured != nil {
				res.StructuredContent = o.Structured // an execution.Result's: as it is, no envelope
			}
			return res, nil
		}
		env, err := Envelope(o.Value)
		if err != nil {
			return nil, err
		}
		return Success(env), nil
	case *execution.Failure:
		return Failure(o), nil
	}
	return nil, fmt.Errorf("mcpexpose: unknown outcome %T", out)
}

// successBlocks holds a success result and its one text block in one
// allocation instead of three (the result, its content slice, the block):
// this runs on every call.
type successBlocks struct {
	res     mcp.CallToolResult
	text    mcp.TextContent
	content [1]mcp.Content
}

func Success(env []byte) *mcp.CallToolResult {
	sb := &successBlocks{text: mcp.TextContent{Text: string(env)}}
	sb.content[0] = &sb.text
	sb.res.Content = sb.content[:]
	sb.res.StructuredContent = json.RawMessage(env)
	return &sb.res
}

func Failure(f *execution.Failure) *mcp.CallToolResult {
	if f.Code == execution.InternalFailure {
		f = execution.Fail(execution.InternalFailure, "", nil)
	}
	body := map[string]any{"code": f.Code, "message": f.Message}
	if f.Reason != "" {
		body["reason"] = f.Reason
	}
	if len(f.Details) > 0 {
		body["details"] = f.Details
	}
	text, err := Sorted(body)
	if err != nil {
		// Details an application supplied that do not encode: say less.
		delete(body, "details")
		text, _ = Sorted(body)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, IsError: true}
}

// Sorted encodes v compactly with object keys sorted at every level,
// refusing maps with keys of a non-string kind as a success value's are.
func Sorted(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if err := stringKeys(reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	doc, err := schemacheck.Parse(raw)
	if err != nil {
		return nil, err
	}
	return marshalCompact(doc)
}

func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Envelope encodes {"result": value} compactly with object keys sorted at
// every level (the canonical form ProjectResult documents), in one pass
// over the value (appendCanonical): nothing is encoded twice, and the
// bytes are those of json.Marshal followed by a decode and an encode
// without HTML escaping, which the projection wrote before. It fails, with
// ErrProjection, for a value json.Marshal refuses, one holding a map with
// keys of a non-string kind, or one nested deeper than MaxDepth.
func Envelope(value any) ([]byte, error) {
	buf := envelopeBufs.Get().(*[]byte)
	b := append((*buf)[:0], envelopePrefix...)
	b, err := appendCanonical(b, value)
	if err != nil {
		putEnvelopeBuf(buf, b)
		return nil, err
	}
	b = append(b, '}')
	env := make([]byte, len(b))
	copy(env, b)
	putEnvelopeBuf(buf, b)
	return env, nil
}

// envelopeBufs are the buffers Envelope encodes into, so that the
// envelope it returns is allocated once, at its size.
var envelopeBufs = sync.Pool{New: func() any { return new([]byte) }}

func putEnvelopeBuf(buf *[]byte, b []byte) {
	if cap(b) <= 256<<10 {
		*buf = b[:0]
		envelopeBufs.Put(buf)
	}
}

// envelopePrefix opens the envelope, written before the value's own
// encoding.
const envelopePrefix = `{"result":`

// nesting returns the number of levels of objects and arrays in v, which
// sits inside d levels: a scalar is 0 levels, [] and {} are 1, [[]] is 2.
// It stops counting past MaxDepth.
func Nesting(v any, d int) int {
	max := d
	switch v := v.(type) {
	case map[string]any:
		max = d + 1
		for _, e := range v {
			if max > MaxDepth {
				break
			}
			if n := Nesting(e, d+1); n > max {
				max = n
			}
		}
	case []any:
		max = d + 1
		for _, e := range v {
			if max > MaxDepth {
				break
			}
			if n := Nesting(e, d+1); n > max {
				max = n
			}
		}
	}
	return max
}

// stringKeys refuses a value holding a map whose key kind is not string.
// encoding/json writes such keys as text (map[int]string{1: "a"} becomes
// {"1":"a"}), so the client would read an object keyed by strings the Go
// value never held, and a TextMarshaler key of a non-string kind may
// write two distinct keys alike: the projection refuses them rather than
// guess (DESIGN.md §7); a capability that means string keys says so in
// its type. Values a json.Marshaler or TextMarshaler encodes are their own
// business. Whether a type can hold such a map at all is found once per
// type, so typical results cost one cache lookup.
func stringKeys(v reflect.Value) error {
	if !v.IsValid() || keysClean(v.Type()) {
		return nil
	}
	t := v.Type()
	if marshals(t) || (v.CanAddr() && marshals(reflect.PointerTo(t))) {
		return nil
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return stringKeys(v.Elem())
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return fmt.Errorf("%w: a map with %s keys (object keys must be strings)", ErrProjection, t.Key().Kind())
		}
		for it := v.MapRange(); it.Next(); {
			if err := stringKeys(it.Value()); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte is base64 text
		}
		for i := range v.Len() {
			if err := stringKeys(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); encodedField(f) {
				if err := stringKeys(v.Field(i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	// cleanTypes caches keysClean by type, as encoding/json caches its
	// encoders.
	cleanTypes sync.Map // reflect.Type -> bool
)

// marshals reports whether encoding/json leaves t's encoding to t itself.
func marshals(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler)
}

// keysClean reports whether no value of type t can hold a map with
// non-string keys: t reaches no such map and no interface (whose dynamic
// value could be anything), except through a json.Marshaler or encoding.TextMarshaler.
func keysClean(t reflect.Type) bool {
	if c, ok := cleanTypes.Load(t); ok {
		return c.(bool)
	}
	c := typeClean(t, map[reflect.Type]bool{})
	cleanTypes.Store(t, c)
	return c
}

func typeClean(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true // a recursive type: judged by its other parts
	}
	seen[t] = true
	if marshals(t) {
		return true
	}
	if marshals(reflect.PointerTo(t)) {
		// Marshal calls pointer-receiver methods only on addressable
		// values: leave those to the value walk.
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return false
	case reflect.Map:
		return t.Key().Kind() == reflect.String && typeClean(t.Elem(), seen)
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return typeClean(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); encodedField(f) && !typeClean(f.Type, seen) {
				return false
			}
		}
	}
	return true
}

// encodedField reports whether encoding/json may encode f: exported or
// embedded, and not tagged "-".
func encodedField(f reflect.StructField) bool {
	return (f.IsExported() || f.Anonymous) && f.Tag.Get("json") != "-"
}

// Content converts protocol-neutral content to MCP content blocks, with
// their annotations.
func Content(cs []execution.Content) []mcp.Content {
	out := make([]mcp.Content, 0, len(cs))
	for _, c := range cs {
		switch c := c.(type) {
		case execution.Text:
			out = append(out, &mcp.TextContent{Text: c.Text, Annotations: annotations(c.Annotations)})
		case execution.Image:
			out = append(out, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: annotations(c.Annotations)})
		case execution.Audio:
			out = append(out, &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: annotations(c.Annotations)})
		case execution.Resource:
			out = append(out, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob}, Annotations: annotations(c.Annotations)})
		case execution.ResourceLink:
			out = append(out, &mcp.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size, Annotations: annotations(c.Annotations)})
		}
	}
	return out
}

// annotations projects content annotations; nil stays nil (the block
// carries none on the wire).
func annotations(a *execution.ContentAnnotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{Priority: a.Priority, LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, mcp.Role(r))
	}
	return out
}
