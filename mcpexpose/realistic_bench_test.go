package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// realisticSnapshot exposes the realistic workload's quote tool, its
// input and output validated against the schemas derived from its types.
func realisticSnapshot(tb testing.TB) *mcpexpose.Snapshot {
	tb.Helper()
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	quote := func(_ context.Context, in realisticRequest) (realisticQuote, error) { return realisticCompute(in), nil }
	exp.Tool(app.Capability(quote, &agnara.CapabilityOptions{Name: "quote", Description: "Price an order."}), &mcpexpose.ToolOptions{Name: "quote"})
	snap, err := exp.Compile()
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}

// BenchmarkRealisticCall measures one tools/call of the realistic
// workload (issue 42: 2.4 KB of nested arguments, a 4.5 KB structured
// result) through the HTTP handler, in process: at 2026-07-28 through
// the edge ("modern/edge") and the SDK's route ("modern/sdk"), and on a
// 2025-11-25 session through the edge ("session/edge"). It is the
// in-process view of make bench's realistic call; compare its variants
// and runs as ratios (docs/PERFORMANCE.md).
func BenchmarkRealisticCall(b *testing.B) {
	snap := realisticSnapshot(b)
	args, err := json.Marshal(realisticSample())
	if err != nil {
		b.Fatal(err)
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	modern := []byte(callBody("1", "quote", string(args), meta))
	for _, fast := range []bool{true, false} {
		name := "modern/edge"
		if !fast {
			name = "modern/sdk"
		}
		b.Run(name, func(b *testing.B) {
			h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{DisableFastPath: !fast})
			if err != nil {
				b.Fatal(err)
			}
			header := baseHeader("tools/call", "quote")
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(modern))
				req.Header = header
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 || !bytes.Contains(rec.Body.Bytes(), []byte(`"totalCents"`)) {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
	b.Run("session/edge", func(b *testing.B) {
		const rev = "2025-11-25"
		h, err := mcpexpose.NewHandler(snap, nil)
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		c := openSessionWith(b, srv.Client(), srv.URL, "", rev, `{}`)
		header := sessionHeader(rev)
		header.Set("Mcp-Session-Id", c.id)
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quote","arguments":` + string(args) + `}}`)
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
			req.Header = header
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"totalCents"`) {
				b.Fatal(rec.Code, rec.Body.String())
			}
		}
	})
}

// TestRealisticCopyMatchesTheBench keeps this module's copy of the
// realistic workload (realistic_test.go) equal to the bench's
// (bench/internal/realistic, a module of its own that this one cannot
// import): the schemas agnara-go derives from the copy's types are the
// ones the bench derived from its own and gives every server.
func TestRealisticCopyMatchesTheBench(t *testing.T) {
	tool, err := realisticSnapshot(t).Tool("quote")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file      string
		published any
	}{
		{"input.schema.json", tool.InputSchema},
		{"output.schema.json", tool.OutputSchema},
	} {
		pub, err := json.Marshal(tc.published)
		if err != nil {
			t.Fatal(err)
		}
		bench, err := os.ReadFile(filepath.Join("..", "bench", "internal", "realistic", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(pub, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(bench, &b); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("the copy's %s differs from bench/internal/realistic/%s: keep realistic_test.go equal to bench/internal/realistic/realistic.go\ncopy: %s", tc.file, tc.file, pub)
		}
	}
}
