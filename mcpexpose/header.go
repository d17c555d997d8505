package mcpexpose

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agnara-go/agnara/internal/portableschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// Header parameters (SEP-2243). A top-level property of a tool's input
// schema with "x-mcp-header": "Region" is mirrored, on 2026-07-28 requests,
// in the HTTP header Mcp-Param-Region; a server that reads the body must
// refuse a tools/call whose header does not say what the argument says
// (400, JSON-RPC -32020), so that a proxy routing on the header routes what
// the server runs.
//
// The SDK can check these headers itself, but it does so before any
// middleware, against every registered tool: a caller who may not see a tool
// would learn that it exists from a header complaint where an unknown tool
// gets "unknown tool". So the SDK is given a copy of each schema without
// x-mcp-header (it checks nothing), tools/list publishes the
// schema as compiled, and the Handler checks the headers itself, for the
// tools the caller may call only; everything else reaches the SDK exactly as
// a call of an unknown tool does.

// paramHeaderPrefix starts every header parameter's header name.
const paramHeaderPrefix = "Mcp-Param-"

// Safe integers: the range an IEEE-754 double holds exactly.
const maxSafeInteger = 1<<53 - 1

// headerParam is one argument a tool mirrors in a header.
type headerParam struct {
	arg    string // the top-level property
	header string // the full header name, such as Mcp-Param-Region
	kind   string // string, integer or boolean
}

// headerParams reads the header parameters of a published input schema,
// and returns them with the schema the SDK is given (schema without
// x-mcp-header), or why they cannot be served: x-mcp-header anywhere but on
// a top-level property, a value that is not an HTTP token, two names equal
// but for case, a property that is not a string, integer or boolean, or a
// schema the Go MCP SDK client cannot read them from.
func headerParams(schema []byte) ([]headerParam, []byte, error) {
	if !bytes.Contains(schema, []byte(`"`+portableschema.HeaderKeyword+`"`)) {
		return nil, schema, nil // the common case: nothing to read
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, nil, fmt.Errorf("input schema: %v", err)
	}
	props, _ := root["properties"].(map[string]any)
	var (
		params []headerParam
		seen   = map[string]string{}
		errs   []error
	)
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		v, ok := p[portableschema.HeaderKeyword]
		if !ok {
			continue
		}
		delete(p, portableschema.HeaderKeyword)
		h, _ := v.(string)
		kind, _ := p["type"].(string)
		switch {
		case !isToken(h):
			errs = append(errs, fmt.Errorf("property %q: x-mcp-header must be a non-empty HTTP token, got %v", name, v))
		case kind != "string" && kind != "integer" && kind != "boolean":
			errs = append(errs, fmt.Errorf("property %q: x-mcp-header needs \"type\" string, integer or boolean, got %v", name, p["type"]))
		case seen[strings.ToLower(h)] != "":
			errs = append(errs, fmt.Errorf("property %q: header %q is already declared by property %q (header names are case-insensitive)", name, h, seen[strings.ToLower(h)]))
		default:
			seen[strings.ToLower(h)] = name
			params = append(params, headerParam{arg: name, header: http.CanonicalHeaderKey(paramHeaderPrefix + h), kind: kind})
		}
	}
	where := findKeyword(root, "", false)
	if len(params) == 0 && len(errs) == 0 && where == "" {
		return nil, schema, nil // the name was a property's or a value
	}
	if where != "" {
		errs = append(errs, fmt.Errorf("%s: x-mcp-header is served on top-level properties only", where))
	}
	if where := listedType(root, ""); where != "" {
		// The SDK client reads x-mcp-header into a struct whose "type" is a
		// string: one list makes it read none, and send no header at all.
		errs = append(errs, fmt.Errorf("%s: \"type\" is a list (a nullable field, such as a Go pointer), and the Go MCP SDK then ignores every x-mcp-header of the schema, so its clients could not call the tool; make it a non-pointer field", where))
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	stripped, err := json.Marshal(root)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %v", err)
	}
	return params, stripped, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// findKeyword returns the JSON Pointer of an x-mcp-header keyword left in
// v (the top-level ones are removed by then), or "". names tells that v's
// keys are property names (v is a "properties" object), not keywords.
func findKeyword(v any, at string, names bool) string {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if k == portableschema.HeaderKeyword && !names {
				return at + "/" + k
			}
			if w := findKeyword(v[k], at+"/"+k, !names && k == "properties"); w != "" {
				return w
			}
		}
	case []any:
		for i, e := range v {
			if w := findKeyword(e, at+"/"+strconv.Itoa(i), false); w != "" {
				return w
			}
		}
	}
	return ""
}

// listedType returns the JSON Pointer of a schema, reached from v through
// "properties" only (as the SDK reads it), whose "type" is not a string, or
// "".
func listedType(v map[string]any, at string) string {
	if t, ok := v["type"]; ok {
		if _, ok := t.(string); !ok {
			if at == "" {
				return "the schema's root"
			}
			return "property " + at
		}
	}
	props, _ := v["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		if w := listedType(p, at+"/"+name); w != "" {
			return w
		}
	}
	return ""
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", c):
		default:
			return false
		}
	}
	return true
}

// checkHeaderParams says why a request's header parameters do not match its
// arguments; nil when they do.
func checkHeaderParams(header http.Header, params []headerParam, args segjson.RawMessage) error {
	var obj map[string]segjson.RawMessage
	if len(args) > 0 {
		if _, err := segjson.Parse(args, &obj, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			// Not an object: the schema refuses it before anything runs.
			return nil
		}
	}
	for _, p := range params {
		got := header.Get(p.header)
		raw, present := obj[p.arg]
		if !present || string(raw) == "null" {
			if got != "" {
				return fmt.Errorf("header mismatch: unexpected %s header for absent or null argument %q", p.header, p.arg)
			}
			continue
		}
		if got == "" {
			return fmt.Errorf("header mismatch: missing %s header for argument %q", p.header, p.arg)
		}
		decoded, ok := decodeHeaderValue(got)
		if !ok {
			return fmt.Errorf("header mismatch: %s header is not valid base64 inside =?base64?...?=", p.header)
		}
		if !headerEquals(decoded, raw) {
			return fmt.Errorf("header mismatch: %s header does not match argument %q", p.header, p.arg)
		}
	}
	return nil
}

// decodeHeaderValue undoes SEP-2243's encoding: a value wrapped in
// =?base64?...?= is standard base64 (padded) of the UTF-8 text; anything
// else is the text itself.
func decodeHeaderValue(v string) (string, bool) {
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok := strings.CutSuffix(inner, "?="); ok {
			b, err := base64.StdEncoding.Strict().DecodeString(inner)
			if err != nil {
				return "", false
			}
			return string(b), true
		}
	}
	return v, true
}

// headerEquals reports whether the header text h says what the JSON
// argument raw says: the same string, the same integer (compared as numbers,
// within the safe range), or the same boolean written true or false.
func headerEquals(h string, raw segjson.RawMessage) bool {
	var v any
	if segjson.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return h == v
	case bool:
		return h == strconv.FormatBool(v)
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
			return false
		}
		n, err := strconv.ParseFloat(h, 64)
		return err == nil && n == v
	}
	return false
}

// sdkTool returns a detached copy of the tool's definition as the SDK is
// given it: without x-mcp-header, which only the Handler checks.
func (t *tool) sdkTool() *mcp.Tool {
	c := t.project()
	if t.params != nil {
		c.InputSchema = json.RawMessage(slices.Clone(t.sdkSchema))
	}
	return c
}

// listed returns the tool's definition as tools/list publishes it to req:
// as compiled at 2026-07-28, and without x-mcp-header in the handshake era,
// which has no header parameters (nothing mirrors or checks them there) and
// whose clients may compile schemas strictly, refusing a keyword they do
// not know.
func (t *tool) listed(req mcp.Request) *mcp.Tool {
	if t.params != nil {
		if lr, ok := req.(*mcp.ListToolsRequest); ok && lr.ProtocolVersion() < modernVersion {
			return t.sdkTool()
		}
	}
	return t.project()
}
