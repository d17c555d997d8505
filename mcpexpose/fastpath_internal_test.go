package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEncodeTextResult holds the fast path's direct encoding of text
// results to the SDK's own encoding (encodeCallResult), and fails when the
// SDK's result or text block gains a field the direct encoding would not
// write.
func TestEncodeTextResult(t *testing.T) {
	fields := func(v any) []string {
		var names []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			names = append(names, rt.Field(i).Name)
		}
		return names
	}
	if got, want := fields(mcp.CallToolResult{}), []string{"Meta", "Content", "StructuredContent", "IsError", "InputRequests", "RequestState", "resultType", "err"}; !slices.Equal(got, want) {
		t.Fatalf("mcp.CallToolResult has fields %v, not %v: teach encodeTextResult the new ones", got, want)
	}
	if got, want := fields(mcp.TextContent{}), []string{"Text", "Meta", "Annotations"}; !slices.Equal(got, want) {
		t.Fatalf("mcp.TextContent has fields %v, not %v: teach encodeTextResult the new ones", got, want)
	}
	app := agnara.New("enc", &agnara.Options{Version: "1.0<&>\u2028"})
	snap, err := New(app).Compile()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(snap, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	text := func(ss ...string) []mcp.Content {
		var cs []mcp.Content
		for _, x := range ss {
			cs = append(cs, &mcp.TextContent{Text: x})
		}
		return cs
	}
	cases := []struct {
		name   string
		res    *mcp.CallToolResult
		direct bool
	}{
		{"success", successResult([]byte(`{"result":{"a":"<b>&\u2028"}}`)), true},
		{"failure", &mcp.CallToolResult{Content: text(`{"code":"not_found","message":"<x> & \"y\"\n"}`), IsError: true}, true},
		{"empty", &mcp.CallToolResult{Content: []mcp.Content{}}, true},
		{"several", &mcp.CallToolResult{Content: text("a", "", "\x00\xff"), StructuredContent: json.RawMessage(" { \"k\" : [ 1 , 2 ] } ")}, true},
		{"meta", &mcp.CallToolResult{Meta: mcp.Meta{"x": 1}, Content: text("a")}, false},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}}}, false},
		{"annotated", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}}, false},
		{"typed structured", &mcp.CallToolResult{Content: text("a"), StructuredContent: map[string]any{"a": 1}}, false},
		{"state", &mcp.CallToolResult{Content: text("a"), RequestState: "s"}, false},
	}
	for _, tc := range cases {
		var direct, general bytes.Buffer
		ok := s.encodeTextResult(&direct, tc.res)
		if ok != tc.direct {
			t.Errorf("%s: encoded directly: %v, want %v", tc.name, ok, tc.direct)
			continue
		}
		if err := s.encodeCallResult(&general, tc.res); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ok && direct.String() != general.String() {
			t.Errorf("%s:\ndirect  %s\ngeneral %s", tc.name, direct.String(), general.String())
		}
	}
}

// TestFastPathCallStaysOnItsSnapshot swaps the snapshot between the fast
// path's decision (this tool is no task) and the call, to one where the
// tool of the same name is a task tool with another handler: the call
// runs on the snapshot it was decided on, and the next call, decided on
// the new one, goes to the SDK path as a task.
func TestFastPathCallStaysOnItsSnapshot(t *testing.T) {
	app := agnara.New("pin", nil)
	direct := app.Capability(func(context.Context) (string, error) { return "direct", nil },
		&agnara.CapabilityOptions{Name: "direct", Description: "Answers at once."})
	tasked := app.Capability(func(context.Context) (string, error) { return "tasked", nil },
		&agnara.CapabilityOptions{Name: "tasked", Description: "Runs as a task."})
	// A task tool in both snapshots, so that the server runs tasks.
	background := app.Capability(func(context.Context) (string, error) { return "background", nil },
		&agnara.CapabilityOptions{Name: "background", Description: "Runs as a task."})
	compile := func(build func(*Exposure)) *Snapshot {
		exp := New(app)
		exp.Tool(background, &ToolOptions{Task: TaskRequired})
		build(exp)
		snap, err := exp.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	before := compile(func(e *Exposure) { e.Tool(direct, &ToolOptions{Name: "pin.work"}) })
	after := compile(func(e *Exposure) { e.Tool(tasked, &ToolOptions{Name: "pin.work", Task: TaskRequired}) })

	h, err := NewHandler(before, &HandlerOptions{Server: ServerOptions{Swappable: true}})
	if err != nil {
		t.Fatal(err)
	}
	swapped := 0
	h.fastDecided = func() {
		if swapped++; swapped == 1 {
			if err := h.Swap(after); err != nil {
				t.Error(err)
			}
		}
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	call := func() string {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pin.work","arguments":{},"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"pin","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		req, err := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "pin.work"} {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	first := call()
	if swapped != 1 || h.Snapshot() != after {
		t.Fatalf("the swap did not land between the decision and the call (hook ran %d times)", swapped)
	}
	if !strings.Contains(first, `\"result\":\"direct\"`) || strings.Contains(first, "taskId") || h.FastPathRequests() != 1 {
		t.Fatalf("decided on the old snapshot, the call answered %s (fast path answered %d)", first, h.FastPathRequests())
	}
	second := call()
	if !strings.Contains(second, "taskId") || h.FastPathRequests() != 1 {
		t.Fatalf("decided on the new snapshot, the call answered %s (fast path answered %d), want the SDK path's task", second, h.FastPathRequests())
	}
}
