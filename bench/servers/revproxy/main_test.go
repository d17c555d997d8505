package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agnara-go/agnara/bench/internal/loadtest"
	"github.com/agnara-go/agnara/bench/internal/serve"
)

// TestLoad runs the load generator through the proxy in front of the
// agnara echo server, at both eras: every call answered, none failed.
func TestLoad(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(serve.Path, loadtest.Upstream(t))
	up := httptest.NewServer(mux)
	defer up.Close()
	p, err := proxy(up.URL + serve.Path)
	if err != nil {
		t.Fatal(err)
	}
	loadtest.Run(t, p, 4, 300*time.Millisecond)
}

// The proxy refuses an upstream off loopback, as every benchmark server does.
func TestProxyLoopbackOnly(t *testing.T) {
	if _, err := proxy("http://192.0.2.1/mcp"); err == nil {
		t.Fatal("an upstream off loopback was accepted")
	}
}
