package mcpexpose_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestURLElicitationWithTheGoClient has the Go SDK client call the
// signin tool, which asks its user to open a page (ADR 0078), on the edge
// and on the SDK's route, at each revision: at 2025-11-25 the question
// carries a fresh elicitation id and the completion names the same id; at
// 2026-07-28 it carries none and there is no completion. A client that did
// not declare url mode is never asked: -32021 names elicitation.url.
func TestURLElicitationWithTheGoClient(t *testing.T) {
	edgeApp, sdkApp := newDiffApp(t), newDiffApp(t)
	edgeH, _, edgeURL, sdkURL := servePair(t, edgeApp.snap, sdkApp.snap, mcpexpose.HandlerOptions{})
	for _, route := range []struct{ name, url string }{{"edge", edgeURL}, {"sdk", sdkURL}} {
		for _, tc := range []struct {
			version string
			action  string
			wantID  bool
		}{
			{"2025-11-25", "accept", true},
			{"2025-11-25", "decline", true},
			{"", "accept", false},
			{"", "cancel", false},
		} {
			t.Run(route.name+"/"+tc.version+"/"+tc.action, func(t *testing.T) {
				var mu sync.Mutex
				var asked []*mcp.ElicitParams
				done := make(chan string, 1)
				cs := connect(t, route.url, "", tc.version, &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						asked = append(asked, req.Params)
						mu.Unlock()
						return &mcp.ElicitResult{Action: tc.action}, nil
					},
					ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
						done <- req.Params.ElicitationID
					},
				})
				before := edgeH.FastPathRequests()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "signin", Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				if route.name == "edge" && edgeH.FastPathRequests() == before {
					t.Error("the edge did not answer the call")
				}
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 1 {
					t.Fatalf("asked %d questions, want 1", len(asked))
				}
				q := asked[0]
				if q.Mode != "url" || q.URL != signinURL || q.Message != "Sign in to <Example> & come back" || q.RequestedSchema != nil {
					t.Errorf("asked %+v", q)
				}
				if got := q.ElicitationID != ""; got != tc.wantID {
					t.Errorf("elicitation id %q, want one: %v", q.ElicitationID, tc.wantID)
				}
				if tc.wantID && len(q.ElicitationID) < 26 {
					t.Errorf("elicitation id %q is too short to be unguessable", q.ElicitationID)
				}
				if tc.action != "accept" {
					if !res.IsError || textOf(t, res) == "" {
						t.Errorf("a %s answered %+v, want a forbidden failure", tc.action, res)
					}
					return
				}
				if res.IsError || textOf(t, res) != `{"result":"signed in"}` {
					t.Errorf("result %+v", res)
				}
				if !tc.wantID {
					return
				}
				select {
				case id := <-done:
					if id != q.ElicitationID {
						t.Errorf("completed %q, asked %q", id, q.ElicitationID)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("no notifications/elicitation/complete")
				}
			})
		}
		for _, version := range []string{"2025-11-25", ""} {
			t.Run(route.name+"/"+version+"/form-only client", func(t *testing.T) {
				cs := connect(t, route.url, "", version, &mcp.ClientOptions{
					ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						t.Error("a client without url mode was asked")
						return &mcp.ElicitResult{Action: "decline"}, nil
					},
				})
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "signin", Arguments: map[string]any{}})
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities || string(rpcErr.Data) != `{"requiredCapabilities":{"elicitation":{"url":{}}}}` {
					t.Errorf("error = %v (data %s), want -32021 naming elicitation.url", err, dataOf(rpcErr))
				}
			})
		}
	}
}

func dataOf(e *jsonrpc.Error) string {
	if e == nil {
		return ""
	}
	return string(e.Data)
}
