package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEncodeTextResult holds the edge's direct encoding of text
// results to the SDK's own encoding (callResult), and fails when the
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
	s, err := NewEncoder(&mcp.Implementation{Name: "enc", Version: "1.0<&>\u2028"})
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
		{"success", &mcp.CallToolResult{Content: text(`{"result":{"a":"<b>&\u2028"}}`), StructuredContent: json.RawMessage(`{"result":{"a":"<b>&\u2028"}}`)}, true},
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
		ok := s.textResult(&direct, tc.res, true)
		if ok != tc.direct {
			t.Errorf("%s: encoded directly: %v, want %v", tc.name, ok, tc.direct)
			continue
		}
		if err := s.callResult(&general, tc.res); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ok && direct.String() != general.String() {
			t.Errorf("%s:\ndirect  %s\ngeneral %s", tc.name, direct.String(), general.String())
		}
		// In the handshake era the SDK sends the result as its own
		// encoding writes it, without the 2026-07-28 annotations.
		var legacy bytes.Buffer
		if s.textResult(&legacy, tc.res, false) != tc.direct {
			t.Errorf("%s: encoded directly at the handshake era: %v, want %v", tc.name, !tc.direct, tc.direct)
			continue
		}
		sdk, err := json.Marshal(tc.res)
		if err != nil {
			t.Fatal(err)
		}
		if tc.direct && legacy.String() != string(sdk) {
			t.Errorf("%s, handshake era:\ndirect %s\nsdk    %s", tc.name, legacy.String(), sdk)
		}
	}
}

// FuzzTextResult holds textResult's own writing of texts and structured
// content (appendQuoted, appendRaw) to the SDK's encoding of the result,
// for any text and any bytes as structured content: equal when both
// encode it, refused by both when json.Marshal refuses it; and appendRaw
// never accepts what json.Marshal refuses.
func FuzzTextResult(f *testing.F) {
	for _, seed := range []string{
		`{"result":{"a":"<b>&\u2028","b":[1,-0.5e+10,true,false,null],"c":{}}}`, "\"\xe2\x80\xa8\xe2\x80\xa9\xff\"",
		` {"a":1}`, `{"a":1,}`, `[1 ,2]`, `01`, `1.`, `-`, `"\u12G4"`, `"\x01"`, `{"a"}`, `[[[[]]]]`, `nul`, `"\/\b\f\n\r\t"`,
	} {
		f.Add(seed, []byte(seed))
	}
	s, err := NewEncoder(&mcp.Implementation{Name: "enc", Version: "1"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, raw []byte) {
		want, werr := json.Marshal(json.RawMessage(raw))
		if got, ok := appendRaw(nil, raw); ok && (werr != nil || string(got) != string(want)) {
			t.Fatalf("%q: appendRaw %q, json.Marshal %q (%v)", raw, got, want, werr)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}
		sdk, serr := json.Marshal(res)
		var direct bytes.Buffer
		ok := s.textResult(&direct, res, false)
		if ok != (serr == nil) || (ok && direct.String() != string(sdk)) {
			t.Fatalf("%q, %q:\ndirect %s (%v)\nsdk    %s (%v)", text, raw, direct.String(), ok, sdk, serr)
		}
	})
}
