package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agnara-go/agnara/bench/internal/loadtest"
	"github.com/agnara-go/agnara/bench/internal/serve"
)

func TestLoad(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(serve.Path, loadtest.Upstream(t))
	up := httptest.NewServer(mux)
	defer up.Close()
	h, c, err := proxy(context.Background(), up.URL+serve.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // before up.Close, which waits for the client's streams
	loadtest.Run(t, h, 2, 300*time.Millisecond)
}

func TestRefusesNonLoopbackUpstream(t *testing.T) {
	if _, _, err := proxy(context.Background(), "http://192.0.2.1/mcp"); err == nil {
		t.Fatal("a non-loopback upstream was accepted")
	}
}
