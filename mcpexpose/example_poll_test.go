package mcpexpose_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// With Limits.PollAfter, a 2025-11-25 call that outlasts it has its POST's
// stream ended: a priming event, then a close event whose retry: field is
// PollRetry, and no answer. The call goes on; the client resumes the
// stream with a GET carrying the priming event's id as Last-Event-ID, and
// gets the answer there. A long call then holds no connection.
func ExampleLimits_pollAfter() {
	done := make(chan struct{})
	app := agnara.New("reports", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(context.Context) (string, error) {
		<-done // a long report
		return "ready", nil
	}, &agnara.CapabilityOptions{Name: "build", Description: "Builds the report."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		panic(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{
		Limits: &mcpexpose.Limits{PollAfter: 10 * time.Millisecond, PollRetry: 2 * time.Second},
	})
	if err != nil {
		panic(err)
	}
	do := func(method, session, lastEventID, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	init := do("POST", "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	session := init.Header().Get("Mcp-Session-Id")
	do("POST", session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	post := do("POST", session, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reports.build","arguments":{}}}`)
	var primed string
	sc := bufio.NewScanner(post.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "), strings.HasPrefix(line, "retry: "):
			fmt.Println(line)
		case strings.HasPrefix(line, "id: ") && primed == "":
			primed = strings.TrimPrefix(line, "id: ")
		case strings.Contains(line, `"result"`):
			fmt.Println("the answer came on the polled POST")
		}
	}

	close(done)
	get := do("GET", session, primed, "")
	fmt.Println(strings.Contains(get.Body.String(), `{"result":"ready"}`))
	// Output:
	// event: prime
	// event: close
	// retry: 2000
	// true
}
