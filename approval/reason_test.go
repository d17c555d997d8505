package approval_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// reasonRow is one error a store returned, the sentinel it must still be
// (nil: none) and the reason it must answer.
type reasonRow struct {
	name     string
	err      error
	sentinel error
	want     execution.Reason
}

// checkReasons checks that every row's error answers its reason through
// execution.ReasonOf, as returned and wrapped twice with %w, and that
// errors.Is still finds its sentinel.
func checkReasons(t *testing.T, rows []reasonRow) {
	t.Helper()
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatalf("no error, want one answering %s", tc.want)
			}
			wrapped := fmt.Errorf("host: %w", fmt.Errorf("step: %w", tc.err))
			for _, err := range []error{tc.err, wrapped} {
				if got := execution.ReasonOf(err); got != tc.want {
					t.Errorf("ReasonOf(%v) = %q, want %q", err, got, tc.want)
				}
				if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
					t.Errorf("errors.Is(%v, %v) = false", err, tc.sentinel)
				}
			}
		})
	}
}

// testReasons: every error a store returns for a refused request, and for
// a database that failed, answers its reason.
func testReasons(t *testing.T, b backend) {
	ctx := context.Background()
	c := newClock()
	s := b.fresh(t, c)
	a, err := s.Prepare(ctx, testIntent(t, "k1", `{"doc":"42"}`))
	if err != nil {
		t.Fatal(err)
	}
	late, err := s.Prepare(ctx, testIntent(t, "k2", `{"doc":"43"}`))
	if err != nil {
		t.Fatal(err)
	}
	selfApprover := policy.NewPrincipal(requester.ID(), []string{approval.DefaultApproverScope}).WithIssuer(requester.Issuer())
	changed := testBinding()
	changed.ScopeRevision = "scope-2"
	must := func(_ approval.Approval, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	errOf := func(_ approval.Approval, err error) error { return err }
	var rows []reasonRow
	add := func(name string, err, sentinel error, want execution.Reason) {
		rows = append(rows, reasonRow{name, err, sentinel, want})
	}

	add("not found", errOf(s.Get(ctx, "apv_missing")), approval.ErrNotFound, approval.ReasonNotFound)
	add("invalid intent", errOf(s.Prepare(ctx, approval.Intent{})), approval.ErrInvalid, approval.ReasonInvalid)
	_, err = s.List(ctx, approval.Filter{State: "lost"})
	add("invalid filter", err, approval.ErrInvalid, approval.ReasonInvalid)
	identityErr := errOf(s.Approve(ctx, a.ID, policy.NewPrincipal("bob\n", []string{approval.DefaultApproverScope}), ""))
	add("refused identity", identityErr, approval.ErrInvalid, approval.ReasonInvalid)
	add("not authorized", errOf(s.Approve(ctx, a.ID, policy.NewPrincipal("eve", nil), "")), approval.ErrNotAuthorized, approval.ReasonNotAuthorized)
	add("self approval", errOf(s.Approve(ctx, a.ID, selfApprover, "")), approval.ErrSelfApproval, approval.ReasonSelfDecision)
	add("not approved", errOf(s.Claim(ctx, a.ID, testBinding())), approval.ErrNotApproved, approval.ReasonNotApproved)
	add("not claimed", errOf(s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectCommitted})), approval.ErrNotClaimed, approval.ReasonNotClaimed)
	add("key names another intent", errOf(s.Prepare(ctx, testIntent(t, "k1", `{"doc":"44"}`))), approval.ErrConflict, approval.ReasonConflict)
	must(s.Approve(ctx, a.ID, approver, ""))
	add("already decided", errOf(s.Reject(ctx, a.ID, carol, "")), approval.ErrNotPending, approval.ReasonNotPending)
	add("binding changed", errOf(s.Claim(ctx, a.ID, changed)), approval.ErrBindingChanged, approval.ReasonBindingChanged)
	must(s.Claim(ctx, a.ID, testBinding()))
	add("already claimed", errOf(s.Claim(ctx, a.ID, testBinding())), approval.ErrAlreadyClaimed, approval.ReasonAlreadyClaimed)
	add("no evidence", errOf(s.Reconcile(ctx, a.ID, carol, approval.EffectCommitted, "")), approval.ErrEvidenceRequired, approval.ReasonEvidenceRequired)
	must(s.Reconcile(ctx, a.ID, carol, approval.EffectCommitted, "read back document 42"))
	add("already reconciled", errOf(s.Reconcile(ctx, a.ID, carol, approval.EffectNotStarted, "no entry")), approval.ErrConflict, approval.ReasonConflict)
	c.Add(25 * time.Hour)
	add("expired", errOf(s.Approve(ctx, late.ID, approver, "")), approval.ErrExpired, approval.ReasonExpired)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	add("database failed", errOf(s.Approve(gone, late.ID, approver, "")), context.Canceled, approval.ReasonUnavailable)

	closed, err := b.connect(b.newDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	add("closed", errOf(closed.Get(ctx, a.ID)), approval.ErrClosed, approval.ReasonUnavailable)
	add("closed, in a transaction", errOf(closed.Approve(ctx, a.ID, approver, "")), approval.ErrClosed, approval.ReasonUnavailable)
	checkReasons(t, rows)

	if ie := new(approval.IdentityError); !errors.As(identityErr, &ie) {
		t.Errorf("the refused identity is no *IdentityError: %v", identityErr)
	}
}

// TestOpenReasons: a store that cannot be opened says why, as a reason:
// approval_invalid for what the host must fix in its call,
// approval_unavailable for the database.
func TestOpenReasons(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	newer := dbPath(t)
	db := raw(t, newer)
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	openErr := func(_ *approval.SQLiteStore, err error) error { return err }
	pgErr := func(_ *approval.PostgresStore, err error) error { return err }
	// A port nothing listens on: the listener is closed before the dial.
	refused := "postgres://agnara@" + closedAddr(t) + "/approvals?sslmode=disable&connect_timeout=5"
	checkReasons(t, []reasonRow{
		{"memory database", openErr(approval.OpenSQLite(":memory:", nil)), approval.ErrInvalid, approval.ReasonInvalid},
		{"empty path", openErr(approval.OpenSQLite("", nil)), approval.ErrInvalid, approval.ReasonInvalid},
		{"negative TTL", openErr(approval.OpenSQLite(dbPath(t), &approval.Options{PendingTTL: -time.Second})), approval.ErrInvalid, approval.ReasonInvalid},
		{"path under a file", openErr(approval.OpenSQLite(filepath.Join(file, "approvals.db"), nil)), nil, approval.ReasonUnavailable},
		{"newer schema", openErr(approval.OpenSQLite(newer, nil)), nil, approval.ReasonUnavailable},
		{"bad DSN", pgErr(approval.OpenPostgres(ctx, "postgres://a b", nil)), approval.ErrInvalid, approval.ReasonInvalid},
		{"server refuses", pgErr(approval.OpenPostgres(ctx, refused, nil)), nil, approval.ReasonUnavailable},
		{"migrate, server refuses", approval.MigratePostgres(ctx, refused), nil, approval.ReasonUnavailable},
	})
}

// closedAddr returns a loopback address nothing listens on: a listener's,
// closed before it is returned.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
