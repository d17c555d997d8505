//lint:file-ignore SA1019 the reproduction reads the deprecated sampling and roots capabilities on purpose: clients still declare them.

package hotspots

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client capabilities of the `_meta` reproduction: none, and a client that
// declares every capability group.
const (
	capsEmpty = `{}`
	capsFull  = `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},` +
		`"experimental":{"x":{"a":1}},"extensions":{"io.example/ext":{"b":true}}}`
)

// wireMeta returns a 2026-07-28 `_meta` triple as it reaches a handler:
// decoded from JSON, so each value is a map[string]any or a string.
func wireMeta(tb testing.TB, caps string) mcp.Meta {
	tb.Helper()
	data := `{"` + mcp.MetaKeyProtocolVersion + `":"2026-07-28",` +
		`"` + mcp.MetaKeyClientInfo + `":{"name":"c","version":"1"},` +
		`"` + mcp.MetaKeyClientCapabilities + `":` + caps + `}`
	var m mcp.Meta
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// typedMeta is the same triple with the client info as the typed value the
// accessors look for first. (Client capabilities cannot be given typed from
// outside the SDK: the accessor looks for an unexported type.)
func typedMeta() mcp.Meta {
	return mcp.Meta{
		mcp.MetaKeyProtocolVersion: "2026-07-28",
		mcp.MetaKeyClientInfo:      &mcp.Implementation{Name: "c", Version: "1"},
	}
}

func callRequest(meta mcp.Meta) *mcp.CallToolRequest {
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta, Name: "t"}}
}

// BenchmarkRequestMetaAccessors calls ServerRequest's ProtocolVersion,
// ClientInfo and ClientCapabilities on a tools/call request. On a request
// that came off the wire, Params.Meta holds map[string]any values, and
// ClientInfo and ClientCapabilities re-encode the value with encoding/json
// and decode it again with the SDK's unmarshal (a new decoder and its 32 KiB
// buffer) on every call: decodeMetaValue → remarshal in mcp/shared.go.
// ProtocolVersion reads a string and is the control. With a typed value in
// the map, ClientInfo is a type assertion.
func BenchmarkRequestMetaAccessors(b *testing.B) {
	b.Run("ProtocolVersion/wire", func(b *testing.B) {
		r := callRequest(wireMeta(b, capsEmpty))
		b.ReportAllocs()
		for b.Loop() {
			if r.ProtocolVersion() == "" {
				b.Fatal("no protocol version")
			}
		}
	})
	b.Run("ClientInfo/typed", func(b *testing.B) {
		r := callRequest(typedMeta())
		b.ReportAllocs()
		for b.Loop() {
			if r.ClientInfo() == nil {
				b.Fatal("no client info")
			}
		}
	})
	b.Run("ClientInfo/wire", func(b *testing.B) {
		r := callRequest(wireMeta(b, capsEmpty))
		b.ReportAllocs()
		for b.Loop() {
			if r.ClientInfo() == nil {
				b.Fatal("no client info")
			}
		}
	})
	for _, c := range []struct{ name, caps string }{{"empty", capsEmpty}, {"full", capsFull}} {
		b.Run("ClientCapabilities/wire/caps="+c.name, func(b *testing.B) {
			r := callRequest(wireMeta(b, c.caps))
			b.ReportAllocs()
			for b.Loop() {
				if r.ClientCapabilities() == nil {
					b.Fatal("no client capabilities")
				}
			}
		})
	}
}

// TestRequestMetaAccessors checks that the benchmark's requests carry what
// the accessors are expected to find.
func TestRequestMetaAccessors(t *testing.T) {
	r := callRequest(wireMeta(t, capsFull))
	if v := r.ProtocolVersion(); v != "2026-07-28" {
		t.Errorf("ProtocolVersion = %q", v)
	}
	if ci := r.ClientInfo(); ci == nil || ci.Name != "c" {
		t.Errorf("ClientInfo = %+v", ci)
	}
	caps := r.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Sampling == nil || caps.RootsV2 == nil || len(caps.Extensions) != 1 {
		t.Errorf("ClientCapabilities = %+v", caps)
	}
	if ci := callRequest(typedMeta()).ClientInfo(); ci == nil || ci.Name != "c" {
		t.Errorf("typed ClientInfo = %+v", ci)
	}
}
