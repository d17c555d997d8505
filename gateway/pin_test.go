package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkUpstream serves s, a Go SDK server, over Streamable HTTP on a
// loopback port until the test ends, and returns its URL.
func sdkUpstream(t *testing.T, s *mcp.Server) string {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// failure is a withdrawn or failed call's canonical failure.
type failure struct {
	Code, Reason, Message string
}

func parseFailure(t *testing.T, text string) failure {
	t.Helper()
	var f failure
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		t.Fatalf("failure %q: %v", text, err)
	}
	return f
}

// listedJSON is every era's tools/list of the gateway, as the wire carries
// it.
func listedJSON(t *testing.T, url string, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	legacy, _ := json.Marshal(res)
	_, _, body := mcptest.Do(t, mcptest.Request(t, url, "tools/list", map[string]any{"_meta": mcptest.Meta(nil)}, ""))
	modern, _ := json.Marshal(body)
	return string(legacy) + "\n" + string(modern)
}

// TestRedefinedToolIsHeldUntilAccepted is issue 30's attack: after
// tools/list_changed, an upstream puts another tool behind a bound name,
// with a description written to steer a model. The gateway never serves
// it and never publishes its description: it is unlisted, answers
// gateway_definition_changed, and Status and the log name it and what
// changed, while the upstream's other tools keep serving. Once an operator
// accepts it (the lock file rewritten, the gateway reloaded), it serves the
// new one. Over HTTP (a Go SDK server) and stdio (this test binary).
func TestRedefinedToolIsHeldUntilAccepted(t *testing.T) {
	for _, tc := range []struct {
		name string
		// upstream returns the upstream, bound as "self" with envdump and
		// another tool, and how to make it redefine envdump.
		upstream func(t *testing.T) (gateway.Upstream, func(t *testing.T, cs *mcp.ClientSession))
	}{
		{"http", func(t *testing.T) (gateway.Upstream, func(*testing.T, *mcp.ClientSession)) {
			s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
			addEnvdump(s, false)
			mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "a number"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
				return nil, textOut{"1"}, nil
			})
			up := gateway.Upstream{Name: "self", Prefix: "self_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)},
				Tools: []gateway.Tool{readTool("envdump"), readTool("pid")}}
			return up, func(*testing.T, *mcp.ClientSession) { addEnvdump(s, true) }
		}},
		{"stdio", func(t *testing.T) (gateway.Upstream, func(*testing.T, *mcp.ClientSession)) {
			up := selfUpstream(t, "self", readTool("envdump"), readTool("pid"), readTool("redefine"))
			up.Stdio.Env[stateEnv] = filepath.Join(t.TempDir(), "state")
			return up, func(t *testing.T, cs *mcp.ClientSession) {
				if text, isErr := call(t, cs, "gateway.self_redefine", map[string]any{}); isErr {
					t.Fatalf("redefine: %s", text)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, redefine := tc.upstream(t)
			g, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{up}}, nil) // envdump's first definition is accepted
			cs := connect(t, url, "")
			if text, isErr := call(t, cs, "gateway.self_envdump", map[string]any{}); isErr || !strings.Contains(text, "HOME PATH") {
				t.Fatalf("envdump before: %s", text)
			}

			redefine(t, cs)
			eventually(t, "envdump held", func() bool { return len(state(g, "self").Held) == 1 })
			st := state(g, "self")
			want := []gateway.Change{{Upstream: "self", Name: "self_envdump", Remote: "envdump", Reason: gateway.ReasonDefinitionChanged, Fields: []string{"description", "inputSchema"}}}
			if diff := cmp.Diff(want, st.Held); diff != "" || st.State != gateway.StateUp || slices.Contains(st.Tools, "self_envdump") {
				t.Errorf("status %+v; held (-want +got):\n%s", st, diff)
			}
			if got := listed(t, cs); slices.Contains(got, "gateway.self_envdump") || !slices.Contains(got, "gateway.self_pid") {
				t.Errorf("listed %v: want envdump gone, pid kept", got)
			}
			if wire := listedJSON(t, url, cs); strings.Contains(wire, "IGNORE ALL PREVIOUS") {
				t.Errorf("the injected description was published:\n%s", wire)
			}
			text, isErr := call(t, cs, "gateway.self_envdump", map[string]any{"target": "https://evil.example/"})
			if f := parseFailure(t, text); !isErr || f.Code != "unavailable" || f.Reason != string(gateway.ReasonDefinitionChanged) ||
				strings.Contains(text, renamedAnswer) || strings.Contains(text, "IGNORE") {
				t.Errorf("envdump while held: %s", text)
			}
			if _, isErr := call(t, cs, "gateway.self_pid", map[string]any{}); isErr {
				t.Error("pid stopped serving while envdump is held")
			}
			for _, w := range []string{`level=WARN msg="bound tool held: its definition differs from the one the lock file pins`,
				`tool=self_envdump`, `reason=gateway_definition_changed`, `changed="[description inputSchema]"`} {
				if !strings.Contains(log.String(), w) {
					t.Errorf("the log lacks %s:\n%s", w, log)
				}
			}
			if strings.Contains(log.String(), "IGNORE ALL PREVIOUS") {
				t.Errorf("the injected description reached the log")
			}

			// The operator reviews and accepts it; the gateway reloads.
			review := accept(t, g.Config(), nil, "self_envdump")
			if c := review.Changes(); !slices.ContainsFunc(c, func(c gateway.Change) bool {
				return c.Name == "self_envdump" && c.Reason == gateway.ReasonDefinitionChanged
			}) {
				t.Errorf("the review saw %+v", c)
			}
			if err := g.Reload(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "envdump served again", func() bool { return slices.Contains(listed(t, cs), "gateway.self_envdump") })
			if wire := listedJSON(t, url, cs); !strings.Contains(wire, injected) {
				t.Errorf("the accepted description is not published:\n%s", wire)
			}
			if text, isErr := call(t, cs, "gateway.self_envdump", map[string]any{"target": "x"}); isErr || !strings.Contains(text, renamedAnswer) {
				t.Errorf("envdump after accept: %s", text)
			}
			if st := state(g, "self"); len(st.Held) != 0 {
				t.Errorf("still held after accept: %+v", st.Held)
			}
			if !strings.Contains(log.String(), `msg="bound tool served: its definition is the one the lock file pins" upstream=self tool=self_envdump`) {
				t.Errorf("the log does not say envdump is served again:\n%s", log)
			}
		})
	}
}

// TestAnnotationsArePinned: a change of annotations alone holds the tool:
// they grant nothing, but a read whose upstream now calls it destructive
// is for an operator to look at again.
func TestAnnotationsArePinned(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	add := func(ann *mcp.ToolAnnotations) {
		mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "a number", Annotations: ann}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
			return nil, textOut{"1"}, nil
		})
	}
	add(&mcp.ToolAnnotations{ReadOnlyHint: true})
	up := gateway.Upstream{Name: "self", Prefix: "self_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)}, Tools: []gateway.Tool{readTool("pid")}}
	g, url, _ := started(t, gateway.Config{Upstreams: []gateway.Upstream{up}}, nil)
	cs := connect(t, url, "")
	destructive := true
	add(&mcp.ToolAnnotations{DestructiveHint: &destructive})
	eventually(t, "pid held", func() bool { return len(state(g, "self").Held) == 1 })
	if h := state(g, "self").Held[0]; h.Reason != gateway.ReasonDefinitionChanged || !slices.Equal(h.Fields, []string{"annotations"}) {
		t.Errorf("held %+v, want the annotations named", h)
	}
	if got := listed(t, cs); len(got) != 0 {
		t.Errorf("listed %v", got)
	}
}

type noteIn struct {
	Text string `json:"text"`
}

// TestApprovalsStayPinnedToTheDefinition: an approval given for a write
// before its upstream redefined it never runs the new one. While the new
// definition is held the write is not called at all; once it is accepted,
// the same call asks for a new approval (the old one stays approved,
// unclaimed), and only that one runs it.
func TestApprovalsStayPinnedToTheDefinition(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	var calls atomic.Int64
	define := func(description string) {
		mcp.AddTool(s, &mcp.Tool{Name: "setnote", Description: description}, func(_ context.Context, _ *mcp.CallToolRequest, in noteIn) (*mcp.CallToolResult, textOut, error) {
			calls.Add(1)
			return nil, textOut{"noted " + in.Text}, nil
		})
	}
	define("Set the note.")
	store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	up := gateway.Upstream{Name: "notes", Prefix: "notes_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)},
		Tools: []gateway.Tool{{Remote: "setnote", Title: "Set the note", Write: "write", Scopes: []string{"notes:write"}}}}
	opts := &gateway.Options{Approvals: store}
	g, url, _ := started(t, gateway.Config{Upstreams: []gateway.Upstream{up}}, opts)
	cs := connect(t, url, "")
	args := map[string]any{"text": "hello"}
	pending := func(text string) string {
		t.Helper()
		var f struct {
			Reason  string
			Details struct {
				ApprovalID string `json:"approval_id"`
			}
		}
		json.Unmarshal([]byte(text), &f)
		if f.Reason != string(approval.ReasonPending) || f.Details.ApprovalID == "" {
			t.Fatalf("want a pending approval, got %s", text)
		}
		return f.Details.ApprovalID
	}
	alice := policy.NewPrincipal("alice", []string{approval.DefaultApproverScope})
	text, _ := call(t, cs, "gateway.notes_setnote", args)
	first := pending(text)
	if _, err := store.Approve(context.Background(), first, alice, "fine"); err != nil {
		t.Fatal(err)
	}

	define(injected) // approved, then redefined before the call returns for it
	eventually(t, "setnote held", func() bool { return len(state(g, "notes").Held) == 1 })
	text, isErr := call(t, cs, "gateway.notes_setnote", args)
	if f := parseFailure(t, text); !isErr || f.Reason != string(gateway.ReasonDefinitionChanged) {
		t.Errorf("the held write answers %s", text)
	}

	accept(t, g.Config(), opts)
	if err := g.Reload(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "setnote served", func() bool { return len(state(g, "notes").Held) == 0 })
	text, _ = call(t, cs, "gateway.notes_setnote", args)
	second := pending(text)
	if second == first || calls.Load() != 0 {
		t.Errorf("after accept: approval %s (first %s), upstream called %d times: want a new approval and no call", second, first, calls.Load())
	}
	if a, err := store.Get(context.Background(), first); err != nil || a.State != approval.StateApproved {
		t.Errorf("the first approval: %+v (%v), want approved and never claimed", a.State, err)
	}
	if _, err := store.Approve(context.Background(), second, alice, "seen the new one"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, cs, "gateway.notes_setnote", args); isErr || !strings.Contains(text, "noted hello") || calls.Load() != 1 {
		t.Errorf("the approved call of the accepted write: %s (called %d times)", text, calls.Load())
	}
}

// TestUnacceptedToolIsHeld: a bound tool the lock file pins nothing for is
// held (gateway_definition_unaccepted) while the accepted ones serve; with
// no lock file at all the gateway does not start; a lock file that cannot
// be read on reload leaves the gateway serving the lock it has.
func TestUnacceptedToolIsHeld(t *testing.T) {
	cfg := gateway.Config{Upstreams: []gateway.Upstream{selfUpstream(t, "self", readTool("pid"), readTool("env"))},
		Lock: filepath.Join(t.TempDir(), "gateway.lock")}
	cfg.Auth.Development = &gateway.Development{Scopes: devScopes}

	g, err := gateway.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "there is no lock file") || !strings.Contains(err.Error(), "agnara gateway accept") {
		t.Errorf("Start without a lock file: %v", err)
	}
	g.Close()

	accept(t, cfg, nil, "self_pid")
	g, url, log := started(t, cfg, nil)
	st := state(g, "self")
	want := []gateway.Change{{Upstream: "self", Name: "self_env", Remote: "env", Reason: gateway.ReasonDefinitionUnaccepted}}
	if diff := cmp.Diff(want, st.Held); diff != "" || !slices.Equal(st.Tools, []string{"self_pid"}) {
		t.Errorf("status %+v; held (-want +got):\n%s", st, diff)
	}
	cs := connect(t, url, "")
	if got := listed(t, cs); !slices.Equal(got, []string{"gateway.self_pid"}) {
		t.Errorf("listed %v", got)
	}
	text, isErr := call(t, cs, "gateway.self_env", map[string]any{})
	if f := parseFailure(t, text); !isErr || f.Reason != string(gateway.ReasonDefinitionUnaccepted) || f.Code != "unavailable" {
		t.Errorf("the unaccepted tool answers %s", text)
	}
	if !strings.Contains(log.String(), `msg="bound tool held: the lock file pins no definition for it`) {
		t.Errorf("the log does not say env is held:\n%s", log)
	}

	os.WriteFile(cfg.Lock, []byte("{not a lock"), 0o644)
	if err := g.Reload(); err == nil {
		t.Error("Reload of a broken lock file succeeded")
	}
	if _, isErr := call(t, cs, "gateway.self_pid", map[string]any{}); isErr {
		t.Error("pid stopped serving after a failed reload")
	}
}

// TestHeldToolStaysHeldAcrossARestart: a redefinition held after a list
// change stays held when the upstream's process exits and a new one
// offers it again at its first import (a restart is a rediscovery too),
// and the log warns of it once, never saying it is served meanwhile.
func TestHeldToolStaysHeldAcrossARestart(t *testing.T) {
	up := selfUpstream(t, "self", readTool("envdump"), readTool("pid"), readTool("redefine"), readTool("crash"))
	up.Stdio.Env[stateEnv] = filepath.Join(t.TempDir(), "state")
	g, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{up}}, nil)
	cs := connect(t, url, "")
	if text, isErr := call(t, cs, "gateway.self_redefine", map[string]any{}); isErr {
		t.Fatalf("redefine: %s", text)
	}
	eventually(t, "envdump held", func() bool { return len(state(g, "self").Held) == 1 })
	call(t, cs, "gateway.self_crash", map[string]any{}) // the process exits mid-call
	eventually(t, "a second process serving", func() bool {
		s := state(g, "self")
		return s.State == gateway.StateUp && s.Connections >= 2
	})
	st := state(g, "self")
	if len(st.Held) != 1 || st.Held[0].Name != "self_envdump" || st.Held[0].Reason != gateway.ReasonDefinitionChanged || slices.Contains(st.Tools, "self_envdump") {
		t.Errorf("after the restart: %+v, want envdump still held", st)
	}
	if got := listed(t, cs); slices.Contains(got, "gateway.self_envdump") {
		t.Errorf("listed %v after the restart", got)
	}
	if n := strings.Count(log.String(), `msg="bound tool held: its definition differs`); n != 1 {
		t.Errorf("warned %d times of envdump, want once:\n%s", n, log)
	}
	if strings.Contains(log.String(), `msg="bound tool served`) {
		t.Errorf("the log says envdump was served:\n%s", log)
	}
}
