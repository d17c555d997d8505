package mcpexpose

import (
	"testing"

	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFastPathCapsMemo: calls with the same _meta bytes read their client
// capabilities once (the SDK's reading, memoised); another _meta is read
// anew, and one over the memo's bound always.
func TestFastPathCapsMemo(t *testing.T) {
	h := &Handler{}
	read := func(meta string) *mcp.ClientCapabilities {
		t.Helper()
		decoded, ok := wire.ModernMeta([]byte(meta))
		if !ok {
			t.Fatalf("ModernMeta refused %s", meta)
		}
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: decoded, Name: "t"}}
		e := &edgeCaps{h: h, req: req, meta: []byte(meta)}
		got := e.caps()
		if want := req.ClientCapabilities(); (got == nil) != (want == nil) || got != nil && (got.Elicitation == nil) != (want.Elicitation == nil) {
			t.Fatalf("caps of %s: %+v, the SDK reads %+v", meta, got, want)
		}
		return got
	}
	const a = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	const b = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	first := read(a)
	if again := read(a); again != first {
		t.Error("the same _meta was read again instead of from the memo")
	}
	if other := read(b); other == first || other.Elicitation != nil {
		t.Errorf("another _meta was answered from the memo: %+v", other)
	}
	if read(a) == first {
		t.Error("the memo answered for a _meta it no longer holds")
	}
	big := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"` + pad(maxMemoMeta) + `","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	if x, y := read(big), read(big); x == y {
		t.Error("a _meta over the memo's bound was memoised")
	}
}

func pad(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}
