package taskclient

import (
	"encoding/json"
	"strings"
	"testing"
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
