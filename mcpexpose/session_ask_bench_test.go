package mcpexpose_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// BenchmarkSessionAsk measures, on a 2025-11-25 session over loopback
// HTTP, one client at a time, a plain tools/call ("plain"), a call whose
// tool asks one confirmation that the client answers ("asks": the call's
// POST, the question on its stream, the answer's POST, the plan run
// again with the answer), and the round trip the question adds
// ("roundtrip": a POST of a JSON-RPC response to the session, answered
// 202), and a plain call that sends one event before its answer
// ("tells": a progress report, as an asking call sends its question),
// with the edge answering the calls and without it (DisableFastPath).
// Issue 39 asks that asks ≤ plain + roundtrip (each wall time per op,
// client included, on the same machine); by construction an asking call
// also sends one more event and runs its plan once more (ADR 74), so
// the target measured here is asks ≤ tells + roundtrip + one invocation.
func BenchmarkSessionAsk(b *testing.B) {
	app := agnara.New("ask", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(_ context.Context, in benchIn) (benchOut, error) { return benchOut(in), nil },
		&agnara.CapabilityOptions{Name: "plain", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "plain"})
	exp.Tool(app.Capability(func(_ context.Context, in benchIn) (benchOut, error) { return benchOut(in), nil },
		&agnara.CapabilityOptions{Name: "confirmed", Description: "Echo, once confirmed.", Confirm: "Echo it?", AnyoneMayCall: true, Annotations: agnara.Destructive}), &mcpexpose.ToolOptions{Name: "confirmed"})
	// A plain call that tells its client one thing first (a progress
	// event on its stream), as an asking call tells its question.
	exp.Tool(app.Capability(func(ctx context.Context, in benchIn) (benchOut, error) {
		ec, _ := execution.FromContext(ctx)
		ec.Progress(1, 1, "")
		return benchOut(in), nil
	}, &agnara.CapabilityOptions{Name: "tells", Description: "Echo, after one progress report."}), &mcpexpose.ToolOptions{Name: "tells"})
	snap, err := exp.Compile()
	if err != nil {
		b.Fatal(err)
	}
	const rev = "2025-11-25"
	for _, edge := range []bool{true, false} {
		name := "edge"
		if !edge {
			name = "sdk"
		}
		h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{DisableFastPath: !edge})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(h)
		c := openSessionWith(b, srv.Client(), srv.URL, "", rev, askCaps)
		post := func(body string) *http.Response {
			req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			req.Header = sessionHeader(rev)
			req.Header.Set("Mcp-Session-Id", c.id)
			resp, err := c.client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			return resp
		}
		b.Run(name+"/plain", func(b *testing.B) {
			for b.Loop() {
				resp := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{"message":"hi"}}}`)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), `"result"`) {
					b.Fatal(string(body))
				}
			}
		})
		b.Run(name+"/tells", func(b *testing.B) {
			for b.Loop() {
				resp := post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tells","arguments":{"message":"hi"},"_meta":{"progressToken":"p"}}}`)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), `"notifications/progress"`) || !strings.Contains(string(body), `"id":3,"result"`) {
					b.Fatal(string(body))
				}
			}
		})
		b.Run(name+"/asks", func(b *testing.B) {
			for b.Loop() {
				resp := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirmed","arguments":{"message":"hi"}}}`)
				r := bufio.NewReader(resp.Body)
				answered := false
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						b.Fatalf("the call's stream ended before its answer: %v", err)
					}
					if !strings.HasPrefix(line, "data: {") {
						continue
					}
					if !answered && strings.Contains(line, `"method":"elicitation/create"`) {
						id := line[strings.Index(line, `"id":`)+len(`"id":`):]
						id = id[:strings.Index(id, `,"method"`)]
						a := post(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{"confirm":true}}}`)
						a.Body.Close()
						answered = true
						continue
					}
					if strings.Contains(line, `"id":2,"result"`) {
						break
					}
				}
				resp.Body.Close()
			}
		})
		b.Run(name+"/roundtrip", func(b *testing.B) {
			for b.Loop() {
				resp := post(`{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					b.Fatal(resp.StatusCode)
				}
			}
		})
		srv.Close()
	}
}
