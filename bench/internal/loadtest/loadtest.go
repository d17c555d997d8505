// Package loadtest runs the load generator against a handler in tests,
// and serves the upstream a gateway or a proxy stands in front of.
package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/bench/internal/realistic"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/bench/load"
	"github.com/agnara-go/agnara/mcpexpose"
)

// Run serves h on a loopback test server and drives c workers at it for d
// (after a short warm-up) in both eras, with each of the workloads (none
// given: load.Echo), failing t on any error or when no call completed.
func Run(t *testing.T, h http.Handler, c int, d time.Duration, workloads ...string) {
	t.Helper()
	if len(workloads) == 0 {
		workloads = []string{load.Echo}
	}
	mux := http.NewServeMux()
	mux.Handle(serve.Path, h)
	srv := httptest.NewServer(mux) // 127.0.0.1
	defer srv.Close()
	for _, wl := range workloads {
		for _, era := range []string{load.Modern, load.Legacy} {
			t.Run(wl+"/"+era, func(t *testing.T) {
				var started, ended bool
				res, err := load.Run(context.Background(), load.Config{
					URL:         srv.URL + serve.Path,
					Era:         era,
					Workload:    wl,
					Concurrency: c,
					Duration:    d,
					Warmup:      100 * time.Millisecond,
					OnStart:     func() { started = true },
					OnEnd:       func() { ended = true },
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Log(res)
				if res.Errors != 0 {
					t.Errorf("%d errors, e.g. %q", res.Errors, res.ErrorSamples)
				}
				if res.Calls == 0 || res.ReqPerSec <= 0 || res.P50 <= 0 || res.P99 < res.P50 {
					t.Errorf("implausible result %+v", res)
				}
				if res.Workload != wl {
					t.Errorf("result of workload %q, want %q", res.Workload, wl)
				}
				if !started || !ended {
					t.Errorf("OnStart called: %v, OnEnd called: %v", started, ended)
				}
			})
		}
	}
}

// RefusesInvalidQuotes checks that h validates the realistic workload's
// input: a 2026-07-28 call of quote whose order breaks the schema in one
// place (each case a different keyword, deep in the order) is answered
// with a JSON-RPC error or a tool error, never a quote; the same call with
// the sample order as it is gets the expected quote.
func RefusesInvalidQuotes(t *testing.T, h http.Handler) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(serve.Path, h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []struct {
		name string
		edit func(r *realistic.Request) any
	}{
		{"valid", func(r *realistic.Request) any { return r }},
		{"quantity below minimum", func(r *realistic.Request) any { r.Items[7].Quantity = 0; return r }},
		{"category not in enum", func(r *realistic.Request) any { r.Items[11].Category = "toys"; return r }},
		{"sku off pattern", func(r *realistic.Request) any { r.Items[3].SKU = "sft-0300"; return r }},
		{"too many tags", func(r *realistic.Request) any {
			r.Items[0].Tags = strings.Fields("a b c d e f g h i")
			return r
		}},
		{"country not in enum", func(r *realistic.Request) any { r.Customer.Shipping.Country = "XX"; return r }},
		{"field missing", func(r *realistic.Request) any {
			b, _ := json.Marshal(r)
			var v map[string]any
			_ = json.Unmarshal(b, &v)
			delete(v["customer"].(map[string]any)["billing"].(map[string]any), "postcode")
			return v
		}},
		{"unknown field", func(r *realistic.Request) any {
			b, _ := json.Marshal(r)
			var v map[string]any
			_ = json.Unmarshal(b, &v)
			v["items"].([]any)[5].(map[string]any)["colour"] = "red"
			return v
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := realistic.Sample()
			body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
				"name": realistic.ToolName, "arguments": tc.edit(&r),
				"_meta": map[string]any{
					"io.modelcontextprotocol/protocolVersion":    load.ModernVersion,
					"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "loadtest", "version": "1"},
					"io.modelcontextprotocol/clientCapabilities": map[string]any{},
				},
			}})
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+serve.Path, bytes.NewReader(body))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"Mcp-Protocol-Version": load.ModernVersion, "Mcp-Method": "tools/call", "Mcp-Name": realistic.ToolName} {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			result, err := load.Response(resp.Header.Get("Content-Type"), out, 1)
			if tc.name == "valid" {
				if err == nil {
					err = load.CheckRealistic(result)
				}
				if err != nil {
					t.Fatalf("the sample order: %v", err)
				}
				return
			}
			if err != nil {
				if !strings.Contains(err.Error(), "JSON-RPC error") {
					t.Fatalf("HTTP %d: %v", resp.StatusCode, err)
				}
				return // refused with a JSON-RPC error
			}
			var r2 struct {
				IsError bool `json:"isError"`
			}
			if err := json.Unmarshal(result, &r2); err != nil || !r2.IsError {
				t.Fatalf("an invalid order was answered: %.300s", result)
			}
		})
	}
}

type echoIn struct {
	Message string `json:"message"`
}

type echoOut struct {
	Message string `json:"message"`
}

// Upstream is the agnara benchmark server's echo (servers/agnara), for a
// test to put a gateway or a proxy in front of.
func Upstream(t testing.TB) http.Handler {
	t.Helper()
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(_ context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil },
		&agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
