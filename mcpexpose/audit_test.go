package mcpexpose_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// auditLog is an audit sink that keeps what it is given.
type auditLog struct {
	mu      sync.Mutex
	records []mcpexpose.AuditRecord
}

func (a *auditLog) Record(_ context.Context, r mcpexpose.AuditRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, r)
}

func (a *auditLog) take() []mcpexpose.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.records
	a.records = nil
	return r
}

type UserIn struct {
	ID string `json:"id"`
}

// secretID is an argument value that must appear in no record.
const secretID = "u-secret-4711"

// usersApp has a delete that needs users:admin and a confirmation, and a
// lookup that fails with a reason and an approval id in its details, as an
// imported write does.
func usersApp(t *testing.T) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("users", nil)
	del := app.Capability(func(context.Context, UserIn) (string, error) { return "deleted", nil },
		&agnara.CapabilityOptions{Name: "delete_user", Description: "Delete a user.", Scopes: []string{"users:admin"}, Confirm: "Delete this user?", Annotations: agnara.Destructive})
	pend := app.Capability(func(context.Context, UserIn) (string, error) {
		return "", execution.Fail(execution.Conflict, "waiting for an approval", map[string]any{"approval_id": "ap-123", "user": secretID}).WithReason("approval_pending")
	}, &agnara.CapabilityOptions{Name: "suspend_user", Description: "Suspend a user."})
	exp := mcpexpose.New(app)
	exp.Tool(del, nil)
	exp.Tool(pend, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// auditTokens: "admin" is alice with users:admin from client "console";
// "guest" is bob without scopes.
func auditTokens(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	extra := map[string]any{mcpexpose.ExtraIssuer: "https://issuer.test", mcpexpose.ExtraClientID: "console"}
	switch token {
	case "admin":
		return &auth.TokenInfo{UserID: "alice", Scopes: []string{"users:admin"}, Expiration: time.Now().Add(time.Hour), Extra: extra}, nil
	case "guest":
		return &auth.TokenInfo{UserID: "bob", Expiration: time.Now().Add(time.Hour), Extra: extra}, nil
	}
	return nil, auth.ErrInvalidToken
}

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// metaWith is a 2026-07-28 _meta declaring elicitation, with traceparent.
func metaWith(tp string) map[string]any {
	m := mcptest.Meta(map[string]any{"elicitation": map[string]any{}})
	if tp != "" {
		m["traceparent"] = tp
	}
	return m
}

func digestOf(t *testing.T, args string) string {
	t.Helper()
	d, err := execution.ArgumentsDigest(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var ignoreTime = cmpopts.IgnoreFields(mcpexpose.AuditRecord{}, "Time")

// checkNoValues fails when an argument value or a failure's details appear
// in a record.
func checkNoValues(t *testing.T, records []mcpexpose.AuditRecord) {
	t.Helper()
	for _, r := range records {
		if s := fmt.Sprintf("%#v", r); strings.Contains(s, secretID) {
			t.Errorf("record holds an argument value: %s", s)
		}
		if r.Time.IsZero() {
			t.Errorf("record %+v has no time", r)
		}
	}
}

// TestAuditConfirmedDelete is "who called delete_user": a confirmed delete
// over raw 2026-07-28 requests is two records, the round that asked and the
// round that deleted, with the caller, the client, the arguments' digest
// and the trace id, and never the arguments.
func TestAuditConfirmedDelete(t *testing.T) {
	sink := &auditLog{}
	h, err := mcpexpose.NewHandler(usersApp(t), &mcpexpose.HandlerOptions{Tokens: auditTokens, Server: &mcpexpose.ServerOptions{Audit: sink}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	args := map[string]any{"id": secretID}
	state := stateOf(t, rawCall(t, url, "admin", "users.delete_user", args, map[string]any{"_meta": metaWith(traceparent)}))
	msg := rawCall(t, url, "admin", "users.delete_user", args, map[string]any{"_meta": metaWith(traceparent), "requestState": state, "inputResponses": yes})
	if res, _ := msg["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Fatalf("confirmed delete = %v", msg)
	}
	want := mcpexpose.AuditRecord{
		PrincipalID: "alice", PrincipalIssuer: "https://issuer.test", ClientID: "console",
		Tool: "users.delete_user", Capability: "users.delete_user", ProtocolVersion: mcpversion.Modern,
		ArgumentsDigest: digestOf(t, `{"id":"`+secretID+`"}`), TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
	}
	asked, done := want, want
	asked.Outcome = agnara.LabelInputRequired
	done.Outcome, done.Resumed = agnara.LabelOK, true
	got := sink.take()
	if diff := cmp.Diff([]mcpexpose.AuditRecord{asked, done}, got, ignoreTime); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	checkNoValues(t, got)

	// Replaying the used state is refused with a protocol error: recorded.
	rawCall(t, url, "admin", "users.delete_user", args, map[string]any{"_meta": metaWith(""), "requestState": state, "inputResponses": yes})
	replay := want
	replay.Outcome, replay.Resumed, replay.TraceID = agnara.LabelError, true, ""
	if diff := cmp.Diff([]mcpexpose.AuditRecord{replay}, sink.take(), ignoreTime); diff != "" {
		t.Errorf("replayed state's record (-want +got):\n%s", diff)
	}
}

// TestAuditHandshakeEraConfirmation: a handshake-era client answers the
// confirmation inside its one request, which is one record.
func TestAuditHandshakeEraConfirmation(t *testing.T) {
	sink := &auditLog{}
	h, err := mcpexpose.NewHandler(usersApp(t), &mcpexpose.HandlerOptions{Tokens: auditTokens, Server: &mcpexpose.ServerOptions{Audit: sink}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, httptestServer(t, h), "admin", "2025-11-25", elicit(func(*mcp.ElicitRequest) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
	}))
	res, err := cs.CallTool(context.Background(), callParams("users.delete_user", map[string]any{"id": secretID}))
	if err != nil || res.IsError {
		t.Fatalf("delete = %+v, %v", res, err)
	}
	want := []mcpexpose.AuditRecord{{
		PrincipalID: "alice", PrincipalIssuer: "https://issuer.test", ClientID: "console",
		Tool: "users.delete_user", Capability: "users.delete_user", ProtocolVersion: "2025-11-25",
		ArgumentsDigest: digestOf(t, `{"id":"`+secretID+`"}`), Outcome: agnara.LabelOK,
	}}
	got := sink.take()
	if diff := cmp.Diff(want, got, ignoreTime); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	checkNoValues(t, got)
}

// TestAuditForbidden: a caller without the scope trying delete_user is
// recorded as forbidden however the server answers it (a 403 challenge over
// HTTP with tokens, "unknown tool" without tokens, a forbidden result with
// ForbiddenResult).
func TestAuditForbidden(t *testing.T) {
	snap := usersApp(t)
	bob := policy.NewPrincipal("bob", nil)
	cases := []struct {
		name   string
		opts   mcpexpose.HandlerOptions
		token  string
		answer func(resp *http.Response, msg map[string]any) bool
		want   mcpexpose.AuditRecord
	}{{
		name:   "403 insufficient_scope",
		opts:   mcpexpose.HandlerOptions{Tokens: auditTokens},
		token:  "guest",
		answer: func(resp *http.Response, _ map[string]any) bool { return resp.StatusCode == http.StatusForbidden },
		want:   mcpexpose.AuditRecord{PrincipalIssuer: "https://issuer.test", ClientID: "console"},
	}, {
		name:   "unknown tool",
		opts:   mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &bob}},
		answer: func(_ *http.Response, msg map[string]any) bool { return msg["error"] != nil },
	}, {
		name:  "forbidden result",
		opts:  mcpexpose.HandlerOptions{Tokens: auditTokens, Server: &mcpexpose.ServerOptions{ForbiddenResult: true}},
		token: "guest",
		answer: func(_ *http.Response, msg map[string]any) bool {
			res, _ := msg["result"].(map[string]any)
			return res != nil && res["isError"] == true
		},
		want: mcpexpose.AuditRecord{PrincipalIssuer: "https://issuer.test", ClientID: "console"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink := &auditLog{}
			server := mcpexpose.ServerOptions{}
			if c.opts.Server != nil {
				server = *c.opts.Server
			}
			server.Audit = sink
			c.opts.Server = &server
			h, err := mcpexpose.NewHandler(snap, &c.opts)
			if err != nil {
				t.Fatal(err)
			}
			url := httptestServer(t, h)
			params := map[string]any{"name": "users.delete_user", "arguments": map[string]any{"id": secretID}, "_meta": metaWith(traceparent)}
			resp, body, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", params, c.token))
			if !c.answer(resp, msg) {
				t.Fatalf("answer %d %s", resp.StatusCode, body)
			}
			want := c.want
			want.PrincipalID, want.Tool, want.Capability = "bob", "users.delete_user", "users.delete_user"
			want.ProtocolVersion, want.Outcome = mcpversion.Modern, "forbidden"
			want.ArgumentsDigest, want.TraceID = digestOf(t, `{"id":"`+secretID+`"}`), "4bf92f3577b34da6a3ce929d0e0e4736"
			got := sink.take()
			if diff := cmp.Diff([]mcpexpose.AuditRecord{want}, got, ignoreTime); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			checkNoValues(t, got)
		})
	}
}

// TestAuditFailure: a failure's record carries its code, its reason and
// the approval its details name, and none of its other details.
func TestAuditFailure(t *testing.T) {
	sink := &auditLog{}
	h, err := mcpexpose.NewHandler(usersApp(t), &mcpexpose.HandlerOptions{Tokens: auditTokens, Server: &mcpexpose.ServerOptions{Audit: sink}})
	if err != nil {
		t.Fatal(err)
	}
	msg := rawCall(t, httptestServer(t, h), "guest", "users.suspend_user", map[string]any{"id": secretID}, nil)
	if res, _ := msg["result"].(map[string]any); res == nil || res["isError"] != true {
		t.Fatalf("suspend = %v, want a failure", msg)
	}
	want := []mcpexpose.AuditRecord{{
		PrincipalID: "bob", PrincipalIssuer: "https://issuer.test", ClientID: "console",
		Tool: "users.suspend_user", Capability: "users.suspend_user", ProtocolVersion: mcpversion.Modern,
		ArgumentsDigest: digestOf(t, `{"id":"`+secretID+`"}`),
		Outcome:         "conflict", Reason: "approval_pending", ApprovalID: "ap-123",
	}}
	got := sink.take()
	if diff := cmp.Diff(want, got, ignoreTime); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	checkNoValues(t, got)
}

type panicSink struct{}

func (panicSink) Record(context.Context, mcpexpose.AuditRecord) { panic("sink is broken") }

// TestAuditSinkPanicDoesNotFailTheCall: the call is answered, and the panic
// is logged.
func TestAuditSinkPanicDoesNotFailTheCall(t *testing.T) {
	var logs mcptest.Buffer
	alice := policy.NewPrincipal("alice", []string{"users:admin"})
	h, err := mcpexpose.NewHandler(usersApp(t), &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{
		DevelopmentPrincipal: &alice, Audit: panicSink{}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for range 2 { // the server survives, and answers again
		stateOf(t, rawCall(t, url, "", "users.delete_user", map[string]any{"id": "u1"}, nil))
	}
	if got := strings.Count(logs.String(), `msg="audit sink panicked" tool=users.delete_user panic="sink is broken"`); got != 2 {
		t.Errorf("panic logged %d times, want 2; log:\n%s", got, logs.String())
	}
}

// auditSchema reads the attribute table of docs/audit.md: name -> type and
// whether it is always present.
func auditSchema(t *testing.T) map[string][2]string {
	t.Helper()
	doc, err := os.ReadFile("../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string][2]string{}
	sc := bufio.NewScanner(bytes.NewReader(doc))
	in := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## Schema of `NewSlogAudit`")
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		schema[strings.Trim(strings.TrimSpace(cells[1]), "`")] = [2]string{strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])}
	}
	if len(schema) == 0 {
		t.Fatal("docs/audit.md has no schema table")
	}
	return schema
}

// TestSlogAuditMatchesTheDocumentedSchema: NewSlogAudit's JSON records have
// exactly the attributes docs/audit.md documents, with their types; the
// always-present ones in every record.
func TestSlogAuditMatchesTheDocumentedSchema(t *testing.T) {
	schema := auditSchema(t)
	var out mcptest.Buffer
	// A host that says whose credential reached past the server (package
	// gateway does, for its upstreams) sets Credential before the sink
	// writes it.
	h, err := mcpexpose.NewHandler(usersApp(t), &mcpexpose.HandlerOptions{Tokens: auditTokens, Server: &mcpexpose.ServerOptions{
		Audit: withCredential{mcpexpose.NewSlogAudit(slog.New(slog.NewJSONHandler(&out, nil)))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	args := map[string]any{"id": secretID}
	state := stateOf(t, rawCall(t, url, "admin", "users.delete_user", args, map[string]any{"_meta": metaWith(traceparent)}))
	rawCall(t, url, "admin", "users.delete_user", args, map[string]any{"_meta": metaWith(traceparent), "requestState": state, "inputResponses": yes})
	rawCall(t, url, "guest", "users.suspend_user", args, nil)
	mcptest.Do(t, mcptest.Request(t, url, "tools/call", map[string]any{"name": "users.delete_user", "arguments": args, "_meta": metaWith("")}, "guest"))

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d records, want 4:\n%s", len(lines), out.String())
	}
	seen := map[string]bool{}
	var outcomes []string
	for _, line := range lines {
		if strings.Contains(line, secretID) {
			t.Errorf("record holds an argument value: %s", line)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("record %q is not JSON: %v", line, err)
		}
		if rec["msg"] != "audit" || rec["level"] != "INFO" {
			t.Errorf("record %s: want msg audit at INFO", line)
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["time"])); err != nil {
			t.Errorf("record %s: time: %v", line, err)
		}
		for _, k := range []string{"time", "level", "msg"} {
			delete(rec, k)
		}
		for k, v := range rec {
			s, ok := schema[k]
			if !ok {
				t.Errorf("attribute %q (in %s) is not documented", k, line)
				continue
			}
			seen[k] = true
			var typ string
			switch v.(type) {
			case string:
				typ = "string"
			case bool:
				typ = "bool"
			}
			if typ != s[0] {
				t.Errorf("attribute %q is %T, documented as %s", k, v, s[0])
			}
		}
		for k, s := range schema {
			if _, ok := rec[k]; !ok && s[1] == "always" {
				t.Errorf("record %s lacks %q, documented as always present", line, k)
			}
		}
		outcomes = append(outcomes, fmt.Sprint(rec["outcome"]))
	}
	for k := range schema {
		if !seen[k] {
			t.Errorf("documented attribute %q never written", k)
		}
	}
	if diff := cmp.Diff([]string{"input_required", "ok", "conflict", "forbidden"}, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// withCredential is a host's sink that names the credential of every
// record, as package gateway's does.
type withCredential struct{ next mcpexpose.AuditSink }

func (w withCredential) Record(ctx context.Context, r mcpexpose.AuditRecord) {
	r.Credential = "token_exchange"
	w.next.Record(ctx, r)
}
