package mcpexpose_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// A quiet event stream writes an SSE comment every
// Limits.StreamKeepAlive (15 s by default; 50 ms here), so that a proxy in
// front finds out when its client went away. This is a handshake-era
// session's GET stream: the SDK opens it with a comment of its own, and
// with nothing to say it is kept alive.
func ExampleLimits_streamKeepAlive() {
	app := agnara.New("hello", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(context.Context) (string, error) { return "hi", nil },
		&agnara.CapabilityOptions{Name: "hi", Description: "Says hi."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		panic(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{
		Limits: &mcpexpose.Limits{StreamKeepAlive: 50 * time.Millisecond},
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	client := &http.Client{Timeout: 10 * time.Second}
	send := func(method, session, body string) *http.Response {
		req, err := http.NewRequest(method, srv.URL, strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	// Read whole: a client that drops the initialize's answer unread
	// abandons the session it opens.
	done := func(resp *http.Response) {
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			panic(err)
		}
	}
	resp := send("POST", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	done(resp)
	session := resp.Header.Get("Mcp-Session-Id")
	done(send("POST", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	stream := send("GET", session, "")
	defer stream.Body.Close()
	fmt.Println(stream.StatusCode)
	lines := bufio.NewReader(stream.Body)
	for range 6 {
		line, err := lines.ReadString('\n')
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q\n", line)
	}
	// Output:
	// 200
	// ": ok\n"
	// "\n"
	// ": keepalive\n"
	// "\n"
	// ": keepalive\n"
	// "\n"
}
