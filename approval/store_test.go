package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/policy"
)

// clock is a settable Options.Clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var (
	requester = policy.NewPrincipal("alice", []string{"docs:write"}).WithIssuer("https://idp.example")
	approver  = policy.NewPrincipal("bob", []string{approval.DefaultApproverScope}).WithIssuer("https://idp.example")
	carol     = policy.NewPrincipal("carol", []string{approval.DefaultApproverScope}).WithIssuer("https://idp.example")
)

func testBinding() approval.Binding {
	return approval.Binding{
		Tool:          "gw.update_document",
		ID:            "document-service",
		Revision:      "sha256:1111111111111111111111111111111111111111111111111111111111111111",
		ScopeID:       "sandbox-documents",
		ScopeRevision: "scope-1",
		Effect:        approval.EffectWrite,
	}
}

func testIntent(t testing.TB, key, args string) approval.Intent {
	t.Helper()
	digest, err := execution.ArgumentsDigest(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return approval.Intent{
		Binding:         testBinding(),
		PrincipalID:     requester.ID(),
		PrincipalIssuer: requester.Issuer(),
		Arguments:       json.RawMessage(args),
		ArgumentsDigest: digest,
		IdempotencyKey:  key,
		Summary:         "Update document",
	}
}

// store is what the suite tests: the Store interface and the audit trail.
type store interface {
	approval.Store
	Events(ctx context.Context, id string) ([]approval.Event, error)
}

// backend is one database the suite runs on.
type backend struct {
	name string
	// newDB returns a fresh database, ready to open: a file path, or the
	// DSN of a migrated PostgreSQL database.
	newDB func(t testing.TB) string
	// connect opens a store on db.
	connect func(db string, opts *approval.Options) (store, error)
	// hold keeps what newDB needs (a PostgreSQL server) for t's subtests.
	hold func(t testing.TB)
}

func backends() []backend {
	return []backend{
		{
			name:  "sqlite",
			newDB: dbPath,
			connect: func(db string, opts *approval.Options) (store, error) {
				s, err := approval.OpenSQLite(db, opts)
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			hold: func(testing.TB) {},
		},
		{
			name:  "postgres",
			newDB: postgresDB,
			connect: func(db string, opts *approval.Options) (store, error) {
				s, err := approval.OpenPostgres(context.Background(), db, opts)
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			hold: func(t testing.TB) { enginetest.Postgres(t) },
		},
		{
			// PostgreSQL behind PgBouncer in transaction pooling mode,
			// with the DSN setting docs/scaling.md gives for it.
			name:  "pgbouncer",
			newDB: pgbouncerDB,
			connect: func(db string, opts *approval.Options) (store, error) {
				s, err := approval.OpenPostgres(context.Background(), db, opts)
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			hold: func(t testing.TB) { enginetest.PgBouncer(t) },
		},
	}
}

// backendNamed returns the backend called name.
func backendNamed(name string) (backend, bool) {
	for _, b := range backends() {
		if b.name == name {
			return b, true
		}
	}
	return backend{}, false
}

// postgresDB returns a fresh PostgreSQL database, migrated as a host would.
func postgresDB(t testing.TB) string {
	t.Helper()
	dsn := enginetest.Postgres(t)
	if err := approval.MigratePostgres(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// pooledMode is the DSN setting a store behind PgBouncer's transaction
// pooling needs (docs/scaling.md).
const pooledMode = "&default_query_exec_mode=cache_describe"

// pgbouncerDB returns the DSN of a fresh PostgreSQL database reached
// through PgBouncer in transaction pooling mode, migrated through it as a
// host would.
func pgbouncerDB(t testing.TB) string {
	t.Helper()
	pooled, _ := enginetest.PgBouncer(t)
	dsn := pooled + pooledMode
	if err := approval.MigratePostgres(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// open opens a store on db with clock c (nil: the real one), closed when
// the test ends.
func (b backend) open(t testing.TB, db string, c *clock) store {
	t.Helper()
	var opts approval.Options
	if c != nil {
		opts.Clock = c.Now
	}
	s, err := b.connect(db, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// fresh opens a store on a fresh database.
func (b backend) fresh(t testing.TB, c *clock) store {
	t.Helper()
	return b.open(t, b.newDB(t), c)
}

// behaviours are the Store semantics, one suite for every backend so that
// the databases cannot drift apart.
var behaviours = []struct {
	name string
	run  func(t *testing.T, b backend)
}{
	{"Lifecycle", testLifecycle},
	{"CompleteRecordsReceipt", testCompleteRecordsReceipt},
	{"EventsAreTheAuditTrail", testEventsAreTheAuditTrail},
	{"ListAndFilter", testListAndFilter},
	{"PagesStayPut", testPagesStayPut},
	{"SignIns", testSignIns},
	{"Connections", testConnections},
	{"IntentDisplay", testIntentDisplay},
	{"ClaimChecksTheCurrentBinding", testClaimChecksTheCurrentBinding},
	{"Prepare", testPrepare},
	{"PrepareRefusesInvalidIntents", testPrepareRefusesInvalidIntents},
	{"PrepareRefusesInvalidIdentities", testPrepareRefusesInvalidIdentities},
	{"SelfApprovalSpellings", testSelfApprovalSpellings},
	{"Reconcile", testReconcile},
	{"Restart", testRestart},
	{"ClaimExactlyOnce", testClaimExactlyOnce},
	{"CompleteExactlyOnce", testCompleteExactlyOnce},
	{"DecideExactlyOnce", testDecideExactlyOnce},
	{"PrepareExactlyOnce", testPrepareExactlyOnce},
	{"ClosedStore", testClosedStore},
	{"Reasons", testReasons},
	{"Decided", testDecided},
}

func TestStore(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			b.hold(t)
			for _, bh := range behaviours {
				t.Run(bh.name, func(t *testing.T) {
					t.Parallel()
					bh.run(t, b)
				})
			}
		})
	}
}

// dbPath is a new SQLite database path.
func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "approvals.db") }

// open opens a SQLite store, for the SQLite-only tests.
func open(t testing.TB, path string, c *clock) *approval.SQLiteStore {
	t.Helper()
	b, _ := backendNamed("sqlite")
	return b.open(t, path, c).(*approval.SQLiteStore)
}

func mustState(t testing.TB, s approval.Store, id string, want approval.State) approval.Approval {
	t.Helper()
	a, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	if a.State != want {
		t.Fatalf("approval %s is %s, want %s", id, a.State, want)
	}
	return a
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

func testLifecycle(t *testing.T, b backend) {
	ctx := context.Background()
	receipt := approval.Receipt{Effect: approval.EffectCommitted, Result: json.RawMessage(`{"result":{"ok":true}}`)}
	type env struct {
		s  store
		c  *clock
		id string
	}
	approve := func(e env) error { _, err := e.s.Approve(ctx, e.id, approver, "looks right"); return err }
	claim := func(e env) error { _, err := e.s.Claim(ctx, e.id, testBinding()); return err }
	tests := []struct {
		name  string
		steps []func(env) error // all but the last must succeed
		err   error             // of the last step
		state approval.State
	}{
		{"approve claim complete", []func(env) error{approve, claim, func(e env) error {
			_, err := e.s.Complete(ctx, e.id, receipt)
			return err
		}}, nil, approval.StateCompleted},
		{"reject", []func(env) error{func(e env) error {
			_, err := e.s.Reject(ctx, e.id, approver, "wrong document")
			return err
		}}, nil, approval.StateRejected},
		{"requester cancels pending", []func(env) error{func(e env) error {
			_, err := e.s.Cancel(ctx, e.id, requester, "changed my mind")
			return err
		}}, nil, approval.StateCanceled},
		{"approver cancels approved", []func(env) error{approve, func(e env) error {
			_, err := e.s.Cancel(ctx, e.id, carol, "")
			return err
		}}, nil, approval.StateCanceled},
		{"stranger cannot cancel", []func(env) error{func(e env) error {
			_, err := e.s.Cancel(ctx, e.id, policy.NewPrincipal("mallory", nil), "")
			return err
		}}, approval.ErrNotAuthorized, approval.StatePending},
		{"canceled cannot be claimed", []func(env) error{approve, func(e env) error {
			_, err := e.s.Cancel(ctx, e.id, requester, "")
			return err
		}, claim}, approval.ErrNotApproved, approval.StateCanceled},
		{"claimed cannot be canceled", []func(env) error{approve, claim, func(e env) error {
			_, err := e.s.Cancel(ctx, e.id, approver, "")
			return err
		}}, approval.ErrNotPending, approval.StateClaimed},
		{"pending expires", []func(env) error{func(e env) error {
			e.c.Add(24 * time.Hour)
			return approve(e)
		}}, approval.ErrExpired, approval.StateExpired},
		{"pending not yet expired", []func(env) error{func(e env) error {
			e.c.Add(24*time.Hour - time.Nanosecond)
			return approve(e)
		}}, nil, approval.StateApproved},
		{"approved expires before claim", []func(env) error{approve, func(e env) error {
			e.c.Add(time.Hour)
			return claim(e)
		}}, approval.ErrExpired, approval.StateExpired},
		{"approved claim window starts at decision", []func(env) error{func(e env) error {
			e.c.Add(23 * time.Hour) // well past an hour after creation
			return approve(e)
		}, func(e env) error {
			e.c.Add(59 * time.Minute)
			return claim(e)
		}}, nil, approval.StateClaimed},
		{"self approval", []func(env) error{func(e env) error {
			self := requester.WithScopes([]string{approval.DefaultApproverScope})
			_, err := e.s.Approve(ctx, e.id, self, "")
			return err
		}}, approval.ErrSelfApproval, approval.StatePending},
		{"self rejection", []func(env) error{func(e env) error {
			self := requester.WithScopes([]string{approval.DefaultApproverScope})
			_, err := e.s.Reject(ctx, e.id, self, "")
			return err
		}}, approval.ErrSelfApproval, approval.StatePending},
		{"same id from another issuer is the same person", []func(env) error{func(e env) error {
			other := policy.NewPrincipal(requester.ID(), []string{approval.DefaultApproverScope}).WithIssuer("https://other.example")
			_, err := e.s.Approve(ctx, e.id, other, "")
			return err
		}}, approval.ErrSelfApproval, approval.StatePending},
		{"approver without scope", []func(env) error{func(e env) error {
			_, err := e.s.Approve(ctx, e.id, policy.NewPrincipal("dave", []string{"docs:write"}), "")
			return err
		}}, approval.ErrNotAuthorized, approval.StatePending},
		{"anonymous approver with scope", []func(env) error{func(e env) error {
			_, err := e.s.Approve(ctx, e.id, policy.NewPrincipal("", []string{approval.DefaultApproverScope}), "")
			return err
		}}, approval.ErrNotAuthorized, approval.StatePending},
		{"double approve", []func(env) error{approve, approve}, approval.ErrNotPending, approval.StateApproved},
		{"reject after approve", []func(env) error{approve, func(e env) error {
			_, err := e.s.Reject(ctx, e.id, carol, "")
			return err
		}}, approval.ErrNotPending, approval.StateApproved},
		{"claim pending", []func(env) error{claim}, approval.ErrNotApproved, approval.StatePending},
		{"double claim", []func(env) error{approve, claim, claim}, approval.ErrAlreadyClaimed, approval.StateClaimed},
		{"complete unclaimed", []func(env) error{approve, func(e env) error {
			_, err := e.s.Complete(ctx, e.id, receipt)
			return err
		}}, approval.ErrNotClaimed, approval.StateApproved},
		{"double complete", []func(env) error{approve, claim, func(e env) error {
			_, err := e.s.Complete(ctx, e.id, receipt)
			return err
		}, func(e env) error {
			_, err := e.s.Complete(ctx, e.id, approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_timeout"})
			return err
		}}, approval.ErrNotClaimed, approval.StateCompleted},
		{"claim after complete", []func(env) error{approve, claim, func(e env) error {
			_, err := e.s.Complete(ctx, e.id, receipt)
			return err
		}, claim}, approval.ErrAlreadyClaimed, approval.StateCompleted},
		{"complete with invalid effect", []func(env) error{approve, claim, func(e env) error {
			_, err := e.s.Complete(ctx, e.id, approval.Receipt{Effect: "maybe"})
			return err
		}}, approval.ErrInvalid, approval.StateClaimed},
		{"unknown id", []func(env) error{func(e env) error {
			_, err := e.s.Approve(ctx, "apv_nosuchapproval0000", approver, "")
			return err
		}}, approval.ErrNotFound, approval.StatePending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			s := b.fresh(t, c)
			a, err := s.Prepare(ctx, testIntent(t, "key-1", `{"id":42,"title":"New"}`))
			if err != nil {
				t.Fatal(err)
			}
			e := env{s: s, c: c, id: a.ID}
			for i, step := range tc.steps[:len(tc.steps)-1] {
				if err := step(e); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
			wantErr(t, tc.steps[len(tc.steps)-1](e), tc.err)
			mustState(t, s, a.ID, tc.state)
		})
	}
}

func testCompleteRecordsReceipt(t *testing.T, b backend) {
	ctx := context.Background()
	c := newClock()
	s := b.fresh(t, c)
	a, err := s.Prepare(ctx, testIntent(t, "k", `{"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, err = s.Approve(ctx, a.ID, approver, "ok"); err != nil {
		t.Fatal(err)
	}
	if a.DecidedBy != "bob" || a.Note != "ok" || !a.DecidedAt.Equal(c.Now()) || !a.ExpiresAt.Equal(c.Now().Add(time.Hour)) {
		t.Fatalf("approved: %+v", a)
	}
	c.Add(time.Minute)
	if a, err = s.Claim(ctx, a.ID, testBinding()); err != nil {
		t.Fatal(err)
	}
	if !a.ClaimedAt.Equal(c.Now()) {
		t.Fatalf("ClaimedAt = %v, want %v", a.ClaimedAt, c.Now())
	}
	c.Add(time.Second)
	done, err := s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_timeout"})
	if err != nil {
		t.Fatal(err)
	}
	want := approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_timeout", At: c.Now()}
	if r := done.Receipt; r == nil || r.Effect != want.Effect || r.Reason != want.Reason || r.Result != nil || !r.At.Equal(want.At) {
		t.Fatalf("receipt = %+v, want %+v", done.Receipt, want)
	}
	got, err := s.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !equalReceipt(got.Receipt, done.Receipt) {
		t.Fatalf("stored receipt = %+v", got.Receipt)
	}
	if _, err := s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectCommitted, Result: json.RawMessage(`not json`)}); !errors.Is(err, approval.ErrInvalid) {
		t.Fatalf("invalid result: %v", err)
	}
}

func testEventsAreTheAuditTrail(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.fresh(t, newClock())
	a, err := s.Prepare(ctx, testIntent(t, "k", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	changed := testBinding()
	changed.ScopeRevision = "scope-2"
	for _, step := range []error{
		func() error { _, err := s.Approve(ctx, a.ID, approver, "fine"); return err }(),
		func() error { _, err := s.Claim(ctx, a.ID, changed); return err }(),
		func() error { _, err := s.Claim(ctx, a.ID, testBinding()); return err }(),
		func() error {
			_, err := s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_disconnected"})
			return err
		}(),
		func() error {
			_, err := s.Reconcile(ctx, a.ID, carol, approval.EffectCommitted, "read back: title is New")
			return err
		}(),
	} {
		if step != nil && !errors.Is(step, approval.ErrBindingChanged) {
			t.Fatal(step)
		}
	}
	evs, err := s.Events(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		seq         int
		kind, actor string
	}
	want := []row{{1, "prepared", "alice"}, {2, "approved", "bob"}, {3, "claim_refused", ""}, {4, "claimed", ""}, {5, "completed", ""}, {6, "reconciled", "carol"}}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, e := range evs {
		if (row{e.Seq, e.Kind, e.Actor}) != want[i] || e.ApprovalID != a.ID || !json.Valid(e.Detail) {
			t.Errorf("event %d = %+v, want %+v", i, e, want[i])
		}
	}
	var refused struct{ Changed []string }
	if err := json.Unmarshal(evs[2].Detail, &refused); err != nil || len(refused.Changed) != 1 || refused.Changed[0] != "scope revision" {
		t.Errorf("claim_refused detail = %s (%v)", evs[2].Detail, err)
	}
	if _, err := s.Events(ctx, "apv_missing"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("events of a missing approval: %v", err)
	}
}

func equalReceipt(a, b *approval.Receipt) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Effect == b.Effect && a.Reason == b.Reason && string(a.Result) == string(b.Result) && a.At.Equal(b.At)
}

func testListAndFilter(t *testing.T, b backend) {
	ctx := context.Background()
	c := newClock()
	s := b.fresh(t, c)
	var ids []string
	for _, k := range []string{"a", "b", "c", "d"} {
		a, err := s.Prepare(ctx, testIntent(t, k, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
		c.Add(time.Hour)
	}
	if _, err := s.Approve(ctx, ids[1], approver, ""); err != nil {
		t.Fatal(err)
	}
	// 21h later the first (created 24h ago) is due; List records it.
	c.Add(21 * time.Hour)
	check := func(f approval.Filter, want ...string) {
		t.Helper()
		got, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for _, a := range got {
			gotIDs = append(gotIDs, a.ID)
		}
		if len(gotIDs) != len(want) {
			t.Fatalf("List(%+v) = %v, want %v", f, gotIDs, want)
		}
		for i := range want {
			if gotIDs[i] != want[i] {
				t.Fatalf("List(%+v) = %v, want %v", f, gotIDs, want)
			}
		}
	}
	check(approval.Filter{}, ids[3], ids[2], ids[1], ids[0])
	check(approval.Filter{Limit: 2}, ids[3], ids[2])
	check(approval.Filter{State: approval.StatePending}, ids[3], ids[2])
	check(approval.Filter{State: approval.StateExpired}, ids[1], ids[0]) // approved 1h TTL long past
	check(approval.Filter{State: approval.StateApproved})
	if _, err := s.List(ctx, approval.Filter{State: "bogus"}); !errors.Is(err, approval.ErrInvalid) {
		t.Fatalf("bogus state: %v", err)
	}
	// Page by page: each page starts after the last id of the one before,
	// with the state filter or without it.
	check(approval.Filter{Before: ids[2]}, ids[1], ids[0])
	check(approval.Filter{Before: ids[3], Limit: 1}, ids[2])
	check(approval.Filter{Before: ids[0]})
	check(approval.Filter{Before: ids[3], State: approval.StatePending}, ids[2])
	if _, err := s.List(ctx, approval.Filter{Before: "apv_nosuchapprovalxxxxx"}); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("a page after an unknown id: %v, want ErrNotFound", err)
	}
}

// testPagesStayPut: a list read page by page with Filter.Before sees every
// approval once, in order, although new ones arrive between the pages (an
// offset would show the last of a page again on the next).
func testPagesStayPut(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.fresh(t, newClock())
	prepare := func(n int, prefix string) []string {
		var ids []string
		for i := range n {
			a, err := s.Prepare(ctx, testIntent(t, fmt.Sprintf("%s%d", prefix, i), `{}`))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
		}
		return ids
	}
	old := prepare(7, "old")
	var seen []string
	before := ""
	for page := 0; ; page++ {
		got, err := s.List(ctx, approval.Filter{Limit: 3, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range got {
			seen = append(seen, a.ID)
		}
		if len(got) < 3 {
			break
		}
		if page == 5 {
			t.Fatalf("still paging after %v: the pages do not move on", seen)
		}
		before = got[len(got)-1].ID
		if page == 0 {
			prepare(2, "new") // arrive while the first page is read
		}
	}
	slices.Reverse(old)
	if !slices.Equal(seen, old) {
		t.Fatalf("paged through %v, want the first seven once, newest first: %v", seen, old)
	}
}

// testSignIns: the inbox's sign-ins are kept under their key, replaced by
// a second save, ended by EndSignIn, refused for an anonymous or refused
// identity, and bounded.
func testSignIns(t *testing.T, b backend) {
	ctx := context.Background()
	c := newClock()
	s := b.fresh(t, c).(signIns)
	in := approval.SignIn{Approver: approver, Expires: c.Now().Add(8 * time.Hour)}
	if err := s.SaveSignIn(ctx, "k1", in); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadSignIn(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Approver.ID() != "bob" || got.Approver.Issuer() != approver.Issuer() || !got.Approver.HasScope(approval.DefaultApproverScope) || !got.Expires.Equal(in.Expires) {
		t.Fatalf("loaded %+v %v, want bob's sign-in back", got.Approver, got.Expires)
	}
	if _, err := s.LoadSignIn(ctx, "k2"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("an unknown key: %v, want ErrNotFound", err)
	}
	// A key saved again is replaced, not refused as a duplicate.
	again := approval.SignIn{Approver: policy.NewPrincipal("carol", []string{approval.DefaultApproverScope}).WithIssuer(approver.Issuer()), Expires: c.Now().Add(2 * time.Hour)}
	if err := s.SaveSignIn(ctx, "k1", again); err != nil {
		t.Fatalf("saving k1 again: %v", err)
	}
	if got, err := s.LoadSignIn(ctx, "k1"); err != nil || got.Approver.ID() != "carol" || !got.Expires.Equal(again.Expires) {
		t.Fatalf("k1 saved again loads %+v %v (%v), want carol's sign-in", got.Approver, got.Expires, err)
	}
	if err := s.EndSignIn(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadSignIn(ctx, "k1"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("an ended sign-in: %v, want ErrNotFound", err)
	}
	for _, bad := range []approval.SignIn{
		{Expires: in.Expires},
		{Approver: policy.NewPrincipal("bob\n", nil), Expires: in.Expires},
	} {
		if err := s.SaveSignIn(ctx, "k3", bad); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("SaveSignIn(%q): %v, want ErrInvalid", bad.Approver.ID(), err)
		}
	}
	if err := s.SaveSignIn(ctx, "", in); !errors.Is(err, approval.ErrInvalid) {
		t.Errorf("an empty key: %v, want ErrInvalid", err)
	}
	// An expired sign-in is dropped when the next one is saved.
	if err := s.SaveSignIn(ctx, "short", approval.SignIn{Approver: approver, Expires: c.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	if err := s.SaveSignIn(ctx, "k4", in); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountSignIns(ctx); err != nil || n != 1 {
		t.Fatalf("%d sign-ins (%v), want only the live one", n, err)
	}
	// At the bound, saving one more drops the one that ends soonest.
	approval.SetMaxSignIns(s, 3)
	for i, d := range []time.Duration{3 * time.Hour, time.Hour, 2 * time.Hour} { // with k4 (8 h): four
		if err := s.SaveSignIn(ctx, fmt.Sprintf("b%d", i), approval.SignIn{Approver: approver, Expires: c.Now().Add(d)}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.CountSignIns(ctx); err != nil || n != 3 {
		t.Fatalf("%d sign-ins at a bound of 3 (%v), want 3", n, err)
	}
	for key, kept := range map[string]bool{"k4": true, "b0": true, "b1": false, "b2": true} {
		if _, err := s.LoadSignIn(ctx, key); (err == nil) != kept {
			t.Errorf("sign-in %s after the bound: %v, want kept %v", key, err, kept)
		}
	}
}

type signIns interface {
	SaveSignIn(ctx context.Context, key string, in approval.SignIn) error
	LoadSignIn(ctx context.Context, key string) (approval.SignIn, error)
	EndSignIn(ctx context.Context, key string) error
	CountSignIns(ctx context.Context) (int, error)
}

// testIntentDisplay: the tool's description and server are recorded as
// given and read back; text a database cannot keep, or too long, is
// refused.
func testIntentDisplay(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.fresh(t, newClock())
	in := testIntent(t, "display", `{}`)
	in.Description, in.Server, in.Credential = "Updates a document's title <b>now</b>.", "documents", "token_exchange"
	a, err := s.Prepare(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, a.ID)
	if err != nil || got.Intent.Description != in.Description || got.Intent.Server != "documents" || got.Intent.Credential != "token_exchange" {
		t.Fatalf("read back %q on %q as %q (%v)", got.Intent.Description, got.Intent.Server, got.Intent.Credential, err)
	}
	for name, mutate := range map[string]func(*approval.Intent){
		"a NUL":                   func(in *approval.Intent) { in.Description = "a\x00b" },
		"invalid UTF-8":           func(in *approval.Intent) { in.Server = "\xff" },
		"too long":                func(in *approval.Intent) { in.Description = strings.Repeat("x", approval.MaxDescription+1) },
		"a server over 128 bytes": func(in *approval.Intent) { in.Server = strings.Repeat("s", 129) },
		"a credential over 64":    func(in *approval.Intent) { in.Credential = strings.Repeat("c", 65) },
	} {
		bad := testIntent(t, "bad "+name, `{}`)
		mutate(&bad)
		if _, err := s.Prepare(ctx, bad); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
