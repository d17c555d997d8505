package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/google/go-cmp/cmp"
)

// TestOnlyTestedRevisionsAreOffered: the server negotiates and advertises
// only the revisions of mcpversion.Supported, which the tests run real
// clients at; a client asking for an older one (the SDK itself knows
// 2025-03-26 and 2024-11-05) is offered the newest handshake-era one, as
// the handshake answers any version the server does not support.
func TestOnlyTestedRevisionsAreOffered(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	url := srv.URL + "/mcp"

	t.Run("initialize", func(t *testing.T) {
		for _, tc := range []struct{ asked, want string }{
			{"2025-11-25", "2025-11-25"},
			{"2025-06-18", "2025-06-18"},
			{"2025-03-26", "2025-11-25"},
			{"2024-11-05", "2025-11-25"},
			{"2026-07-28", "2025-11-25"}, // initialize is handshake-era only
			{"1999-01-01", "2025-11-25"},
		} {
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tc.asked + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
			req, err := http.NewRequest("POST", url, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			_, raw, msg := mcptest.Do(t, req)
			res, _ := msg["result"].(map[string]any)
			if got, _ := res["protocolVersion"].(string); got != tc.want {
				t.Errorf("initialize asking %s: answered %q, want %s (%s)", tc.asked, got, tc.want, raw)
			}
		}
	})

	t.Run("server/discover", func(t *testing.T) {
		_, raw, msg := mcptest.Do(t, mcptest.Request(t, url, "server/discover", map[string]any{"_meta": mcptest.Meta(nil)}, ""))
		res, _ := msg["result"].(map[string]any)
		var got []string
		if vs, ok := res["supportedVersions"].([]any); ok {
			for _, v := range vs {
				s, _ := v.(string)
				got = append(got, s)
			}
		}
		if diff := cmp.Diff(mcpversion.Supported(), got); diff != "" {
			t.Errorf("supportedVersions (-want +got):\n%s\n%s", diff, raw)
		}
	})

	t.Run("header of an unoffered revision", func(t *testing.T) {
		for _, v := range []string{"2025-03-26", "2024-11-05"} {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{}})
			req, err := http.NewRequest("POST", url, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", v)
			resp, raw, _ := mcptest.Do(t, req)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "Unsupported protocol version (supported versions: 2026-07-28,2025-11-25,2025-06-18)") {
				t.Errorf("header %s: HTTP %d %s", v, resp.StatusCode, raw)
			}
		}
	})

	// The Go SDK client pinned to a revision the server does not offer
	// accepts the server's answer and works at it.
	for _, asked := range []string{"2025-03-26", "2024-11-05"} {
		t.Run("Go client at "+asked, func(t *testing.T) {
			cs := connect(t, url, "", asked, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != mcpversion.Handshake20251125 {
				t.Fatalf("negotiated %s, want %s", got, mcpversion.Handshake20251125)
			}
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil || toolNames(res.Tools) == "" {
				t.Fatalf("tools/list = %+v, %v", res, err)
			}
		})
	}
}
