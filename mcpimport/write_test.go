package mcpimport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const syntheticValue = "agnara-synthetic-7f3a" // the one value writeserver accepts

var (
	requester = policy.NewPrincipal("rita", []string{"ledger:write"})
	approver  = policy.NewPrincipal("alex", []string{"approvals:approve"})
)

var writeServer struct {
	once sync.Once
	bin  string
	err  error
}

// writeServerBin builds the independent write server (internal/writeserver)
// once per test binary.
func writeServerBin(t *testing.T) string {
	t.Helper()
	writeServer.once.Do(func() {
		dir, err := os.MkdirTemp("", "writeserver")
		if err != nil {
			writeServer.err = err
			return
		}
		writeServer.bin = filepath.Join(dir, "writeserver")
		if out, err := exec.Command("go", "build", "-o", writeServer.bin, "./internal/writeserver").CombinedOutput(); err != nil {
			writeServer.err = errors.New(string(out))
		}
	})
	if writeServer.err != nil {
		t.Fatalf("building the write server: %v", writeServer.err)
	}
	return writeServer.bin
}

// remote is one write server process and the session to it.
type remote struct {
	cmd *exec.Cmd
	cs  *mcp.ClientSession
	mon *mcpimport.Monitor
}

func startWriteServer(t *testing.T, dir, scenario, version string) *remote {
	t.Helper()
	cmd := exec.Command(writeServerBin(t), "-dir", dir, "-scenario", scenario)
	cmd.Stderr = os.Stderr
	cs, mon := connectTransport(t, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, version)
	t.Cleanup(func() {
		if cmd.ProcessState == nil && cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &remote{cmd: cmd, cs: cs, mon: mon}
}

// close ends the session and reports whether the server process has exited.
func (r *remote) close(t *testing.T) {
	t.Helper()
	r.mon.Close()
	r.cs.Close()
	if r.cmd.ProcessState == nil {
		t.Fatal("the write server process has not exited")
	}
}

func ledger(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "ledger.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		var e struct {
			Event string `json:"event"`
		}
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			t.Fatalf("ledger line %q: %v", s.Text(), err)
		}
		events = append(events, e.Event)
	}
	return events
}

func writeBindings(validator mcpimport.ScopeValidator) map[string]mcpimport.WriteBinding {
	if validator == nil {
		validator = func(context.Context, policy.Principal, json.RawMessage) error { return nil }
	}
	return map[string]mcpimport.WriteBinding{
		"record_value": {
			Name:           "record_value",
			Title:          "Record the value",
			Effect:         approval.EffectWrite,
			Scopes:         []string{"ledger:write"},
			ScopeValidator: validator,
			BindingID:      "ledger-service", BindingRevision: "host-config-1",
			ScopeID: "sandbox-ledger", ScopeRevision: "scope-1",
		},
	}
}

func openStore(t *testing.T, path string) *approval.SQLiteStore {
	t.Helper()
	s, err := approval.OpenSQLite(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writePlans discovers the write tool on r with store and compiles it into a
// plan of application "host".
func writePlans(t *testing.T, r *remote, store approval.Store, limits mcpimport.Limits, validator mcpimport.ScopeValidator) (*mcpimport.Catalog, *execution.Plan) {
	t.Helper()
	cat, err := mcpimport.DiscoverWrites(context.Background(), newSession(t, r.cs, r.mon, "ledger"), writeBindings(validator), &mcpimport.WriteOptions{Approvals: store, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	app := agnara.New("host", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Lookup("host.record_value")
	return cat, p
}

func invokeWrite(t *testing.T, p *execution.Plan) (json.RawMessage, *execution.Failure) {
	t.Helper()
	out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: requester, Arguments: json.RawMessage(`{"value":"` + syntheticValue + `"}`)})
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	switch o := out.(type) {
	case execution.Success:
		b, err := json.Marshal(envelopeOf(t, o))
		if err != nil {
			t.Fatal(err)
		}
		return b, nil
	case *execution.Failure:
		return nil, o
	}
	t.Fatalf("outcome %T", out)
	return nil, nil
}

// TestWriteServerScenarios is the independent write-server acceptance: five
// scenarios against a separate SDK server process that writes into a fresh
// folder and fsyncs its own ledger. In each, the host waits for a durable
// approval, reopens SQLite before approving, then checks the local receipt
// (or unknown claim) and the remote ledger; reopening afterwards must not
// dispatch again; the server process must have exited.
func TestWriteServerScenarios(t *testing.T) {
	for i, tc := range []struct {
		scenario   string
		effect     approval.EffectState
		code       execution.Reason // "" for success
		ledger     string
		written    bool
		exitCode   int // of the server process, when it exits by itself
		callTimout time.Duration
	}{
		{"success", approval.EffectCommitted, "", "received written answered", true, -1, 0},
		{"lost-response", approval.EffectUnknown, mcpimport.ReasonTimeout, "received written", true, -1, time.Second},
		{"exit-before-write", approval.EffectUnknown, "", "received", false, 3, 0},
		{"exit-after-write", approval.EffectUnknown, "", "received written", true, 4, 0},
		{"error-after-write", approval.EffectUnknown, mcpimport.ReasonToolError, "received written answered-error", true, -1, 0},
	} {
		version := versions[i%2] // alternate eras
		t.Run(tc.scenario, func(t *testing.T) {
			remoteDir := t.TempDir()
			db := filepath.Join(t.TempDir(), "approvals.db")
			r := startWriteServer(t, remoteDir, tc.scenario, version)
			store := openStore(t, db)
			defer store.Close()
			_, plan := writePlans(t, r, store, mcpimport.Limits{CallTimeout: tc.callTimout}, nil)

			// 1. The call prepares a durable approval and dispatches nothing.
			_, f := invokeWrite(t, plan)
			if f == nil || execution.ReasonOf(f) != approval.ReasonPending || f.Code != execution.InteractionRequired {
				t.Fatalf("first call: %v, want %s", f, approval.ReasonPending)
			}
			id, _ := f.Details["approval_id"].(string)
			if !strings.HasPrefix(id, "apv_") {
				t.Fatalf("details %v carry no approval id", f.Details)
			}
			if got := ledger(t, remoteDir); got != nil {
				t.Fatalf("the remote saw %v before approval", got)
			}

			// 2. The approver's process reopens the store and approves.
			approverStore := openStore(t, db)
			if a, err := approverStore.Get(context.Background(), id); err != nil || a.State != approval.StatePending {
				t.Fatalf("reopened store: %+v, %v", a, err)
			}
			if _, err := approverStore.Approve(context.Background(), id, approver, "checked"); err != nil {
				t.Fatal(err)
			}
			approverStore.Close()

			// 3. The same call dispatches, once.
			env, f := invokeWrite(t, plan)
			if tc.effect == approval.EffectCommitted {
				if f != nil || !strings.Contains(string(env), `"structured":{"value":"`+syntheticValue+`","written":true}`) {
					t.Fatalf("approved call: %s, %v", env, f)
				}
			} else {
				if f == nil || f.Details["effect"] != string(approval.EffectUnknown) || f.Details["approval_id"] != id {
					t.Fatalf("approved call: %s, %v (details %v), want an unknown effect", env, f, f.Details)
				}
				if tc.code != "" && execution.ReasonOf(f) != tc.code {
					t.Errorf("reason %s, want %s", execution.ReasonOf(f), tc.code)
				}
				if strings.Contains(f.Message, "could not confirm") {
					t.Errorf("remote error text reached the caller: %q", f.Message)
				}
			}

			// 4. Local receipt, from a freshly opened store; remote ledger.
			check := openStore(t, db)
			a, err := check.Get(context.Background(), id)
			check.Close()
			if err != nil || a.State != approval.StateCompleted || a.Receipt == nil || a.Receipt.Effect != tc.effect {
				t.Fatalf("recorded %+v (receipt %+v), %v; want completed with %s", a, a.Receipt, err, tc.effect)
			}
			if got := strings.Join(ledger(t, remoteDir), " "); got != tc.ledger {
				t.Errorf("remote ledger %q, want %q", got, tc.ledger)
			}
			_, statErr := os.Stat(filepath.Join(remoteDir, "value.txt"))
			if written := statErr == nil; written != tc.written {
				t.Errorf("value written: %v, want %v", written, tc.written)
			}

			// 5. Repeats answer from the receipt.
			env2, f2 := invokeWrite(t, plan)
			if string(env2) != string(env) || (f == nil) != (f2 == nil) {
				t.Errorf("repeat: %s %v, want the recorded %s %v", env2, f2, env, f)
			}
			r.close(t)
			if tc.exitCode >= 0 && r.cmd.ProcessState.ExitCode() != tc.exitCode {
				t.Errorf("server exited with %d, want %d", r.cmd.ProcessState.ExitCode(), tc.exitCode)
			}

			// 6. Reopening after completion or failure must not dispatch
			// again: a new host process (new store, new server process on the
			// same folder, new catalog) gets the receipt.
			before := strings.Join(ledger(t, remoteDir), " ")
			r2 := startWriteServer(t, remoteDir, "success", version)
			store2 := openStore(t, db)
			defer store2.Close()
			_, plan2 := writePlans(t, r2, store2, mcpimport.Limits{}, nil)
			env3, f3 := invokeWrite(t, plan2)
			if string(env3) != string(env) || (f == nil) != (f3 == nil) {
				t.Errorf("after reopening: %s %v, want the recorded outcome", env3, f3)
			}
			if after := strings.Join(ledger(t, remoteDir), " "); after != before {
				t.Errorf("reopening dispatched again: ledger %q, was %q", after, before)
			}
			r2.close(t)
		})
	}
}

// TestScopeRevokedBeforeDispatch: the scope validator runs again at
// dispatch; a scope revoked after approval refuses the write, recorded as
// not started.
func TestScopeRevokedBeforeDispatch(t *testing.T) {
	remoteDir := t.TempDir()
	db := filepath.Join(t.TempDir(), "approvals.db")
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, db)
	defer store.Close()
	var revoked sync.Map
	validator := func(_ context.Context, caller policy.Principal, _ json.RawMessage) error {
		if _, ok := revoked.Load(caller.ID()); ok {
			return errors.New("scope revoked")
		}
		return nil
	}
	_, plan := writePlans(t, r, store, mcpimport.Limits{}, validator)
	id := approveFirstCall(t, store, plan)
	revoked.Store(requester.ID(), true)
	_, f := invokeWrite(t, plan)
	if execution.ReasonOf(f) != mcpimport.ReasonScopeDenied || f.Code != execution.Forbidden {
		t.Fatalf("revoked scope: %v", f)
	}
	a, _ := store.Get(context.Background(), id)
	if a.State != approval.StateApproved {
		t.Fatalf("the approval is %s; a call refused before claiming leaves it approved", a.State)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	r.close(t)
}

// TestRediscoveryInvalidatesApprovals: an approval is bound to the complete
// write catalog. After the catalog changes, the old registration is stale
// and the new one (another identity) needs its own approval; nothing is
// dispatched on the old one.
func TestRediscoveryInvalidatesApprovals(t *testing.T) {
	remoteDir := t.TempDir()
	db := filepath.Join(t.TempDir(), "approvals.db")
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, db)
	defer store.Close()
	old, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	id := approveFirstCall(t, store, plan)

	// The host re-declares the scope (a new scope revision) and rediscovers.
	bindings := writeBindings(nil)
	b := bindings["record_value"]
	b.ScopeRevision = "scope-2"
	bindings["record_value"] = b
	fresh, err := mcpimport.DiscoverWrites(context.Background(), newSession(t, r.cs, r.mon, "ledger"), bindings, &mcpimport.WriteOptions{Approvals: store})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Snapshot().Digest() == old.Snapshot().Digest() {
		t.Fatal("a new scope revision left the write catalog digest unchanged")
	}
	app := agnara.New("host", nil)
	fresh.Register(app)
	plans, _ := execution.Compile(app)
	p2, _ := plans.Lookup("host.record_value")
	_, f := invokeWrite(t, p2)
	if execution.ReasonOf(f) != approval.ReasonPending || f.Details["approval_id"] == id {
		t.Fatalf("call on the new catalog: %v (details %v), want a new pending approval", f, f.Details)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	r.close(t)
}

func TestWriteSnapshot(t *testing.T) {
	r := startWriteServer(t, t.TempDir(), "success", "2026-07-28")
	store := openStore(t, filepath.Join(t.TempDir(), "a.db"))
	defer store.Close()
	cat, _ := writePlans(t, r, store, mcpimport.Limits{}, nil)
	snap := cat.Snapshot()
	if snap.SchemaVersion() != 2 {
		t.Errorf("schema version %d, want 2", snap.SchemaVersion())
	}
	e := snap.Entries()[0]
	if e.Mode != mcpimport.ModeConfirm || e.Effect != approval.EffectWrite || e.ConcurrencySafe ||
		*e.Authorization != (mcpimport.Authorization{BindingID: "ledger-service", BindingRevision: "host-config-1", ScopeID: "sandbox-ledger", ScopeRevision: "scope-1"}) {
		t.Errorf("entry %+v", e)
	}
	doc, _ := json.Marshal(snap)
	for _, want := range []string{`"schemaVersion":2`, `"authorization":{"bindingId":"ledger-service","bindingRevision":"host-config-1","scopeId":"sandbox-ledger","scopeRevision":"scope-1"}`, `"policy":{"effect":"write","mode":"confirm","title":"Record the value"}`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("document lacks %s:\n%s", want, doc)
		}
	}
	r.close(t)
}

func TestWriteBindingsAreChecked(t *testing.T) {
	r := startWriteServer(t, t.TempDir(), "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "a.db"))
	defer store.Close()
	change := func(f func(*mcpimport.WriteBinding)) map[string]mcpimport.WriteBinding {
		bs := writeBindings(nil)
		b := bs["record_value"]
		f(&b)
		bs["record_value"] = b
		return bs
	}
	for _, tc := range []struct {
		name     string
		bindings map[string]mcpimport.WriteBinding
		store    approval.Store
		want     string
	}{
		{"no store", writeBindings(nil), nil, "Approvals"},
		{"no title", change(func(b *mcpimport.WriteBinding) { b.Title = "" }), store, "no title"},
		{"no effect", change(func(b *mcpimport.WriteBinding) { b.Effect = "" }), store, "effect"},
		{"read effect", change(func(b *mcpimport.WriteBinding) { b.Effect = "read" }), store, `effect "read"`},
		{"no validator", change(func(b *mcpimport.WriteBinding) { b.ScopeValidator = nil }), store, "ScopeValidator"},
		{"no binding id", change(func(b *mcpimport.WriteBinding) { b.BindingID = "" }), store, "BindingID"},
		{"no binding revision", change(func(b *mcpimport.WriteBinding) { b.BindingRevision = "" }), store, "BindingRevision"},
		{"no scope id", change(func(b *mcpimport.WriteBinding) { b.ScopeID = "" }), store, "ScopeID"},
		{"no scope revision", change(func(b *mcpimport.WriteBinding) { b.ScopeRevision = "" }), store, "ScopeRevision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &mcpimport.WriteOptions{}
			if tc.store != nil {
				opts.Approvals = tc.store
			}
			_, err := mcpimport.DiscoverWrites(context.Background(), newSession(t, r.cs, r.mon, "ledger"), tc.bindings, opts)
			if execution.ReasonOf(err) != mcpimport.BindingInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %s mentioning %q", err, mcpimport.BindingInvalid, tc.want)
			}
		})
	}
	r.close(t)
}

// TestWriteThroughMCP re-exposes an imported write tool with mcpexpose: a
// caller using the Go SDK client is told the approval is pending (with its
// id); after approval the same call dispatches once; repeats return the
// recorded receipt.
func TestWriteThroughMCP(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2026-07-28")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	cat, err := mcpimport.DiscoverWrites(context.Background(), newSession(t, r.cs, r.mon, "ledger"), writeBindings(nil), &mcpimport.WriteOptions{Approvals: store})
	if err != nil {
		t.Fatal(err)
	}
	app := agnara.New("gw", nil)
	exp := mcpexpose.New(app)
	for _, c := range cat.Register(app) {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	srv := mustServer(mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{DevelopmentPrincipal: &requester}))
	cs, _ := connect(t, srv, "2026-07-28")

	call := func() (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gw.record_value", Arguments: map[string]any{"value": syntheticValue}})
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &body)
		return res, body
	}
	res, body := call()
	details, _ := body["details"].(map[string]any)
	if !res.IsError || body["code"] != "interaction_required" || body["reason"] != "approval_pending" {
		t.Fatalf("first call: %v", body)
	}
	id, _ := details["approval_id"].(string)
	if _, err := store.Approve(context.Background(), id, approver, ""); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		res, _ = call()
		if b, _ := json.Marshal(res.StructuredContent); res.IsError || !strings.Contains(string(b), `"written":true`) {
			t.Fatalf("call %d after approval: %v %s", i+1, res.Content[0], b)
		}
	}
	if got := strings.Join(ledger(t, remoteDir), " "); got != "received written answered" {
		t.Errorf("remote ledger %q: want exactly one dispatch", got)
	}
	r.close(t)
}

// TestConcurrentApprovedCallsDispatchOnce: several identical calls of an
// approved write at once dispatch one tools/call; every caller gets the one
// recorded result.
func TestConcurrentApprovedCallsDispatchOnce(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	_, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	_, f := invokeWrite(t, plan)
	if _, err := store.Approve(context.Background(), f.Details["approval_id"].(string), approver, ""); err != nil {
		t.Fatal(err)
	}
	const n = 6
	results := make(chan string, n)
	for range n {
		go func() {
			env, f := invokeWrite(t, plan)
			if f != nil {
				results <- "failure " + string(execution.ReasonOf(f))
				return
			}
			results <- string(env)
		}()
	}
	first := <-results
	for range n - 1 {
		if got := <-results; got != first {
			t.Errorf("callers got different outcomes: %s and %s", first, got)
		}
	}
	if !strings.Contains(first, `"written":true`) {
		t.Errorf("outcome %s", first)
	}
	if got := strings.Join(ledger(t, remoteDir), " "); got != "received written answered" {
		t.Errorf("remote ledger %q: want exactly one dispatch", got)
	}
	r.close(t)
}

// TestClaimHeldByADeadProcess: a claim taken by a process that died before
// recording a receipt stays held; calls report an unknown effect and never
// dispatch, until a host reconciles it.
func TestClaimHeldByADeadProcess(t *testing.T) {
	remoteDir := t.TempDir()
	db := filepath.Join(t.TempDir(), "approvals.db")
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, db)
	defer store.Close()
	_, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	id := approveFirstCall(t, store, plan)
	// Another host process claims it with the same registration identity,
	// then dies: its store is never closed and nothing is completed.
	a, _ := store.Get(context.Background(), id)
	other := openStore(t, db)
	if _, err := other.Claim(context.Background(), id, a.Intent.Binding); err != nil {
		t.Fatal(err)
	}

	_, f := invokeWrite(t, plan)
	if execution.ReasonOf(f) != approval.ReasonInProgress || f.Code != execution.Conflict || f.Details["effect"] != "unknown" {
		t.Fatalf("call with a dead claim: %v %v", f, f.Details)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	if _, err := store.Reconcile(context.Background(), id, approver, approval.EffectNotStarted, "the remote ledger has no entry for this call"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	r.close(t)
}

// afterClaim is an approval store that runs a hook once a claim succeeds,
// so that tests can change the world between the claim and the dispatch.
type afterClaim struct {
	approval.Store
	hook func()
}

func (s afterClaim) Claim(ctx context.Context, id string, current approval.Binding) (approval.Approval, error) {
	a, err := s.Store.Claim(ctx, id, current)
	if err == nil {
		s.hook()
	}
	return a, err
}

// approveFirstCall makes the first call of p (pending) and approves it.
func approveFirstCall(t *testing.T, store approval.Store, p *execution.Plan) string {
	t.Helper()
	_, f := invokeWrite(t, p)
	if f == nil || execution.ReasonOf(f) != approval.ReasonPending {
		t.Fatalf("first call: %v, want %s", f, approval.ReasonPending)
	}
	id := f.Details["approval_id"].(string)
	if _, err := store.Approve(context.Background(), id, approver, ""); err != nil {
		t.Fatal(err)
	}
	return id
}

// wantNotStarted checks a refused dispatch: the failure, a not_started
// receipt, and nothing on the remote side.
func wantNotStarted(t *testing.T, store approval.Store, f *execution.Failure, id string, code execution.Reason, remoteDir string) {
	t.Helper()
	if f == nil || execution.ReasonOf(f) != code || f.Code != mcpimport.Canonical(code) || f.Details["effect"] != string(approval.EffectNotStarted) {
		t.Fatalf("approved call: %v (details %v), want %s with effect not_started", f, f.Details, code)
	}
	a, err := store.Get(context.Background(), id)
	if err != nil || a.State != approval.StateCompleted || a.Receipt == nil || a.Receipt.Effect != approval.EffectNotStarted || a.Receipt.Reason != code {
		t.Fatalf("recorded %+v (receipt %+v), %v; want completed, not_started, %s", a, a.Receipt, err, code)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
}

// TestScopeRevokedAfterClaim: the scope validator runs again after the
// claim, just before dispatch; a scope revoked between the claim and the
// send refuses the write, recorded as not started.
func TestScopeRevokedAfterClaim(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	var revoked sync.Map
	validator := func(_ context.Context, caller policy.Principal, _ json.RawMessage) error {
		if _, ok := revoked.Load(caller.ID()); ok {
			return errors.New("scope revoked")
		}
		return nil
	}
	hooked := afterClaim{Store: store, hook: func() { revoked.Store(requester.ID(), true) }}
	_, plan := writePlans(t, r, hooked, mcpimport.Limits{}, validator)
	id := approveFirstCall(t, store, plan)
	_, f := invokeWrite(t, plan)
	wantNotStarted(t, store, f, id, mcpimport.ReasonScopeDenied, remoteDir)
	r.close(t)
}

// TestCatalogStaleAfterClaim: a catalog change between the claim and the
// send refuses the write, recorded as not started.
func TestCatalogStaleAfterClaim(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	hooked := afterClaim{Store: store, hook: func() { r.mon.ToolListChanged(context.Background(), nil) }}
	_, plan := writePlans(t, r, hooked, mcpimport.Limits{}, nil)
	id := approveFirstCall(t, store, plan)
	_, f := invokeWrite(t, plan)
	wantNotStarted(t, store, f, id, mcpimport.ReasonCatalogStale, remoteDir)
	r.close(t)
}

// TestStaleWriteCatalogPreparesNothing: a call of a stale write catalog
// fails at once; no approval is prepared.
func TestStaleWriteCatalogPreparesNothing(t *testing.T) {
	r := startWriteServer(t, t.TempDir(), "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	_, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	r.mon.ToolListChanged(context.Background(), nil)
	_, f := invokeWrite(t, plan)
	if f == nil || execution.ReasonOf(f) != mcpimport.ReasonCatalogStale {
		t.Fatalf("call of a stale catalog: %v, want %s", f, mcpimport.ReasonCatalogStale)
	}
	if all, err := store.List(context.Background(), approval.Filter{}); err != nil || len(all) != 0 {
		t.Fatalf("recorded %d approvals (%v), want none", len(all), err)
	}
	r.close(t)
}

// TestAnonymousWriteRefused: a write tool without local scopes still refuses
// anonymous callers (approvals need to know who asked), with scope_denied
// and nothing recorded. The refusal is the write's policy, so it comes
// before the arguments are read (whatever they are), and it is what lets a
// destructive write bound without scopes compile (ADR 57).
func TestAnonymousWriteRefused(t *testing.T) {
	r := startWriteServer(t, t.TempDir(), "success", "2025-11-25")
	defer r.close(t)
	for _, tt := range []struct {
		effect approval.Effect
		args   string
	}{
		{approval.EffectWrite, `{"value":"` + syntheticValue + `"}`},
		{approval.EffectDestructive, `{"value":"` + syntheticValue + `"}`},
		{approval.EffectDestructive, `{"unknown":1}`},
	} {
		t.Run(string(tt.effect)+" "+tt.args, func(t *testing.T) {
			store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
			defer store.Close()
			var validated atomic.Bool
			bindings := writeBindings(func(context.Context, policy.Principal, json.RawMessage) error { validated.Store(true); return nil })
			b := bindings["record_value"]
			b.Scopes = nil // no local scope guard in front of the handler
			b.Effect = tt.effect
			bindings["record_value"] = b
			cat, err := mcpimport.DiscoverWrites(context.Background(), newSession(t, r.cs, r.mon, "ledger"), bindings, &mcpimport.WriteOptions{Approvals: store})
			if err != nil {
				t.Fatal(err)
			}
			app := agnara.New("host", nil)
			cat.Register(app)
			plans, err := execution.Compile(app)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := plans.Lookup("host.record_value")
			out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: policy.Anonymous(), Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			f, _ := out.(*execution.Failure)
			if f == nil || execution.ReasonOf(f) != mcpimport.ReasonScopeDenied || f.Code != execution.Forbidden {
				t.Fatalf("anonymous call: %v, want %s", out, mcpimport.ReasonScopeDenied)
			}
			if validated.Load() {
				t.Error("the scope validator ran for an anonymous caller")
			}
			if all, err := store.List(context.Background(), approval.Filter{}); err != nil || len(all) != 0 {
				t.Fatalf("recorded %d approvals (%v), want none", len(all), err)
			}
		})
	}
}

// TestApprovalBoundToCatalogDigest: an approval's binding revision is the
// write catalog's digest, not the host's binding revision; so a rediscovery
// that changes only the catalog (here the policy title) needs a new
// approval, and nothing is dispatched on the old one.
func TestApprovalBoundToCatalogDigest(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	old, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	id := approveFirstCall(t, store, plan)
	a, err := store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Intent.Binding.Revision != old.Snapshot().Digest() {
		t.Fatalf("approval binding revision %q, want the catalog digest %s", a.Intent.Binding.Revision, old.Snapshot().Digest())
	}
	// What approvers read beside the title: the remote description and the
	// host's name for the server.
	if a.Intent.Description != "Record the synthetic value in the server's folder." || a.Intent.Server != "ledger" {
		t.Errorf("the approval describes the tool as %q on %q, want the remote description on ledger", a.Intent.Description, a.Intent.Server)
	}

	bindings := writeBindings(nil)
	b := bindings["record_value"]
	b.Title = "Record the value (reworded)" // same host and scope revisions
	bindings["record_value"] = b
	fresh, err := mcpimport.DiscoverWrites(context.Background(), newSession(t, r.cs, r.mon, "ledger"), bindings, &mcpimport.WriteOptions{Approvals: store})
	if err != nil {
		t.Fatal(err)
	}
	app := agnara.New("host", nil)
	fresh.Register(app)
	plans, _ := execution.Compile(app)
	p2, _ := plans.Lookup("host.record_value")
	_, f := invokeWrite(t, p2)
	if f == nil || execution.ReasonOf(f) != approval.ReasonPending || f.Details["approval_id"] == id {
		t.Fatalf("call on the new catalog: %v, want a new pending approval", f)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	r.close(t)
}

// TestRejectedWriteIsRefused: after an approver rejects a call, the same
// call is refused with approval_rejected (forbidden), again on every
// repeat, and nothing is dispatched.
func TestRejectedWriteIsRefused(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	_, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	_, f := invokeWrite(t, plan)
	id := f.Details["approval_id"].(string)
	if _, err := store.Reject(context.Background(), id, approver, "not today"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, f = invokeWrite(t, plan)
		if f == nil || execution.ReasonOf(f) != approval.ReasonRejected || f.Code != execution.Forbidden ||
			f.Details["approval_id"] != id {
			t.Fatalf("rejected call: %v (details %v), want %s", f, f.Details, approval.ReasonRejected)
		}
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	r.close(t)
}

// TestWriteArgumentsOverLimit: write arguments over the object limit are
// refused before anything is prepared.
func TestWriteArgumentsOverLimit(t *testing.T) {
	r := startWriteServer(t, t.TempDir(), "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	args := `{"value":"` + syntheticValue + `"}`
	_, plan := writePlans(t, r, store, mcpimport.Limits{ObjectBytes: len(args) - 1}, nil)
	_, f := invokeWrite(t, plan)
	if f == nil || execution.ReasonOf(f) != mcpimport.ReasonInvalidArguments || f.Code != execution.InvalidInput {
		t.Fatalf("arguments over the limit: %v, want %s", f, mcpimport.ReasonInvalidArguments)
	}
	if all, err := store.List(context.Background(), approval.Filter{}); err != nil || len(all) != 0 {
		t.Fatalf("recorded %d approvals (%v), want none", len(all), err)
	}
	r.close(t)
}

// bindingChanged is an approval store whose claims are refused because the
// registration changed (as a shared store may report).
type bindingChanged struct{ approval.Store }

func (bindingChanged) Claim(context.Context, string, approval.Binding) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrBindingChanged
}

// TestClaimRefusedForChangedBinding: a claim refused with ErrBindingChanged
// is reported as approval_binding_changed (conflict), not started, and
// nothing is dispatched.
func TestClaimRefusedForChangedBinding(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	_, plan := writePlans(t, r, bindingChanged{store}, mcpimport.Limits{}, nil)
	id := approveFirstCall(t, store, plan)
	_, f := invokeWrite(t, plan)
	if f == nil || execution.ReasonOf(f) != approval.ReasonBindingChanged || f.Code != execution.Conflict ||
		f.Details["effect"] != string(approval.EffectNotStarted) || f.Details["approval_id"] != id {
		t.Fatalf("refused claim: %v (details %v), want %s, not started", f, f.Details, approval.ReasonBindingChanged)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	r.close(t)
}

// mustServer returns the server of a NewServer call that must succeed.
func mustServer(s *mcp.Server, err error) *mcp.Server {
	if err != nil {
		panic(err)
	}
	return s
}

// TestReceiptInTheOldEnvelopeReplays: a committed receipt recorded before
// results carried content blocks holds {"text": [...], "structured": ...};
// a repeated call still answers it, as text blocks and structured content,
// and dispatches nothing.
func TestReceiptInTheOldEnvelopeReplays(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	_, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	id := approveFirstCall(t, store, plan)
	ctx := context.Background()
	a, err := store.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Claim(ctx, id, a.Intent.Binding); err != nil {
		t.Fatal(err)
	}
	old := `{"text":["recorded"],"structured":{"value":"` + syntheticValue + `","written":true}}`
	if _, err := store.Complete(ctx, id, approval.Receipt{Effect: approval.EffectCommitted, Result: json.RawMessage(old)}); err != nil {
		t.Fatal(err)
	}
	env, f := invokeWrite(t, plan)
	if f != nil || string(env) != old {
		t.Fatalf("repeat: %s %v, want %s", env, f, old)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	r.close(t)
}

// TestWriteApprovalBelongsToIssuerAndSubject: an approval is the
// requester's, by issuer and id (policy.Principal.Key): the same id from
// another issuer, making the same call, is another caller, who gets an
// approval of its own to wait for, and nothing is dispatched on the first
// caller's approval.
func TestWriteApprovalBelongsToIssuerAndSubject(t *testing.T) {
	remoteDir := t.TempDir()
	r := startWriteServer(t, remoteDir, "success", "2025-11-25")
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	_, plan := writePlans(t, r, store, mcpimport.Limits{}, nil)
	invoke := func(who policy.Principal) *execution.Failure {
		t.Helper()
		out, err := plan.Invoke(context.Background(), &execution.Invocation{Principal: who, Arguments: json.RawMessage(`{"value":"` + syntheticValue + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := out.(*execution.Failure)
		if f == nil || execution.ReasonOf(f) != approval.ReasonPending {
			t.Fatalf("%s's call: %v, want %s", who.Key(), out, approval.ReasonPending)
		}
		return f
	}
	first := invoke(requester.WithIssuer("https://a.example")).Details["approval_id"].(string)
	if _, err := store.Approve(context.Background(), first, approver, ""); err != nil {
		t.Fatal(err)
	}
	if other := invoke(requester.WithIssuer("https://b.example")).Details["approval_id"]; other == first {
		t.Fatalf("the other issuer's rita was given the first rita's approval %s", first)
	}
	if got := ledger(t, remoteDir); got != nil {
		t.Fatalf("the remote saw %v", got)
	}
	r.close(t)
}
