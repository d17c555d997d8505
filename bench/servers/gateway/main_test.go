package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agnara-go/agnara/bench/internal/loadtest"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/bench/load"
)

func TestLoad(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("upstream="+version, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle(serve.Path, loadtest.Upstream(t))
			up := httptest.NewServer(mux)
			defer up.Close()
			h, sess, err := gateway(context.Background(), up.URL+serve.Path, version)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close() // before up.Close, which waits for the session's streams
			loadtest.Run(t, h, 2, 300*time.Millisecond)
		})
	}
}

func TestRefusesNonLoopbackUpstream(t *testing.T) {
	if _, _, err := gateway(context.Background(), "http://192.0.2.1/mcp", ""); err == nil {
		t.Fatal("a non-loopback upstream was accepted")
	}
}

// BenchmarkCall measures one modern tools/call of echo over loopback HTTP,
// directly at the upstream and through the gateway, both in this process:
// the difference of the two is what the gateway adds (allocations exact,
// times only indicative).
func BenchmarkCall(b *testing.B) {
	mux := http.NewServeMux()
	mux.Handle(serve.Path, loadtest.Upstream(b))
	up := httptest.NewServer(mux)
	defer up.Close()
	h, sess, err := gateway(context.Background(), up.URL+serve.Path, "")
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	gmux := http.NewServeMux()
	gmux.Handle(serve.Path, h)
	gw := httptest.NewServer(gmux)
	defer gw.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, world"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"via-gateway", gw.URL}} {
		b.Run(target.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, target.url+serve.Path, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", load.ModernVersion)
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "echo")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				out, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("hello, world")) {
					b.Fatalf("HTTP %d %v: %s", resp.StatusCode, err, out)
				}
			}
		})
	}
}
