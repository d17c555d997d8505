package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/bench/load"
	"github.com/agnara-go/agnara/mcpexpose"
)

type echoIn struct {
	Message string `json:"message"`
}

type echoOut struct {
	Message string `json:"message"`
}

// TestLoad runs the load generator through the proxy in front of the
// agnara echo server, at both eras: every call answered, none failed.
func TestLoad(t *testing.T) {
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
	mux := http.NewServeMux()
	mux.Handle(serve.Path, h)
	up := httptest.NewServer(mux)
	defer up.Close()
	p, err := proxy(up.URL + serve.Path)
	if err != nil {
		t.Fatal(err)
	}
	pmux := http.NewServeMux()
	pmux.Handle(serve.Path, p)
	front := httptest.NewServer(pmux)
	defer front.Close()
	for _, era := range []string{load.Modern, load.Legacy} {
		res, err := load.Run(context.Background(), load.Config{URL: front.URL + serve.Path, Era: era, Concurrency: 4, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("%s: %v", era, err)
		}
		if res.Calls == 0 || res.Errors != 0 {
			t.Fatalf("%s through the proxy: %d calls, %d errors", era, res.Calls, res.Errors)
		}
	}
}

// The proxy refuses an upstream off loopback, as every benchmark server does.
func TestProxyLoopbackOnly(t *testing.T) {
	if _, err := proxy("http://192.0.2.1/mcp"); err == nil {
		t.Fatal("an upstream off loopback was accepted")
	}
}
