package load

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestEvents(t *testing.T) {
	body := ": a comment\n" +
		"id: 1\ndata: \n\n" + // a priming event: empty data, skipped
		"event: message\r\nid: 2\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n" + // CRLF, two data lines, no space
		"data: {\"b\":2}" // last event, no blank line
	got := Events([]byte(body))
	want := []string{"{\"a\":\n1}", `{"b":2}`}
	if len(got) != len(want) {
		t.Fatalf("Events = %q, want %q", got, want)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
}

const okResult = `{"content":[{"type":"text","text":"{\"message\":\"hello, world\"}"}],"structuredContent":{"message":"hello, world"}}`

func TestResponse(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		wantErr                 string // "" means a result
	}{
		{"json", "application/json", `{"jsonrpc":"2.0","id":7,"result":` + okResult + `}`, ""},
		{"sse", "text/event-stream",
			"id: 0\ndata:\n\n" +
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + okResult + "}\n\n", ""},
		{"sse charset", "text/event-stream; charset=utf-8", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + okResult + "}\n\n", ""},
		{"error", "application/json", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool"}}`, "-32602"},
		{"other id", "application/json", `{"jsonrpc":"2.0","id":8,"result":{}}`, "no response"},
		{"sse without response", "text/event-stream", "id: 0\ndata:\n\n", "no response"},
		{"null result", "application/json", `{"jsonrpc":"2.0","id":7,"result":null}`, "without result"},
		{"not json", "application/json", `Bad Request`, "not JSON-RPC"},
		{"sse read as json", "application/json", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n", "not JSON-RPC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Response(tc.contentType, []byte(tc.body), 7)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := CheckEcho(res, []byte(`"hello, world"`)); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestCheckEcho(t *testing.T) {
	msg := []byte(`"hello, world"`)
	for _, tc := range []struct {
		name, result string
		ok           bool
	}{
		{"plain", okResult, true},
		{"agnara envelope", `{"content":[{"type":"text","text":"{\"result\":{\"message\":\"hello, world\"}}"}],"structuredContent":{"result":{"message":"hello, world"}},"resultType":"complete"}`, true},
		{"tool error", `{"content":[{"type":"text","text":"hello, world"}],"structuredContent":{"m":"hello, world"},"isError":true}`, false},
		{"input required", `{"resultType":"input_required","inputRequests":{}}`, false},
		{"other message", `{"content":[{"type":"text","text":"{\"message\":\"bye\"}"}],"structuredContent":{"message":"bye"}}`, false},
		{"no text", `{"content":[],"structuredContent":{"message":"hello, world"}}`, false},
		{"no structured content", `{"content":[{"type":"text","text":"{\"message\":\"hello, world\"}"}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckEcho([]byte(tc.result), msg); (err == nil) != tc.ok {
				t.Fatalf("CheckEcho = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1/mcp", "http://localhost:1/mcp", "http://[::1]:1/mcp", "http://127.1.2.3/mcp"} {
		if err := CheckLoopback(u); err != nil {
			t.Errorf("CheckLoopback(%q) = %v", u, err)
		}
	}
	for _, u := range []string{"http://example.com/mcp", "http://10.0.0.1/mcp", "http://0.0.0.0:1/mcp", "ftp://127.0.0.1/", "127.0.0.1:80"} {
		if err := CheckLoopback(u); err == nil {
			t.Errorf("CheckLoopback(%q) accepted", u)
		}
		if _, err := Run(context.Background(), Config{URL: u, Era: Modern, Concurrency: 1, Duration: time.Millisecond}); err == nil {
			t.Errorf("Run(%q) ran", u)
		}
	}
}

func TestCountsErrors(t *testing.T) {
	// Nothing listens on this port: every call fails, and is counted.
	res, err := Run(context.Background(), Config{URL: "http://127.0.0.1:1/mcp", Era: Modern, Concurrency: 2, Duration: 100 * time.Millisecond, Warmup: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors == 0 || res.Calls != 0 || len(res.ErrorSamples) == 0 {
		t.Fatalf("result %+v: want errors and no calls", res)
	}
	// A legacy run cannot even open its sessions.
	if _, err := Run(context.Background(), Config{URL: "http://127.0.0.1:1/mcp", Era: Legacy, Concurrency: 1, Duration: 10 * time.Millisecond}); err == nil {
		t.Fatal("legacy run without a server: no error")
	}
}

func TestPercentile(t *testing.T) {
	var lats []time.Duration
	for i := 1; i <= 100; i++ {
		lats = append(lats, time.Duration(i))
	}
	if p := percentile(lats, 0.5); p != 50 {
		t.Errorf("p50 = %d", p)
	}
	if p := percentile(lats, 0.99); p != 99 {
		t.Errorf("p99 = %d", p)
	}
	if p := percentile(lats[:1], 0.99); p != 1 {
		t.Errorf("p99 of one = %d", p)
	}
}
