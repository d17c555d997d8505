package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func clockAt(t time.Time) func() time.Time { return func() time.Time { return t } }

func binding(tool string) approval.Binding {
	return approval.Binding{Tool: tool, ID: "document-service", Revision: "sha256:abc",
		ScopeID: "sandbox-documents", ScopeRevision: "scope-1", Effect: approval.EffectWrite}
}

func intent(t *testing.T, key, tool, requester, args string) approval.Intent {
	t.Helper()
	d, err := execution.ArgumentsDigest(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return approval.Intent{Binding: binding(tool), PrincipalID: requester, PrincipalIssuer: "https://idp.example",
		Arguments: json.RawMessage(args), ArgumentsDigest: d, IdempotencyKey: key, Summary: "Update document"}
}

var bob = policy.NewPrincipal("bob", []string{approval.DefaultApproverScope}).WithIssuer("https://idp.example")

// database is a host's approval database for the commands: a new SQLite
// file, or a new PostgreSQL database the test migrated as a host would.
type database struct {
	flag, loc string // -db PATH or -postgres DSN
}

func sqliteDB(t *testing.T) database {
	return database{"-db", filepath.Join(t.TempDir(), "approvals.db")}
}

func postgresDB(t *testing.T) database {
	t.Helper()
	dsn := enginetest.Postgres(t)
	if err := approval.MigratePostgres(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	return database{"-postgres", dsn}
}

// open opens the database as the host does.
func (d database) open(t *testing.T, opts *approval.Options) store {
	t.Helper()
	var (
		s   store
		err error
	)
	if d.flag == "-db" {
		s, err = approval.OpenSQLite(d.loc, opts)
	} else {
		s, err = approval.OpenPostgres(context.Background(), d.loc, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCommands runs the commands on each kind of database.
func TestCommands(t *testing.T) {
	enginetest.Postgres(t) // one PostgreSQL server for all the subtests
	for _, kind := range []struct {
		name string
		new  func(*testing.T) database
	}{{"sqlite", sqliteDB}, {"postgres", postgresDB}} {
		t.Run(kind.name, func(t *testing.T) {
			for name, test := range map[string]func(*testing.T, database){
				"list": testList, "show": testShow, "decide": testDecide, "reconcile": testReconcileCommand,
			} {
				t.Run(name, func(t *testing.T) { test(t, kind.new(t)) })
			}
		})
	}
}

// fixture writes d with one approval in each of three states, the oldest
// first, an hour apart, and returns the ids.
func fixture(t *testing.T, d database) (pending, approved, completed string) {
	t.Helper()
	at := now
	s := d.open(t, &approval.Options{Clock: func() time.Time { return at }})
	defer s.Close()
	ctx := context.Background()
	in := intent(t, "k1", "gw.update_document", "alice", `{"id":42,"title":"Q3 plan"}`)
	in.Credential = "token_exchange" // a gateway upstream that acts as the requester
	c, err := s.Prepare(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	at = at.Add(time.Minute)
	for _, step := range []func() error{
		func() error { _, err := s.Approve(ctx, c.ID, bob, "checked"); return err },
		func() error { _, err := s.Claim(ctx, c.ID, binding("gw.update_document")); return err },
		func() error {
			_, err := s.Complete(ctx, c.ID, approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_timeout"})
			return err
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	at = now.Add(time.Hour)
	a, err := s.Prepare(ctx, intent(t, "k2", "gw.delete_document", "carol", `{"id":7}`))
	if err != nil {
		t.Fatal(err)
	}
	at = now.Add(90 * time.Minute)
	if _, err := s.Approve(ctx, a.ID, bob, ""); err != nil {
		t.Fatal(err)
	}
	at = now.Add(2 * time.Hour)
	p, err := s.Prepare(ctx, intent(t, "k3", "gw.update_document", "alice", `{"id":43,"title":"Q4 plan"}`))
	if err != nil {
		t.Fatal(err)
	}
	return p.ID, a.ID, c.ID
}

// run runs the command line at time at and returns the exit code and output.
func run(at time.Time, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = (&cli{stdout: &out, stderr: &errOut, clock: clockAt(at)}).run(args)
	return code, out.String(), errOut.String()
}

func testList(t *testing.T, d database) {
	pending, approved, completed := fixture(t, d)
	at := now.Add(2*time.Hour + time.Minute)
	code, out, errOut := run(at, "approvals", "list", d.flag, d.loc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := strings.Join([]string{
		"ID                        STATE      TOOL                REQUESTER  CREATED               EXPIRES               EFFECT",
		pending + "  pending    gw.update_document  alice      2026-12-01T11:00:00Z  2026-12-02T11:00:00Z  -",
		approved + "  approved   gw.delete_document  carol      2026-12-01T10:00:00Z  2026-12-01T11:30:00Z  -",
		completed + "  completed  gw.update_document  alice      2026-12-01T09:00:00Z  -                     unknown",
		"",
	}, "\n")
	if diff := cmp.Diff(want, out); diff != "" {
		t.Fatalf("list output (-want +got):\n%s", diff)
	}

	// Later the approved one is past its dispatch deadline.
	code, out, _ = run(at.Add(30*time.Minute), "approvals", "list", d.flag, d.loc, "-state", "expired")
	if code != 0 || !strings.Contains(out, approved+"  expired") || strings.Count(out, "\n") != 2 {
		t.Fatalf("list -state expired = %d:\n%s", code, out)
	}
	code, out, _ = run(at, "approvals", "list", "-state", "pending", d.flag, d.loc)
	if code != 0 || !strings.Contains(out, pending) || strings.Contains(out, completed) {
		t.Fatalf("list -state pending = %d:\n%s", code, out)
	}
	code, out, _ = run(at, "approvals", "list", d.flag, d.loc, "-limit", "1")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, pending) {
		t.Fatalf("list -limit 1 = %d:\n%s", code, out)
	}
}

func testShow(t *testing.T, d database) {
	_, _, completed := fixture(t, d)
	code, out, errOut := run(now.Add(3*time.Hour), "approvals", "show", d.flag, d.loc, completed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"ID:               " + completed,
		"State:            completed",
		"Tool:             gw.update_document",
		"Binding:          document-service @ sha256:abc",
		"Scope:            sandbox-documents @ scope-1",
		"Requester:        alice (https://idp.example)",
		"Acts as:          the requester's own token, exchanged for the server (token_exchange)",
		`Decided:          bob at 2026-12-01T09:01:00Z (note: "checked")`,
		"Claimed:          2026-12-01T09:01:00Z",
		"Receipt:          unknown at 2026-12-01T09:01:00Z, reason mcp_timeout",
		"Arguments (sha256:",
		"  {\n    \"id\": 42,\n    \"title\": \"Q3 plan\"\n  }\n",
		"prepared   alice",
		"approved   bob",
		"claimed    -",
		"completed  -",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

func testDecide(t *testing.T, d database) {
	pending, approved, _ := fixture(t, d)
	at := now.Add(2*time.Hour + time.Minute)

	code, _, errOut := run(at, "approvals", "approve", pending, d.flag, d.loc, "-as", "alice", "-issuer", "https://idp.example")
	if code != 1 || !strings.Contains(errOut, "cannot decide their own") || !strings.Contains(errOut, "different approver") {
		t.Fatalf("self approval = %d: %s", code, errOut)
	}
	code, _, errOut = run(at, "approvals", "approve", pending, d.flag, d.loc)
	if code != 1 || !strings.Contains(errOut, "-as is required") {
		t.Fatalf("approve without -as = %d: %s", code, errOut)
	}
	code, out, errOut := run(at, "approvals", "approve", d.flag, d.loc, "-as", "dave", pending, "-note", "fine")
	if code != 0 || !strings.Contains(out, pending+" approved: gw.update_document") || !strings.Contains(out, "until 2026-12-01T12:01:00Z") {
		t.Fatalf("approve = %d: %s %s", code, out, errOut)
	}
	code, _, errOut = run(at, "approvals", "reject", pending, d.flag, d.loc, "-as", "erin")
	if code != 1 || !strings.Contains(errOut, "not pending") {
		t.Fatalf("reject after approve = %d: %s", code, errOut)
	}
	code, out, _ = run(at, "approvals", "cancel", approved, d.flag, d.loc, "-as", "erin", "-note", "wrong document")
	if code != 0 || !strings.Contains(out, approved+" canceled") {
		t.Fatalf("cancel = %d: %s", code, out)
	}

	s := d.open(t, &approval.Options{Clock: clockAt(at)})
	defer s.Close()
	a, err := s.Get(context.Background(), pending)
	if err != nil || a.State != approval.StateApproved || a.DecidedBy != "dave" || a.Note != "fine" {
		t.Fatalf("stored = %+v, %v", a, err)
	}
	a, err = s.Get(context.Background(), approved)
	if err != nil || a.State != approval.StateCanceled || a.DecidedBy != "erin" {
		t.Fatalf("stored = %+v, %v", a, err)
	}

	code, _, errOut = run(at, "approvals", "approve", "apv_missing", d.flag, d.loc, "-as", "dave")
	if code != 1 || !strings.Contains(errOut, "not found") || !strings.Contains(errOut, "approvals list") {
		t.Fatalf("unknown id = %d: %s", code, errOut)
	}
}

func testReconcileCommand(t *testing.T, d database) {
	_, _, completed := fixture(t, d)
	at := now.Add(3 * time.Hour)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-as", "bob", "-effect", "committed"}, "-evidence is required"},
		{[]string{"-as", "bob", "-effect", "unknown", "-evidence", "x"}, `-effect "unknown": want committed or not_started`},
		{[]string{"-effect", "committed", "-evidence", "x"}, "-as is required"},
		{[]string{"-as", "bob", "-effect", "committed", "-evidence", "x", "-note", "n"}, "-note is not used"},
	} {
		args := append([]string{"approvals", "reconcile", completed, d.flag, d.loc}, tc.args...)
		code, _, errOut := run(at, args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v = %d: %s; want %q", tc.args, code, errOut, tc.want)
		}
	}
	code, out, errOut := run(at, "approvals", "reconcile", completed, d.flag, d.loc, "-as", "bob", "-effect", "committed", "-evidence", "read back document 42: title is Q3 plan")
	if code != 0 || !strings.Contains(out, "reconciled: committed") {
		t.Fatalf("reconcile = %d: %s %s", code, out, errOut)
	}
	_, out, _ = run(at, "approvals", "list", d.flag, d.loc, "-state", "completed")
	if !strings.Contains(out, "unknown (reconciled: committed)") {
		t.Fatalf("list after reconcile:\n%s", out)
	}
	code, _, errOut = run(at, "approvals", "reconcile", completed, d.flag, d.loc, "-as", "bob", "-effect", "not_started", "-evidence", "x")
	if code != 1 || !strings.Contains(errOut, "already reconciled") {
		t.Fatalf("second reconcile = %d: %s", code, errOut)
	}
}

func TestUsage(t *testing.T) {
	for _, cmd := range []string{"list", "show", "approve", "reject", "cancel", "reconcile"} {
		code, out, errOut := run(now, "approvals", cmd, "-h")
		if code != 0 || !strings.HasPrefix(out, "usage: agnara approvals "+cmd) || !strings.Contains(out, "-db path") || errOut != "" {
			t.Errorf("%s -h = %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "expected the command group 'approvals'"},
		{[]string{"approvals"}, "missing command"},
		{[]string{"approvals", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"approvals", "list"}, "-db is required"},
		{[]string{"approvals", "list", "-db", "x.db", "-state", "done"}, `-state "done": want one of pending,`},
		{[]string{"approvals", "list", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"approvals", "show", "-db", "x.db"}, "missing approval ID"},
		{[]string{"approvals", "show", "-db", "x.db", "a", "b"}, "one approval ID expected, got 2"},
	} {
		code, _, errOut := run(now, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v = %d: %s; want %q", tc.args, code, errOut, tc.want)
		}
	}
	code, out, _ := run(now, "approvals", "-h")
	if code != 0 || !strings.Contains(out, "reconcile") {
		t.Errorf("approvals -h = %d: %s", code, out)
	}
}

func TestMissingDatabaseIsNotCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	code, _, errOut := run(now, "approvals", "list", "-db", path)
	if code != 1 || !strings.Contains(errOut, "no approval database at "+path) {
		t.Fatalf("= %d: %s", code, errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the command created %s: %v", path, err)
	}
}

// TestPostgresIsNeverMigrated: the command refuses a PostgreSQL database
// the host has not migrated, says what the host must run, and leaves the
// database as it found it.
func TestPostgresIsNeverMigrated(t *testing.T) {
	dsn := enginetest.Postgres(t)
	code, _, errOut := run(now, "approvals", "list", "-postgres", dsn)
	if code != 1 || !strings.Contains(errOut, "no approval schema") || !strings.Contains(errOut, "MigratePostgres") {
		t.Fatalf("list on an unmigrated database = %d: %s", code, errOut)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tables int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("the command created %d tables (%v)", tables, err)
	}
}

func TestPostgresFlag(t *testing.T) {
	const secret = "hunter2-s3cret"
	dsn := fmt.Sprintf("postgres://bob:%s@127.0.0.1:%d/approvals?connect_timeout=5", secret, enginetest.FreePort(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"approvals", "list", "-db", "x.db", "-postgres", dsn}, "give one of them"},
		{[]string{"approvals", "show", "apv_x"}, "-db is required (or -postgres)"},
		{[]string{"approvals", "approve", "apv_x", "-as", "dave"}, "-db is required (or -postgres)"},
		{[]string{"approvals", "list", "-postgres", dsn}, "127.0.0.1"},
		{[]string{"approvals", "list", "-postgres", "postgres://bob:" + secret + "@127.0.0.1:x/db"}, "PostgreSQL DSN"},
	} {
		code, out, errOut := run(now, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v = %d: %s; want %q", tc.args, code, errOut, tc.want)
		}
		if strings.Contains(out+errOut, secret) {
			t.Errorf("%v printed the password: %s", tc.args, errOut)
		}
	}
	for _, cmd := range []string{"list", "show", "approve", "reconcile"} {
		if _, out, _ := run(now, "approvals", cmd, "-h"); !strings.Contains(out, "-postgres DSN") {
			t.Errorf("%s -h does not offer -postgres:\n%s", cmd, out)
		}
	}
}

// TestApprovalsConnections: `approvals connections` lists one person's
// grants and nobody else's, revokes one by upstream and client, and says
// what is missing.
func TestApprovalsConnections(t *testing.T) {
	d := sqliteDB(t)
	s, err := approval.OpenSQLite(d.loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	alice := policy.NewPrincipal("alice", nil).WithIssuer("https://idp.example")
	for _, cn := range []approval.Connection{
		{Principal: alice, Upstream: "orders", ClientID: "agent", Scopes: []string{"orders.read"}, Sealed: []byte("x")},
		{Principal: policy.NewPrincipal("bob", nil).WithIssuer("https://idp.example"), Upstream: "files", ClientID: "agent", Sealed: []byte("y")},
	} {
		if err := s.SaveConnection(context.Background(), cn); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	code, out, errOut := run(now, "approvals", "connections", d.flag, d.loc, "-principal", "alice", "-issuer", "https://idp.example")
	if code != 0 || !strings.Contains(out, "orders    agent   orders.read") || strings.Contains(out, "files") {
		t.Fatalf("list = %d:\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(now, "approvals", "connections", d.flag, d.loc, "-principal", "alice", "-issuer", "https://idp.example", "-revoke", "orders"); code == 0 || !strings.Contains(errOut, "-revoke needs -client") {
		t.Errorf("revoke without -client = %d: %s", code, errOut)
	}
	code, out, errOut = run(now, "approvals", "connections", d.flag, d.loc, "-principal", "alice", "-issuer", "https://idp.example", "-revoke", "orders", "-client", "agent")
	if code != 0 || !strings.Contains(out, "revoked: orders no longer acts as alice through agent") {
		t.Fatalf("revoke = %d:\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(now, "approvals", "connections", d.flag, d.loc, "-principal", "alice", "-issuer", "https://idp.example", "-revoke", "orders", "-client", "agent")
	if code == 0 || !strings.Contains(errOut, "alice has no grant for orders through agent") {
		t.Errorf("revoke again = %d: %s", code, errOut)
	}
	if code, _, errOut := run(now, "approvals", "connections", d.flag, d.loc); code == 0 || !strings.Contains(errOut, "-principal and -issuer are required") {
		t.Errorf("without -principal = %d: %s", code, errOut)
	}
}
