package mcpimport_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
)

// upstreamPage is the page the upstream sends its users to.
const upstreamPage = "https://upstream.example.com/oauth/start?flow=u7"

// urlUpstream is an upstream whose tool link asks its caller to open
// upstreamPage: on a handshake-era session with elicitation/create (id
// "up-1"), then, accepted, notifications/elicitation/complete; at
// 2026-07-28 as an input request in url mode.
func urlUpstream() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "calendar", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	srv.AddTool(&mcp.Tool{Name: "link", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["signin"]; ok {
			return &mcp.CallToolResult{Content: text("linked: " + r.(*mcp.ElicitResult).Action)}, nil
		}
		if req.ProtocolVersion() >= "2026-07-28" {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"signin": &mcp.ElicitParams{Mode: "url", Message: "Sign in to the calendar", URL: upstreamPage}}}, nil
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in to the calendar", URL: upstreamPage, ElicitationID: "up-1"})
		if err != nil {
			return nil, err
		}
		if res.Action == "accept" {
			if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: "up-1"}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: text("linked: " + res.Action)}, nil
	})
	return srv
}

// TestGatewayRelaysURLElicitation imports a real upstream that asks a URL
// elicitation, re-exposes it through mcpexpose on loopback HTTP, and calls
// it with the Go SDK client declaring url mode, for each pairing of
// upstream and caller revisions. The caller is asked to open the
// upstream's page, as the upstream put it, under the gateway's own
// elicitation id at 2025-11-25 (none at 2026-07-28); a handshake-era
// upstream's completion reaches a handshake-era caller under that id. A
// caller that did not declare url mode is refused, and the upstream's
// question is never shown to it.
func TestGatewayRelaysURLElicitation(t *testing.T) {
	for _, tc := range []struct {
		name, upstream, caller string
		urlMode                bool
		action                 string
		want                   string // in the result's text
		wantDone               bool
	}{
		{"handshake both ends", "2025-11-25", "2025-11-25", true, "accept", "linked: accept", true},
		{"handshake both ends, declined", "2025-11-25", "2025-11-25", true, "decline", "linked: decline", false},
		{"modern both ends", "2026-07-28", "", true, "accept", "linked: accept", false},
		{"modern upstream, handshake caller", "2026-07-28", "2025-11-25", true, "cancel", "linked: cancel", false},
		{"handshake upstream, modern caller", "2025-11-25", "", true, "accept", "linked: accept", false},
		{"a caller without url mode", "2026-07-28", "", false, "", "mcp_question_refused", false},
		{"a handshake caller without url mode", "2025-11-25", "2025-11-25", false, "", "mcp_question_refused", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := urlUpstream().Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ss.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sess, err := mcpimport.Connect(ctx, "calendar", ct, &mcpimport.ConnectOptions{SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: tc.upstream}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sess.Close() })
			cat, err := mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{"link": {Name: "link", Title: "Link", NoScopeValidator: true}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			app := agnara.New("gw", nil)
			exp := mcpexpose.New(app)
			for _, c := range cat.Register(app) {
				exp.Tool(c, nil)
			}
			snap, err := exp.Compile()
			if err != nil {
				t.Fatal(err)
			}
			h, err := mcpexpose.NewHandler(snap, nil)
			if err != nil {
				t.Fatal(err)
			}
			gw := httptest.NewServer(h)
			t.Cleanup(gw.Close)

			var mu sync.Mutex
			var asked []*mcp.ElicitParams
			done := make(chan string, 1)
			modes := &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
			if tc.urlMode {
				modes.URL = &mcp.URLElicitationCapabilities{}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Elicitation: modes},
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
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gw.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: tc.caller})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gw.link", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(got, tc.want) || res.IsError != !tc.urlMode {
				t.Errorf("result %q (isError %v), want %q", got, res.IsError, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if !tc.urlMode {
				if len(asked) != 0 {
					t.Errorf("a caller without url mode was asked %+v", asked)
				}
				return
			}
			if len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != upstreamPage || asked[0].Message != "Sign in to the calendar" {
				t.Fatalf("asked %+v", asked)
			}
			id := asked[0].ElicitationID
			if handshake := tc.caller != ""; (id != "") != handshake || id == "up-1" {
				t.Errorf("the caller's elicitation id is %q: want the gateway's own at 2025-11-25, none at 2026-07-28", id)
			}
			if !tc.wantDone {
				return
			}
			select {
			case got := <-done:
				if got != id {
					t.Errorf("completed %q, asked %q", got, id)
				}
			case <-ctx.Done():
				t.Fatal("the upstream's completion did not reach the caller")
			}
		})
	}
}
