package agnaratest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// linkApp exposes link, which sends its user to page and waits, on its
// own side, for the page to be visited before it says the sign-in is
// done: a third party's sign-in in miniature.
func linkApp(t *testing.T, page string, visited <-chan struct{}) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("link", nil)
	t.Cleanup(func() { app.Close() })
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(ec *execution.Context) (string, error) {
		if err := ec.AskURL("link.signin", "Sign in to the calendar", page); err != nil {
			return "", err
		}
		select {
		case <-visited:
		case <-ec.Done():
			return "", ec.Err()
		}
		if err := ec.URLDone("link.signin"); err != nil {
			return "", err
		}
		return "linked", nil
	}, &agnara.CapabilityOptions{Name: "link", Description: "Links the calendar."}), &mcpexpose.ToolOptions{Name: "link"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestOpenURL: a client with OpenURL is asked to open the page, at both
// eras; the test's answerer visits it, which is what the capability waits
// for, and accepts. Declining ends the call forbidden; a client without
// OpenURL does not declare url mode, and the server refuses the call
// naming elicitation.url.
func TestOpenURL(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			visited := make(chan struct{}, 1)
			page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("flow") == "f7" {
					visited <- struct{}{}
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(page.Close)
			pageURL := page.URL + "/signin?flow=f7"
			snap := linkApp(t, pageURL, visited)

			visit := func(ctx context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				req, err := http.NewRequestWithContext(ctx, "GET", q.URL, nil)
				if err != nil {
					return nil, err
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return nil, err
				}
				resp.Body.Close()
				return agnaratest.Accept(nil)(ctx, q)
			}
			c := agnaratest.NewClient(t, snap, &agnaratest.Options{ProtocolVersion: era, OpenURL: visit})
			var got string
			c.CallValue(t, "link", nil, &got)
			if got != "linked" {
				t.Errorf("link = %q", got)
			}
			q := c.Questions()
			if len(q) != 1 || q[0].Mode != "url" || q[0].URL != pageURL || q[0].Message != "Sign in to the calendar" {
				t.Errorf("asked %+v", q)
			}

			declines := agnaratest.NewClient(t, snap, &agnaratest.Options{ProtocolVersion: era, OpenURL: agnaratest.Decline()})
			if f, ok := declines.Call(t, "link", nil).(*execution.Failure); !ok || f.Code != execution.Forbidden {
				t.Errorf("declined: %+v, want forbidden", f)
			}

			formsOnly := agnaratest.NewClient(t, snap, &agnaratest.Options{ProtocolVersion: era, Answer: agnaratest.Confirm()})
			out, err := formsOnly.CallTool(t.Context(), "link", nil)
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(je.Data), `"elicitation":{"url":{}}`) {
				t.Errorf("a client without OpenURL: %v, %v; want -32021 naming elicitation.url", out, err)
			}
		})
	}
}
