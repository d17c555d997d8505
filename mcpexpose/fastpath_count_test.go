package mcpexpose_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// countAtWrite is a response writer that notes the handler's
// FastPathRequests when the answer is first written.
type countAtWrite struct {
	*httptest.ResponseRecorder
	h       *mcpexpose.Handler
	atWrite int64
	wrote   bool
}

func (w *countAtWrite) Write(p []byte) (int, error) {
	if !w.wrote {
		w.wrote, w.atWrite = true, w.h.FastPathRequests()
	}
	return w.ResponseRecorder.Write(p)
}

// TestFastPathCountedBeforeItsAnswer: a request the edge answers is
// counted before its answer is written, so a client that has read the
// answer finds it counted (TestFastPathConformanceTraffic reads the
// count right after each answer, and once missed one counted after).
func TestFastPathCountedBeforeItsAnswer(t *testing.T) {
	app := agnara.New("hello", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(context.Context) (string, error) { return "hi", nil },
		&agnara.CapabilityOptions{Name: "greet", Description: "Greet."}), &mcpexpose.ToolOptions{Name: "greet"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	w := &countAtWrite{ResponseRecorder: httptest.NewRecorder(), h: h}
	h.ServeHTTP(w, req)
	if !w.wrote || !strings.Contains(w.Body.String(), "hi") {
		t.Fatalf("no answer written: %d %s", w.Code, w.Body)
	}
	if w.atWrite != 1 {
		t.Errorf("FastPathRequests was %d as the answer was written, want 1", w.atWrite)
	}
}
