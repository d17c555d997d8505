package taskclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/internal/mcpversion"
)

func TestResultOf(t *testing.T) {
	handle := `{"resultType":"task","taskId":"abc","status":"working"}`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"json", `{"jsonrpc":"2.0","id":1,"result":` + handle + `}`, handle},
		{"sse", "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + handle + "}\n\n", handle},
		{"sse after a notification", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n" + "data: \"result\":" + handle + "}\n\n", handle},
		{"sse without the final blank line", "data:{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + handle + "}", handle},
		{"an error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}`, ""},
		{"not json", "garbage", ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(resultOf([]byte(tc.body))); got != tc.want {
				t.Errorf("resultOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCaptureIsBounded(t *testing.T) {
	var c capture
	// A whole answer, past the bound: a direct result, never read.
	c.write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"pad":"`))
	c.write([]byte(strings.Repeat("x", handleLimit)))
	c.write([]byte(`"}}`))
	if got := c.result(); got != nil {
		t.Errorf("an answer past the bound gave %q", got)
	}
	c.reset()
	c.write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	if got := string(c.result()); got != "{}" {
		t.Errorf("after reset: %q", got)
	}
}

// FuzzResultOf: whatever a server sends, resultOf does not panic and
// returns JSON or nothing.
func FuzzResultOf(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"a","status":"working"}}`))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	f.Add([]byte("data:\ndata: x\n\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if r := resultOf(body); r != nil && !json.Valid(r) {
			t.Errorf("resultOf(%q) = %q, not JSON", body, r)
		}
	})
}

// raw is a result sent as encoded.
type raw struct {
	mcp.ResultBase
	body string
}

func (r *raw) MarshalJSON() ([]byte, error) { return []byte(r.body), nil }

type params struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// TestCallCancelsATaskItCannotFollow: a tasks/get answer the client cannot
// read ends the call, and the task is cancelled rather than left running
// with nobody to read its result.
func TestCallCancelsATaskItCannotFollow(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "job", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("not reached: the middleware answers")
	})
	unrouted := func(context.Context, *mcp.ServerSession, *params) (*raw, error) {
		return nil, errors.New("not reached")
	}
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if err := mcp.AddReceivingCustomMethod(srv, m, unrouted); err != nil {
			t.Fatal(err)
		}
	}
	cancelled := make(chan string, 1)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				return &raw{body: `{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":1}`}, nil
			case "tasks/get": // a question of a kind no client knows
				return &raw{body: `{"resultType":"complete","taskId":"t1","status":"input_required","inputRequests":{"q":{"method":"nobody/knows","params":{}}}}`}, nil
			case "tasks/cancel":
				cancelled <- req.GetParams().(*params).TaskID
				return &raw{body: `{"resultType":"complete"}`}, nil
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{mcpversion.TasksExtension: map[string]any{}}}})
	if err := Register(client); err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: Wrap(nil), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var seen []string
	_, task, err := Call(t.Context(), cs, &mcp.CallToolParams{Name: "job", Arguments: map[string]any{}}, &Options{Observe: func(t *Task) { seen = append(seen, t.Status) }})
	if err == nil || task == nil || task.TaskID != "t1" || len(seen) != 1 || seen[0] != Working {
		t.Fatalf("Call = %v, %+v, saw %v; want an error after the task was created", err, task, seen)
	}
	select {
	case id := <-cancelled:
		if id != "t1" {
			t.Errorf("cancelled %q", id)
		}
	default:
		t.Fatalf("the task was not cancelled (error %v)", err)
	}
}
