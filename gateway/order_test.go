package gateway_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/gateway"
)

// seenAtLog is a slog.Handler that notes, for each record whose message
// starts with one of prefixes, the state its upstream was in as the line
// was written: a line that explains a state must be written before the
// state can be seen (a reader who sees the state then finds the line).
type seenAtLog struct {
	g        *atomic.Pointer[gateway.Gateway]
	upstream string
	prefixes []string
	mu       *sync.Mutex
	states   *[]gateway.State
}

func (h seenAtLog) Enabled(context.Context, slog.Level) bool { return true }
func (h seenAtLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h seenAtLog) WithGroup(string) slog.Handler            { return h }
func (h seenAtLog) Handle(_ context.Context, r slog.Record) error {
	g := h.g.Load()
	if g == nil {
		return nil
	}
	for _, p := range h.prefixes {
		if strings.HasPrefix(r.Message, p) {
			st := state(g, h.upstream).State
			h.mu.Lock()
			*h.states = append(*h.states, st)
			h.mu.Unlock()
		}
	}
	return nil
}

// TestUpstreamStateLoggedBeforeItIsSeen: the line that says an upstream
// failed, or is down and retried, is written before the state is
// published, so that whoever sees the state (a test, /readyz, an
// operator's status call) finds the line explaining it. Written after, a
// test waiting for the state and counting the lines failed under load.
func TestUpstreamStateLoggedBeforeItIsSeen(t *testing.T) {
	closed := func() string { // a loopback port nobody listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr + "/mcp"
	}
	for _, tc := range []struct {
		name   string
		prefix string
		up     func(t *testing.T) (gateway.Upstream, func())
		want   gateway.State
	}{
		{name: "failed", prefix: "upstream failed", want: gateway.StateFailed,
			up: func(t *testing.T) (gateway.Upstream, func()) {
				s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
				for _, name := range []string{"pid", "other"} {
					mcp.AddTool(s, &mcp.Tool{Name: name, Description: "a number"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
						return nil, textOut{"1"}, nil
					})
				}
				up := gateway.Upstream{Name: "self", Prefix: "self_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)}, Tools: []gateway.Tool{readTool("pid"), readTool("other")},
					Restart: gateway.Restart{Min: gateway.Duration(time.Millisecond), Max: gateway.Duration(time.Millisecond)}}
				return up, func() { s.RemoveTools("other") } // a strict binding lost: failed
			}},
		{name: "down", prefix: "upstream down", want: gateway.StateDown,
			up: func(t *testing.T) (gateway.Upstream, func()) {
				up := gateway.Upstream{Name: "self", Prefix: "self_", HTTP: &gateway.HTTPUpstream{URL: closed()}, Tools: []gateway.Tool{readTool("pid")},
					Restart: gateway.Restart{Min: gateway.Duration(5 * time.Millisecond), Max: gateway.Duration(5 * time.Millisecond)}}
				return up, func() {}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, change := tc.up(t)
			cfg := gateway.Config{Upstreams: []gateway.Upstream{up}, Auth: gateway.Auth{Development: &gateway.Development{Scopes: devScopes}},
				Lock: filepath.Join(t.TempDir(), "gateway.lock")}
			if tc.want == gateway.StateFailed {
				accept(t, cfg, nil)
			} else { // nothing to accept from an upstream that never answers
				empty, err := gateway.NewLock(nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := empty.WriteFile(cfg.Lock); err != nil {
					t.Fatal(err)
				}
			}
			var (
				ptr    atomic.Pointer[gateway.Gateway]
				mu     sync.Mutex
				states []gateway.State
			)
			h := seenAtLog{g: &ptr, upstream: "self", prefixes: []string{tc.prefix}, mu: &mu, states: &states}
			g, err := gateway.New(cfg, &gateway.Options{Logger: slog.New(h)})
			if err != nil {
				t.Fatal(err)
			}
			ptr.Store(g)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := g.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			change()
			logged := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(states)
			}
			eventually(t, "the line logged", func() bool { return logged() > 0 })
			mu.Lock()
			first := states[0]
			mu.Unlock()
			if first == tc.want {
				t.Errorf("the %q line was written after the state %s was published: a reader of the state could miss it", tc.prefix, first)
			}
			eventually(t, "the state published", func() bool { return state(g, "self").State == tc.want })
		})
	}
}

// startLog is a slog.Handler that holds each "upstream imported" line for
// up to hold and notes whether Start had returned (returned closed) by
// the time the line was written.
type startLog struct {
	returned <-chan struct{}
	hold     time.Duration
	mu       *sync.Mutex
	after    *[]bool
}

func (h startLog) Enabled(context.Context, slog.Level) bool { return true }
func (h startLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h startLog) WithGroup(string) slog.Handler            { return h }
func (h startLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "upstream imported" {
		return nil
	}
	t := time.NewTimer(h.hold)
	defer t.Stop()
	after := false
	select {
	case <-h.returned:
		after = true
	case <-t.C:
	}
	h.mu.Lock()
	*h.after = append(*h.after, after)
	h.mu.Unlock()
	return nil
}

// TestStartReturnsAfterTheImportIsLogged: Start returns (and the gateway
// says it serves) only once each upstream's first import is logged, so
// that the log says what was imported before anything is served. Marked
// tried before the line was written, an upstream let Start return first,
// and a test reading the log once Start had returned could miss the line.
func TestStartReturnsAfterTheImportIsLogged(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "a number"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{"1"}, nil
	})
	cfg := gateway.Config{Upstreams: []gateway.Upstream{{Name: "self", Prefix: "self_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)}, Tools: []gateway.Tool{readTool("pid")}}},
		Auth: gateway.Auth{Development: &gateway.Development{Scopes: devScopes}}, Lock: filepath.Join(t.TempDir(), "gateway.lock")}
	accept(t, cfg, nil)
	var (
		returned = make(chan struct{})
		mu       sync.Mutex
		after    []bool
	)
	// The line is held long enough for a Start that did not wait for it
	// to return meanwhile; one that waits returns after it.
	g, err := gateway.New(cfg, &gateway.Options{Logger: slog.New(startLog{returned: returned, hold: 300 * time.Millisecond, mu: &mu, after: &after})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	close(returned)
	t.Cleanup(func() { g.Close() })
	mu.Lock()
	defer mu.Unlock()
	if len(after) != 1 || after[0] {
		t.Errorf("import lines by the time Start returned (true: written after it): %v; want one, written before", after)
	}
}
