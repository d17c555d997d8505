package gateway_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamOfAnUnsupportedRevisionFailsOnce: an upstream that answers
// the handshake with a protocol revision nobody speaks is refused for a
// reason a restart cannot fix. It is marked failed with that reason, once,
// started once (with a backoff that would respawn it at once), its tools
// withdrawn with the reason, and the other upstream serves; a reload tries
// it exactly once more.
func TestUpstreamOfAnUnsupportedRevisionFailsOnce(t *testing.T) {
	old := selfUpstream(t, "old", readTool("pid"))
	old.Stdio.Env[serveEnv] = serveOld
	old.Restart = gateway.Restart{Min: gateway.Duration(time.Millisecond), Max: gateway.Duration(time.Millisecond)}
	g, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{old, selfUpstream(t, "self", readTool("pid"))}}, nil)

	starts := func() int { return strings.Count(log.String(), `msg="upstream process started" upstream=old`) }
	failures := func() int {
		return strings.Count(log.String(), `level=ERROR msg="upstream failed: refused for a reason a new session cannot mend`)
	}
	st := state(g, "old")
	if st.State != gateway.StateFailed || st.Reason != mcpimport.ProtocolUnsupported || st.Connections != 1 ||
		!strings.Contains(st.Error, `unsupported protocol version: "`+oldProtocol+`"`) {
		t.Fatalf("old upstream: %+v, want failed with %s after one connection", st, mcpimport.ProtocolUnsupported)
	}
	cs := connect(t, url, "")
	if got := listed(t, cs); !slices.Equal(got, []string{"gateway.self_pid"}) {
		t.Errorf("listed %v", got)
	}
	text, isErr := call(t, cs, "gateway.old_pid", map[string]any{})
	if f := parseFailure(t, text); !isErr || f.Code != "unavailable" || f.Reason != string(mcpimport.ProtocolUnsupported) || strings.Contains(text, "the gateway is reconnecting") {
		t.Errorf("the failed upstream's tool answers %s", text)
	}
	if _, isErr := call(t, cs, "gateway.self_pid", map[string]any{}); isErr {
		t.Error("the other upstream does not serve")
	}
	if starts() != 1 || failures() != 1 || state(g, "old").Connections != 1 {
		t.Errorf("%d processes started, %d failures logged, %d connections: want 1 each\n%s", starts(), failures(), state(g, "old").Connections, log)
	}

	if err := g.Reload(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the retry to fail again", func() bool { return failures() == 2 })
	if st := state(g, "old"); st.State != gateway.StateFailed || st.Connections != 2 || starts() != 2 {
		t.Errorf("after one reload: %+v, %d processes started: want failed after 2", st, starts())
	}
}

// TestStrictBindings: a binding is strict unless it or its upstream says
// optional. A strict binding the upstream cannot give (a schema outside
// its profile, a tool it does not list) fails the upstream's import with
// that reason, and the upstream is failed, not respawned; an optional one
// is withdrawn alone, with its reason, while the rest serves.
func TestStrictBindings(t *testing.T) {
	yes, no := true, false
	loose := readTool("loose")
	optionalLoose := readTool("loose")
	optionalLoose.Optional = &yes
	strictLoose := readTool("loose")
	strictLoose.Optional = &no
	for _, tc := range []struct {
		name             string
		upstreamOptional bool
		tools            []gateway.Tool
		failed           bool
		reason           string // of the failure, or of loose's withdrawal
	}{
		{"strict schema", false, []gateway.Tool{readTool("pid"), loose}, true, string(mcpimport.SchemaUnsupported)},
		{"strict and missing", false, []gateway.Tool{readTool("pid"), readTool("nosuch")}, true, string(mcpimport.ToolMissing)},
		{"optional binding", false, []gateway.Tool{readTool("pid"), optionalLoose}, false, string(mcpimport.SchemaUnsupported)},
		{"optional upstream", true, []gateway.Tool{readTool("pid"), loose}, false, string(mcpimport.SchemaUnsupported)},
		{"strict binding of an optional upstream", true, []gateway.Tool{readTool("pid"), strictLoose}, true, string(mcpimport.SchemaUnsupported)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := selfUpstream(t, "self", tc.tools...)
			up.Optional = tc.upstreamOptional
			up.Restart = gateway.Restart{Min: gateway.Duration(time.Millisecond), Max: gateway.Duration(time.Millisecond)}
			cfg := gateway.Config{Upstreams: []gateway.Upstream{up}, Lock: filepath.Join(t.TempDir(), "gateway.lock")}
			accept(t, cfg, nil) // pins what can be imported: pid
			g, url, _ := started(t, cfg, nil)
			st := state(g, "self")
			cs := connect(t, url, "")
			pid, pidErr := call(t, cs, "gateway.self_pid", map[string]any{})
			other := tc.tools[1].Name
			if other == "" {
				other = "self_" + tc.tools[1].Remote
			}
			text, isErr := call(t, cs, "gateway."+other, map[string]any{})
			f := parseFailure(t, text)
			if tc.failed {
				if st.State != gateway.StateFailed || string(st.Reason) != tc.reason || st.Connections != 1 {
					t.Errorf("status %+v, want failed with %s after one connection", st, tc.reason)
				}
				if p := parseFailure(t, pid); !pidErr || p.Reason != tc.reason {
					t.Errorf("pid of the failed upstream answers %s", pid)
				}
			} else {
				if st.State != gateway.StateUp || !slices.Equal(st.Tools, []string{"self_pid"}) || !slices.Equal(st.Absent, []string{other + " (" + tc.reason + ")"}) {
					t.Errorf("status %+v, want up, serving pid, %s absent", st, other)
				}
				if pidErr {
					t.Errorf("pid: %s", pid)
				}
			}
			if !isErr || f.Code != "unavailable" || f.Reason != tc.reason {
				t.Errorf("%s answers %s, want unavailable with %s", other, text, tc.reason)
			}
		})
	}
}

// TestStrictBindingLostInAListChange: an upstream whose list change takes
// away a strict binding's tool is failed with mcp_tool_missing on the
// session it has (no new one is made); one that takes away an optional
// binding's keeps serving the rest, the tool withdrawn with that reason.
func TestStrictBindingLostInAListChange(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name     string
		optional *bool
	}{{"strict", nil}, {"optional", &yes}} {
		t.Run(tc.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
			for _, name := range []string{"pid", "other"} {
				mcp.AddTool(s, &mcp.Tool{Name: name, Description: "a number"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
					return nil, textOut{"1"}, nil
				})
			}
			other := readTool("other")
			other.Optional = tc.optional
			up := gateway.Upstream{Name: "self", Prefix: "self_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)}, Tools: []gateway.Tool{readTool("pid"), other},
				Restart: gateway.Restart{Min: gateway.Duration(time.Millisecond), Max: gateway.Duration(time.Millisecond)}}
			g, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{up}}, nil)
			cs := connect(t, url, "")
			s.RemoveTools("other")
			text := ""
			if tc.optional == nil {
				// Waits for the event it counts (the log line), then for the
				// state: under load the two are not seen at one instant.
				eventually(t, "the failure logged", func() bool { return strings.Contains(log.String(), `msg="upstream failed`) })
				eventually(t, "the upstream failed", func() bool { return state(g, "self").State == gateway.StateFailed })
				if st := state(g, "self"); st.Reason != mcpimport.ToolMissing || st.Connections != 1 {
					t.Errorf("status %+v, want failed with %s after one connection", st, mcpimport.ToolMissing)
				}
				if n := strings.Count(log.String(), `msg="upstream failed`); n != 1 {
					t.Errorf("logged %d failures, want 1", n)
				}
				text, _ = call(t, cs, "gateway.self_pid", map[string]any{})
			} else {
				eventually(t, "other withdrawn", func() bool { return len(state(g, "self").Absent) == 1 })
				if st := state(g, "self"); st.State != gateway.StateUp || !slices.Equal(st.Tools, []string{"self_pid"}) {
					t.Errorf("status %+v, want up, serving pid", st)
				}
				if pid, isErr := call(t, cs, "gateway.self_pid", map[string]any{}); isErr {
					t.Errorf("pid: %s", pid)
				}
				text, _ = call(t, cs, "gateway.self_other", map[string]any{})
			}
			if f := parseFailure(t, text); f.Code != "unavailable" || f.Reason != string(mcpimport.ToolMissing) {
				t.Errorf("answers %s, want unavailable with %s", text, mcpimport.ToolMissing)
			}
		})
	}
}
