package mcpimport_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var reader = policy.NewPrincipal("alice", []string{"docs:read"})

// imported discovers bindings on session and compiles them into plans of a
// fresh application "gw".
func imported(t testing.TB, cs *mcp.ClientSession, mon *mcpimport.Monitor, bindings map[string]mcpimport.Binding, opts *mcpimport.Options) (*mcpimport.Catalog, *execution.Plans) {
	t.Helper()
	cat, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), bindings, opts)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	app := agnara.New("gw", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return cat, plans
}

func call(t *testing.T, plans *execution.Plans, name, args string) (envelope, error) {
	t.Helper()
	return callAs(t, context.Background(), plans, name, args, reader)
}

func callAs(t *testing.T, ctx context.Context, plans *execution.Plans, name, args string, who policy.Principal) (envelope, error) {
	t.Helper()
	p, ok := plans.Lookup("gw." + name)
	if !ok {
		t.Fatalf("no plan gw.%s", name)
	}
	out, err := p.Invoke(ctx, &execution.Invocation{Principal: who, Arguments: json.RawMessage(args)})
	if err != nil {
		return envelope{}, err
	}
	switch o := out.(type) {
	case *execution.Failure:
		return envelope{}, o
	case execution.Success:
		return envelopeOf(t, o), nil
	}
	t.Fatalf("outcome %T", out)
	return envelope{}, nil
}

// envelope is what most tests read of a call's result: its text blocks,
// in order, and its structured content (JSON null when there is none).
type envelope struct {
	Text       []string        `json:"text"`
	Structured json.RawMessage `json:"structured"`
}

// envelopeOf reads a success of an imported tool, whose blocks must all be
// text.
func envelopeOf(t *testing.T, o execution.Success) envelope {
	t.Helper()
	if o.Value != nil || o.Content == nil {
		t.Fatalf("success %+v: want an execution.Result's content", o)
	}
	env := envelope{Text: []string{}, Structured: o.Structured}
	for _, c := range o.Content {
		tc, ok := c.(execution.Text)
		if !ok {
			t.Fatalf("block %T, want text", c)
		}
		env.Text = append(env.Text, tc.Text)
	}
	if env.Structured == nil {
		env.Structured = json.RawMessage("null")
	}
	return env
}

// wantCode checks that err is the canonical failure of call failure reason code.
func wantCode(t *testing.T, err error, code execution.Reason) {
	t.Helper()
	var f *execution.Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a failure with %s", err, code)
	}
	if got := execution.ReasonOf(err); got != code || f.Code != mcpimport.Canonical(code) {
		t.Fatalf("failure %v (reason %q), want %s (%s)", f, got, code, mcpimport.Canonical(code))
	}
	if strings.Contains(f.Message, "secret") {
		t.Fatalf("remote text reached the caller: %q", f.Message)
	}
}

func TestImportAtEveryVersion(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			d := newDocs(nil)
			cs, mon := connect(t, d.server, version)
			cat, plans := imported(t, cs, mon, readBindings(), nil)

			snap := cat.Snapshot()
			if snap.SchemaVersion() != 1 || snap.ServerID() != "docs" || snap.ProtocolVersion() != version || !strings.HasPrefix(snap.Digest(), "sha256:") {
				t.Errorf("snapshot header: %d %s %s %s", snap.SchemaVersion(), snap.ServerID(), snap.ProtocolVersion(), snap.Digest())
			}
			var names []string
			for _, e := range snap.Entries() {
				names = append(names, e.Name+"="+e.RemoteName)
			}
			if diff := cmp.Diff([]string{"echo_text=echo", "search_docs=search"}, names); diff != "" {
				t.Errorf("entries (sorted by local name, unbound delete absent): %s", diff)
			}
			if len(plans.All()) != 2 {
				t.Errorf("registered %d capabilities, want 2", len(plans.All()))
			}

			env, err := call(t, plans, "search_docs", `{"q":"mcp"}`)
			if err != nil {
				t.Fatal(err)
			}
			want := envelope{Text: []string{"3 results for mcp"}, Structured: json.RawMessage(`{"count":3,"tags":["go","mcp"]}`)}
			if diff := cmp.Diff(want, env, cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })); diff != "" {
				t.Error(diff)
			}
			env, err = call(t, plans, "echo_text", `{"text":"hi"}`)
			if err != nil {
				t.Fatal(err)
			}
			if string(env.Structured) != "null" || len(env.Text) != 1 || env.Text[0] != "hi" {
				t.Errorf("echo envelope = %+v, want text [hi] and structured null (no output schema)", env)
			}
		})
	}
}

func TestImportedToolsAreOrdinaryCapabilities(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	_, plans := imported(t, cs, mon, readBindings(), nil)
	p, _ := plans.Lookup("gw.search_docs")
	if o := p.Capability().Options(); o.Title != "Search documents" || o.Description != "Search the documents." || !p.Annotations().Has(agnara.ReadOnly) {
		t.Errorf("plan metadata: %q %q %v", o.Title, o.Description, p.Annotations())
	}
	if string(p.InputSchema()) != `{"additionalProperties":false,"properties":{"mode":{"type":"string"},"n":{"minimum":0,"type":"integer"},"q":{"description":"What to look for","minLength":1,"type":"string"}},"required":["q"],"type":"object"}` {
		t.Errorf("input schema = %s", p.InputSchema())
	}

	// The local scope guard applies before anything reaches the remote server.
	_, err := callAs(t, context.Background(), plans, "search_docs", `{"q":"x"}`, policy.NewPrincipal("bob", nil))
	var f *execution.Failure
	if !errors.As(err, &f) || f.Code != execution.Forbidden {
		t.Errorf("caller without docs:read: %v", err)
	}
	// So does local input validation, against the remote schema.
	_, err = call(t, plans, "search_docs", `{"q":"","extra":1}`)
	if !errors.As(err, &f) || f.Code != execution.InvalidInput {
		t.Errorf("invalid arguments: %v", err)
	}
	if n := d.calls.Load(); n != 0 {
		t.Errorf("the remote server saw %d calls, want 0", n)
	}
}

func TestStdioServerProcess(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs, mon, cmd := stdioSession(t, version)
			cat, plans := imported(t, cs, mon, readBindings(), nil)
			if cat.Snapshot().ProtocolVersion() != version {
				t.Errorf("snapshot version %s", cat.Snapshot().ProtocolVersion())
			}
			env, err := call(t, plans, "search_docs", `{"q":"stdio"}`)
			if err != nil || string(env.Structured) != `{"count":5,"tags":["go","stdio"]}` {
				t.Fatalf("call: %+v, %v", env, err)
			}
			_, err = call(t, plans, "search_docs", `{"q":"x","mode":"error"}`)
			wantCode(t, err, mcpimport.ReasonToolError)

			mon.Close()
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			if cmd.ProcessState == nil {
				t.Fatal("the server process has not exited after the session closed")
			}
			_, err = call(t, plans, "search_docs", `{"q":"x"}`)
			wantCode(t, err, mcpimport.ReasonConnectionClosed)
		})
	}
}

func TestServerProcessExitMidCall(t *testing.T) {
	cs, mon, cmd := stdioSession(t, "2025-11-25")
	_, plans := imported(t, cs, mon, readBindings(), nil)
	_, err := call(t, plans, "search_docs", `{"q":"x","mode":"exit"}`)
	if code := execution.ReasonOf(err); code != mcpimport.ReasonConnectionClosed && code != mcpimport.ReasonTransportError {
		t.Fatalf("remote exit mid-call: %v, want connection closed or transport error", err)
	}
	cs.Close()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("server process state %v, want exited with 3", cmd.ProcessState)
	}
}

func TestResults(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	_, plans := imported(t, cs, mon, readBindings(), nil)
	for _, tc := range []struct {
		mode string
		want execution.Reason
	}{
		{"error", mcpimport.ReasonToolError},
		{"protocol", mcpimport.ReasonProtocolError},
		{"nostruct", mcpimport.ReasonResultInvalid}, // JSON-looking text is no substitute
		{"badstruct", mcpimport.ReasonResultInvalid},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			_, err := call(t, plans, "search_docs", `{"q":"x","mode":"`+tc.mode+`"}`)
			wantCode(t, err, tc.want)
		})
	}
}

func TestScopeValidator(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2026-07-28")
	type seen struct {
		who  string
		args string
	}
	got := make(chan seen, 4)
	bindings := readBindings()
	b := bindings["search"]
	b.NoScopeValidator = false
	b.ScopeValidator = func(ctx context.Context, caller policy.Principal, args json.RawMessage) error {
		got <- seen{caller.ID(), string(args)}
		if strings.Contains(string(args), "private") {
			return errors.New("private documents need docs:private")
		}
		return nil
	}
	bindings["search"] = b
	_, plans := imported(t, cs, mon, bindings, nil)

	if _, err := call(t, plans, "search_docs", `{"q":"public"}`); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.who != "alice" || s.args != `{"q":"public"}` {
		t.Errorf("validator saw %+v", s)
	}
	before := d.calls.Load()
	_, err := call(t, plans, "search_docs", `{"q":"private"}`)
	wantCode(t, err, mcpimport.ReasonScopeDenied)
	if f := (*execution.Failure)(nil); errors.As(err, &f) && strings.Contains(f.Message, "docs:private") {
		t.Errorf("the validator's own words reached the caller: %q", f.Message)
	}
	if d.calls.Load() != before {
		t.Error("a denied call reached the remote server")
	}
}

func TestCancellationStopsWaiting(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	_, plans := imported(t, cs, mon, readBindings(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := callAs(t, ctx, plans, "search_docs", `{"q":"x","mode":"wait"}`, reader)
		done <- err
	}()
	<-d.started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v, want context.Canceled to propagate", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled call is still waiting")
	}
}

func TestCallTimeout(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	// Long enough for an ordinary call on a loaded machine (the second call
	// below runs under it too); the hanging one waits it out.
	_, plans := imported(t, cs, mon, readBindings(), &mcpimport.Options{Limits: mcpimport.Limits{CallTimeout: time.Second}})
	_, err := call(t, plans, "search_docs", `{"q":"x","mode":"hang"}`)
	wantCode(t, err, mcpimport.ReasonTimeout)
	// The session is still usable afterwards.
	if _, err := call(t, plans, "search_docs", `{"q":"x"}`); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrencyDeclaration(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "serialized", true: "concurrent"}[safe], func(t *testing.T) {
			d := newDocs(nil)
			cs, mon := connect(t, d.server, "2025-11-25")
			bindings := readBindings()
			b := bindings["search"]
			b.ConcurrencySafe = safe
			bindings["search"] = b
			_, plans := imported(t, cs, mon, bindings, nil)
			const n = 3
			errs := make(chan error, n)
			for range n {
				go func() {
					_, err := call(t, plans, "search_docs", `{"q":"x","mode":"wait"}`)
					errs <- err
				}()
			}
			<-d.started
			if safe {
				for range n - 1 {
					<-d.started
				}
			} else {
				select {
				case <-d.started:
					t.Error("a second call started while the first was running")
				case <-time.After(100 * time.Millisecond):
				}
			}
			d.mu.Lock()
			close(d.release)
			d.mu.Unlock()
			for range n {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			want := int64(1)
			if safe {
				want = n
			}
			if got := d.maxIn.Load(); got != want {
				t.Errorf("at most %d calls in flight, want %d", got, want)
			}
		})
	}
}

func TestListChangedMakesCatalogStale(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			d := newDocs(nil)
			cs, mon := connect(t, d.server, version)
			old, plans := imported(t, cs, mon, readBindings(), nil)
			if _, err := call(t, plans, "search_docs", `{"q":"x"}`); err != nil {
				t.Fatal(err)
			}

			d.server.AddTool(&mcp.Tool{Name: "fetch", Description: "Fetch one document.", InputSchema: json.RawMessage(echoInput)}, d.echo)
			select {
			case <-old.Stale():
			case <-time.After(10 * time.Second):
				t.Fatal("tools/list_changed did not make the catalog stale")
			}
			before := d.calls.Load()
			_, err := call(t, plans, "search_docs", `{"q":"x"}`)
			wantCode(t, err, mcpimport.ReasonCatalogStale)
			if d.calls.Load() != before {
				t.Error("a call of a stale catalog reached the remote server")
			}

			// Explicit rediscovery replaces the catalog; the new tool is not
			// imported because nothing binds it.
			fresh, plans2 := imported(t, cs, mon, readBindings(), nil)
			if len(fresh.Snapshot().Entries()) != 2 {
				t.Errorf("rediscovered %d entries, want the 2 bound ones", len(fresh.Snapshot().Entries()))
			}
			if _, err := call(t, plans2, "search_docs", `{"q":"x"}`); err != nil {
				t.Fatalf("call of the new catalog: %v", err)
			}
			_, err = call(t, plans, "search_docs", `{"q":"x"}`)
			wantCode(t, err, mcpimport.ReasonCatalogStale) // the old one stays stale
		})
	}
}

func TestMonitor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []string
		close    bool
		wantErr  string
	}{
		{"2026-07-28", []string{"2026-07-28"}, false, ""},
		{"2025-11-25", []string{"2025-11-25"}, false, ""},
		{"2025-06-18", []string{"2025-06-18"}, false, ""},
		{"same twice", []string{"2025-11-25", "2025-11-25"}, false, ""},
		{"2025-03-26", []string{"2025-03-26"}, false, ""},
		{"2024-11-05", []string{"2024-11-05"}, false, ""},
		{"older", []string{"2024-10-07"}, false, "not supported"},
		{"empty", []string{""}, false, "not supported"},
		{"garbage", []string{"latest"}, false, "not supported"},
		{"changed", []string{"2025-11-25", "2026-07-28"}, false, "already accepted"},
		{"closed", []string{"2025-11-25"}, true, "closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mcpimport.NewMonitor()
			if tc.close {
				m.Close()
			}
			var err error
			for _, v := range tc.versions {
				if err = m.AcceptProtocolVersion(v); err != nil {
					break
				}
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || execution.ReasonOf(err) != mcpimport.ProtocolUnsupported {
				t.Fatalf("err = %v, want %s containing %q", err, mcpimport.ProtocolUnsupported, tc.wantErr)
			}
		})
	}
}

func TestDiscoverNeedsTheNegotiatedVersion(t *testing.T) {
	d := newDocs(nil)
	ct, st := mcp.NewInMemoryTransports()
	go d.server.Run(context.Background(), st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	fresh := mcpimport.NewMonitor()
	_, err = mcpimport.Discover(context.Background(), newSession(t, cs, fresh, "docs"), readBindings(), nil)
	if execution.ReasonOf(err) != mcpimport.ProtocolUnsupported {
		t.Errorf("monitor without a version: %v", err)
	}
	guess := mcpimport.NewMonitor()
	guess.AcceptProtocolVersion("2026-07-28") // a configured guess, not what was negotiated
	_, err = mcpimport.Discover(context.Background(), newSession(t, cs, guess, "docs"), readBindings(), nil)
	if execution.ReasonOf(err) != mcpimport.ProtocolUnsupported {
		t.Errorf("monitor with another version: %v", err)
	}
	closed := mcpimport.NewMonitor()
	closed.AcceptProtocolVersion("2025-11-25")
	closed.Close()
	_, err = mcpimport.Discover(context.Background(), newSession(t, cs, closed, "docs"), readBindings(), nil)
	if execution.ReasonOf(err) != mcpimport.ProtocolUnsupported {
		t.Errorf("closed monitor: %v", err)
	}
}

func TestBindings(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	allow := func(context.Context, policy.Principal, json.RawMessage) error { return nil }
	for _, tc := range []struct {
		name     string
		serverID string
		bindings map[string]mcpimport.Binding
		limits   mcpimport.Limits
		code     execution.Reason
		want     string
	}{
		{"none", "docs", nil, mcpimport.Limits{}, mcpimport.BindingInvalid, "no bindings"},
		{"no session", "", readBindings(), mcpimport.Limits{}, mcpimport.BindingInvalid, "needs a connected session"},
		{"no local name", "docs", map[string]mcpimport.Binding{"search": {Title: "S", NoScopeValidator: true}}, mcpimport.Limits{}, mcpimport.BindingInvalid, "local name"},
		{"bad local name", "docs", map[string]mcpimport.Binding{"search": {Name: "search docs", Title: "S", NoScopeValidator: true}}, mcpimport.Limits{}, mcpimport.BindingInvalid, "local name"},
		{"no title", "docs", map[string]mcpimport.Binding{"search": {Name: "s", NoScopeValidator: true}}, mcpimport.Limits{}, mcpimport.BindingInvalid, "no title"},
		{"no scope decision", "docs", map[string]mcpimport.Binding{"search": {Name: "s", Title: "S"}}, mcpimport.Limits{}, mcpimport.BindingInvalid, "no ScopeValidator"},
		{"both scope decisions", "docs", map[string]mcpimport.Binding{"search": {Name: "s", Title: "S", ScopeValidator: allow, NoScopeValidator: true}}, mcpimport.Limits{}, mcpimport.BindingInvalid, "both"},
		{"duplicate local name", "docs", map[string]mcpimport.Binding{"search": {Name: "s", Title: "S", NoScopeValidator: true}, "echo": {Name: "s", Title: "E", NoScopeValidator: true}}, mcpimport.Limits{}, mcpimport.BindingInvalid, "also bound"},
		{"missing remote tool", "docs", map[string]mcpimport.Binding{"nosuch": {Name: "s", Title: "S", NoScopeValidator: true}}, mcpimport.Limits{}, mcpimport.ToolMissing, `"nosuch"`},
		{"unsupported schema", "docs", map[string]mcpimport.Binding{"delete": {Name: "d", Title: "D", NoScopeValidator: true}}, mcpimport.Limits{}, mcpimport.SchemaUnsupported, `tool "delete": input schema`},
		{"raised limit", "docs", readBindings(), mcpimport.Limits{Tools: 257}, mcpimport.BindingInvalid, "Limits.Tools"},
		{"negative limit", "docs", readBindings(), mcpimport.Limits{Pages: -1}, mcpimport.BindingInvalid, "Limits.Pages"},
		{"timeout past 300s", "docs", readBindings(), mcpimport.Limits{CallTimeout: 301 * time.Second}, mcpimport.BindingInvalid, "CallTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, tc.serverID), tc.bindings, &mcpimport.Options{Limits: tc.limits})
			if cat != nil || execution.ReasonOf(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %s containing %q", err, tc.code, tc.want)
			}
		})
	}
	// Accepted at the edges: a 300 s timeout, limits equal to the defaults.
	lim := mcpimport.DefaultLimits()
	lim.CallTimeout = mcpimport.MaxCallTimeout
	if _, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), readBindings(), &mcpimport.Options{Limits: lim}); err != nil {
		t.Fatal(err)
	}
}

func TestEveryMistakeReportedAtOnce(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	_, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), map[string]mcpimport.Binding{
		"nosuch": {Name: "a", Title: "A", NoScopeValidator: true},
		"delete": {Name: "b", Title: "B", NoScopeValidator: true},
		"search": {Name: "c", Title: "C", NoScopeValidator: true},
	}, nil)
	if err == nil || !strings.Contains(err.Error(), string(mcpimport.ToolMissing)) || !strings.Contains(err.Error(), string(mcpimport.SchemaUnsupported)) {
		t.Fatalf("err = %v, want both the missing tool and the unsupported schema", err)
	}
}

// TestListChangedDuringCallDiscardsTheAnswer: a tools/list_changed that
// arrives while a call is out makes its answer stale; the answer is
// discarded, not passed on.
func TestListChangedDuringCallDiscardsTheAnswer(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	cat, plans := imported(t, cs, mon, readBindings(), nil)
	done := make(chan error, 1)
	go func() {
		_, err := call(t, plans, "search_docs", `{"q":"x","mode":"wait"}`)
		done <- err
	}()
	<-d.started
	d.server.AddTool(&mcp.Tool{Name: "fetch", Description: "Fetch one document.", InputSchema: json.RawMessage(echoInput)}, d.echo)
	select {
	case <-cat.Stale():
	case <-time.After(10 * time.Second):
		t.Fatal("tools/list_changed did not make the catalog stale")
	}
	d.mu.Lock()
	close(d.release)
	d.mu.Unlock()
	select {
	case err := <-done:
		wantCode(t, err, mcpimport.ReasonCatalogStale)
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
	}
}

// TestCloseMakesCatalogStale: closing the monitor closes Stale(), so hosts
// selecting on it learn that the session is gone.
func TestCloseMakesCatalogStale(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	cat, _ := imported(t, cs, mon, readBindings(), nil)
	select {
	case <-cat.Stale():
		t.Fatal("a fresh catalog is stale")
	default:
	}
	mon.Close()
	select {
	case <-cat.Stale():
	case <-time.After(time.Second):
		t.Fatal("closing the monitor did not close Stale()")
	}
}

// TestDuplicateToolNameRefused: a catalog that lists a tool name twice is
// refused, whichever definition would have won.
func TestDuplicateToolNameRefused(t *testing.T) {
	d := listingSearchTwice()
	cs, mon := connect(t, d.server, "2025-11-25")
	cat, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), readBindings(), nil)
	if cat != nil || execution.ReasonOf(err) != mcpimport.ToolDuplicate {
		t.Fatalf("err = %v, want %s", err, mcpimport.ToolDuplicate)
	}
}

// listingSearchTwice is the fixture server with a tools/list that lists
// "search" twice, the second with another description.
func listingSearchTwice() *docs {
	d := newDocs(nil)
	d.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				for _, tl := range r.Tools {
					if tl.Name == "search" {
						dup := *tl
						dup.Description = "A different search."
						r.Tools = append(r.Tools, &dup)
						break
					}
				}
			}
			return res, err
		}
	})
	return d
}

// TestRemoteInvalidParams: a JSON-RPC -32602 answer is mcp_invalid_arguments
// (invalid_input), other JSON-RPC errors are mcp_protocol_error; neither
// message reaches the caller.
func TestRemoteInvalidParams(t *testing.T) {
	d := newDocs(nil)
	d.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				switch {
				case strings.Contains(string(r.Params.Arguments), "refuse"):
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "remote secret: q is wrong"}
				case strings.Contains(string(r.Params.Arguments), "fault"):
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "remote secret: stack trace"}
				}
			}
			return next(ctx, method, req)
		}
	})
	cs, mon := connect(t, d.server, "2025-11-25")
	_, plans := imported(t, cs, mon, readBindings(), nil)
	_, err := call(t, plans, "search_docs", `{"q":"refuse"}`)
	wantCode(t, err, mcpimport.ReasonInvalidArguments)
	_, err = call(t, plans, "search_docs", `{"q":"fault"}`)
	wantCode(t, err, mcpimport.ReasonProtocolError)
}

// TestServerHangsUp: when the remote side closes the connection before the
// host has noticed (the monitor is still open), calls fail with
// mcp_connection_closed.
func TestServerHangsUp(t *testing.T) {
	d := newDocs(nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := d.server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, mon := connectTransport(t, ct, "2025-11-25")
	_, plans := imported(t, cs, mon, readBindings(), nil)
	if _, err := call(t, plans, "search_docs", `{"q":"x"}`); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	cs.Wait()
	_, err = call(t, plans, "search_docs", `{"q":"x"}`)
	wantCode(t, err, mcpimport.ReasonConnectionClosed)
}

// TestBindingDescriptionIsPublished: a binding's Description is published
// instead of the remote one; without it, the remote description is.
func TestBindingDescriptionIsPublished(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	bindings := readBindings()
	b := bindings["search"]
	b.Description = "Local words."
	bindings["search"] = b
	cat, plans := imported(t, cs, mon, bindings, nil)
	if p, _ := plans.Lookup("gw.search_docs"); p.Capability().Options().Description != "Local words." {
		t.Errorf("published description %q, want the binding's", p.Capability().Options().Description)
	}
	if p, _ := plans.Lookup("gw.echo_text"); p.Capability().Options().Description != "Echo the text back." {
		t.Errorf("published description %q, want the remote one", p.Capability().Options().Description)
	}
	for _, e := range cat.Snapshot().Entries() {
		if e.RemoteName == "search" && e.Description != "Search the documents." {
			t.Errorf("snapshot description %q, want the remote one", e.Description)
		}
	}
}
