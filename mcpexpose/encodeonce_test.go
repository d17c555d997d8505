package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// onceIndex picks the result a tool of TestEncodeOnceOnTheWire answers.
type onceIndex struct {
	I int `json:"i" jsonschema:"minimum=0"`
}

// onceTyped is an output type whose derived schema can reject what the
// type allows (a pattern, an enum, bounds), so its successes are checked.
type onceTyped struct {
	Name  string            `json:"name" jsonschema:"pattern=^[^x]*$"`
	Kind  string            `json:"kind" jsonschema:"enum=a,enum=<&>"`
	Count int               `json:"count" jsonschema:"minimum=-5,maximum=5"`
	Tags  []string          `json:"tags" jsonschema:"maxItems=3"`
	Attrs map[string]string `json:"attrs"`
	Next  *onceNext         `json:"next,omitempty"`
}

// onceNext is onceTyped's nested part.
type onceNext struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

// onceValues are values a handler may return, of every shape the
// canonical encoding treats in its own way.
var onceValues = []any{
	nil, true, "", "<script>&\"\\\u2028\u2029\x01\xff é 日本 😀", 0.1, 1e21, 1e-7, math.Copysign(0, -1),
	math.MaxInt64, uint64(math.MaxUint64), float32(3.4e38), json.Number("12345678901234567890.5e-3"),
	[]string(nil), map[string]any(nil), []any{}, map[string]any{},
	map[string]any{"z": 1, "a": map[string]any{"y": []any{nil, "x"}, "b": false}, "\u00e9": "é", "A": 1, "<": ">"},
	json.RawMessage(` {"b" : [1, 2] ,"a":"\u003c\u0041", "a":null} `),
	[]byte("bytes \x00"), struct {
		B   string          `json:"b"`
		A   *int            `json:"a"`
		Raw json.RawMessage `json:"raw"`
		M   map[string]int  `json:"m,omitempty"`
	}{B: "<b>", Raw: json.RawMessage(`{"y":1,"x":2}`)},
	realisticCompute(realisticSample()),
	map[string]any{"deep": []any{[]any{[]any{map[string]any{"k": "v"}}}}},
}

// onceTypedValues are successes of onceTyped, valid and not.
var onceTypedValues = []onceTyped{
	{Name: "ok", Kind: "a", Count: 5, Tags: []string{"t"}, Attrs: map[string]string{"b": "2", "a": "1"}},
	{Name: "<é>", Kind: "<&>", Count: -5, Next: &onceNext{Name: "n"}},
	{Name: "x marks", Kind: "a"},                     // the pattern refuses it
	{Name: "ok", Kind: "b"},                          // the enum refuses it
	{Name: "ok", Kind: "a", Count: 6},                // above the maximum
	{Name: "ok", Kind: "a", Tags: make([]string, 4)}, // too many tags
	{Name: "\xff", Kind: "a"},                        // not UTF-8: left to the validator, which accepts it
}

// onceResults are execution.Result answers of a tool with a hand-written
// output schema.
var onceResults = []execution.Result{
	{Content: []execution.Content{execution.Text{Text: "t <&>"}}, Structured: json.RawMessage(`{"temperature":21.5,"where":"<Zürich>","z":[1,{"b":1,"a":2}]}`)},
	{Content: []execution.Content{execution.Text{Text: `{"temperature": 1}`}}, Structured: json.RawMessage(` { "temperature" : 1e2 , "note":"\u2028" } `)},
	{Content: []execution.Content{execution.Text{Text: "hot"}}, Structured: json.RawMessage(`{"temperature":"hot"}`)}, // the schema refuses it
}

// oldEnvelope is the envelope as the projection wrote it before it
// encoded once: json.Marshal, decoded, encoded again without HTML
// escaping.
func oldEnvelope(t *testing.T, v any) (string, bool) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return `{"result":` + strings.TrimSuffix(buf.String(), "\n") + `}`, true
}

// TestEncodeOnceOnTheWire: what a client receives of a success, through
// the edge and through the SDK's route, at 2026-07-28 and on a 2025-11-25
// session, is byte for byte what the projection sent before it encoded a
// result once (structured content {"result": value} with sorted keys and
// the same JSON as the one text block), for values of every shape, typed
// values the output schema accepts and refuses, and execution.Result
// answers under a hand-written schema.
func TestEncodeOnceOnTheWire(t *testing.T) {
	app := agnara.New("once", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(_ context.Context, in onceIndex) (any, error) { return onceValues[in.I], nil },
		&agnara.CapabilityOptions{Name: "value", Description: "A value."}), &mcpexpose.ToolOptions{Name: "value"})
	exp.Tool(app.Capability(func(_ context.Context, in onceIndex) (onceTyped, error) { return onceTypedValues[in.I], nil },
		&agnara.CapabilityOptions{Name: "typed", Description: "A typed value."}), &mcpexpose.ToolOptions{Name: "typed"})
	exp.Tool(app.Capability(func(_ context.Context, in onceIndex) (execution.Result, error) { return onceResults[in.I], nil },
		&agnara.CapabilityOptions{Name: "result", Description: "A result.", OutputSchema: json.RawMessage(forecastSchema)}), &mcpexpose.ToolOptions{Name: "result"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	edge, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	sdk, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{DisableFastPath: true})
	if err != nil {
		t.Fatal(err)
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	modern := func(h *mcpexpose.Handler, tool string, i int) string {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(callBody("7", tool, fmt.Sprintf(`{"i":%d}`, i), meta)))
		req.Header = baseHeader("tools/call", tool)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Body.String()
	}
	const rev = "2025-11-25"
	sessions := map[*mcpexpose.Handler]*sessionConn{}
	for _, h := range []*mcpexpose.Handler{edge, sdk} {
		srv := httptest.NewServer(h)
		defer srv.Close()
		sessions[h] = openSessionWith(t, srv.Client(), srv.URL, "", rev, `{}`)
	}
	legacy := func(h *mcpexpose.Handler, tool string, i int) string {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{"i":%d}}}`, tool, i)))
		req.Header = sessionHeader(rev)
		req.Header.Set("Mcp-Session-Id", sessions[h].id)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return maskStream.ReplaceAllString(rec.Body.String(), "id: STREAM_")
	}

	type call struct {
		tool string
		i    int
		want string // the structured content as the old projection wrote it; "" for a failure
	}
	var calls []call
	for i, v := range onceValues {
		env, ok := oldEnvelope(t, v)
		if !ok {
			t.Fatalf("value %d does not encode", i)
		}
		calls = append(calls, call{"value", i, env})
	}
	for i, v := range onceTypedValues {
		env, _ := oldEnvelope(t, v)
		if i >= 2 && i <= 5 {
			env = "" // refused by the schema: internal_failure
		}
		calls = append(calls, call{"typed", i, env})
	}
	for i, r := range onceResults {
		want := string(r.Structured)
		if i == 2 {
			want = ""
		}
		calls = append(calls, call{"result", i, want})
	}
	for _, c := range calls {
		for _, era := range []struct {
			name string
			send func(*mcpexpose.Handler, string, int) string
		}{{"2026-07-28", modern}, {rev, legacy}} {
			got, ref := era.send(edge, c.tool, c.i), era.send(sdk, c.tool, c.i)
			if got != ref {
				t.Errorf("%s %s[%d]: the edge and the SDK's route differ:\nedge %s\nsdk  %s", era.name, c.tool, c.i, got, ref)
			}
			if c.want == "" {
				if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `internal_failure`) {
					t.Errorf("%s %s[%d]: want internal_failure, got %s", era.name, c.tool, c.i, got)
				}
				continue
			}
			structured, _ := json.Marshal(json.RawMessage(c.want))
			part := `"structuredContent":` + string(structured)
			if c.tool != "result" {
				text, _ := json.Marshal(c.want)
				part = `"content":[{"type":"text","text":` + string(text) + `}],` + part
			}
			if !strings.Contains(got, part) {
				t.Errorf("%s %s[%d]: the answer\n%s\ndoes not hold what the old projection sent:\n%s", era.name, c.tool, c.i, got, part)
			}
		}
	}
}
