package mcpexpose_test

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/agnara-go/agnara/mcpexpose"
)

// FuzzHandler sends arbitrary bodies and protocol headers to the HTTP
// handler (tokens on). Whatever arrives, the handler must not panic or
// hang, must answer with a status from a small known set, and must never
// run the scoped tool for a caller without its scope.
func FuzzHandler(f *testing.F) {
	// The checked-in corpus is in testdata/fuzz/FuzzHandler.
	fx, err := buildFixture()
	if err != nil {
		f.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(fx.snap, &mcpexpose.HandlerOptions{Tokens: tokens, Limits: &mcpexpose.Limits{MaxBodyBytes: 8 << 10}})
	if err != nil {
		f.Fatal(err)
	}
	allowed := map[int]bool{200: true, 202: true, 400: true, 401: true, 403: true, 404: true, 405: true, 406: true, 413: true, 415: true}
	f.Fuzz(func(t *testing.T, body []byte, version, token, origin string) {
		before := fx.built.Load()
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		// 503 is the session caps' refusal (an initialize past
		// MaxSessionsPerPrincipal, which a fuzzing run reaches), and only
		// with Retry-After.
		if !allowed[rec.Code] && (rec.Code != 503 || rec.Header().Get("Retry-After") == "") {
			t.Fatalf("status %d for body %q", rec.Code, body)
		}
		if token != "writer" && fx.built.Load() != before {
			t.Fatalf("the scoped tool's dependency was built for token %q", token)
		}
	})
}
