package approval_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval"
)

// A crash child is this test binary re-executed with these variables set: it
// opens the database, does one step and exits with status 1 without closing
// anything, as a process killed right after the step returned would.
const (
	childStepEnv = "AGNARA_APPROVAL_CRASH_STEP"
	childDBEnv   = "AGNARA_APPROVAL_CRASH_DB"
	childIDEnv   = "AGNARA_APPROVAL_CRASH_ID"
	childBackend = "AGNARA_APPROVAL_CRASH_BACKEND"
)

func TestMain(m *testing.M) {
	if step := os.Getenv(childStepEnv); step != "" {
		os.Exit(crashChild(os.Getenv(childBackend), step, os.Getenv(childDBEnv), os.Getenv(childIDEnv)))
	}
	os.Exit(m.Run())
}

func crashChild(backendName, step, db, id string) int {
	b, ok := backendNamed(backendName)
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown backend %q\n", backendName)
		return 3
	}
	s, err := b.connect(db, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	ctx := context.Background()
	switch step {
	case "approve":
		_, err = s.Approve(ctx, id, approver, "approved in the child")
	case "claim":
		_, err = s.Claim(ctx, id, testBinding())
	default:
		err = fmt.Errorf("unknown step %q", step)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println(step, "done")
	// The "crash": no Close, no Complete, no deferred cleanup.
	os.Exit(1)
	return 1
}

// crash runs step on approval id in a child process that dies right after it.
func crash(t *testing.T, b backend, db, step, id string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childBackend+"="+b.name, childStepEnv+"="+step, childDBEnv+"="+db, childIDEnv+"="+id)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), step+" done") {
		t.Fatalf("child %s: %v\n%s", step, err, out)
	}
}

func testRestart(t *testing.T, b backend) {
	ctx := context.Background()
	prepare := func(t *testing.T, db string) string {
		s, err := b.connect(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a, err := s.Prepare(ctx, testIntent(t, "k", `{"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}

	t.Run("approve, close, reopen, claim, complete", func(t *testing.T) {
		t.Parallel()
		db := b.newDB(t)
		id := prepare(t, db)
		s, err := b.connect(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Approve(ctx, id, approver, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = b.open(t, db, nil)
		if _, err := s.Claim(ctx, id, testBinding()); err != nil {
			t.Fatal(err)
		}
		a, err := s.Complete(ctx, id, approval.Receipt{Effect: approval.EffectCommitted})
		if err != nil || a.State != approval.StateCompleted {
			t.Fatalf("complete = %s, %v", a.State, err)
		}
	})

	t.Run("a claim survives close without complete", func(t *testing.T) {
		t.Parallel()
		db := b.newDB(t)
		id := prepare(t, db)
		s, err := b.connect(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Approve(ctx, id, approver, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, id, testBinding()); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = b.open(t, db, nil)
		_, err = s.Claim(ctx, id, testBinding())
		wantErr(t, err, approval.ErrAlreadyClaimed)
		mustState(t, s, id, approval.StateClaimed)
	})

	t.Run("an approval survives a crash", func(t *testing.T) {
		t.Parallel()
		db := b.newDB(t)
		id := prepare(t, db)
		crash(t, b, db, "approve", id)
		s := b.open(t, db, nil)
		a := mustState(t, s, id, approval.StateApproved)
		if a.DecidedBy != approver.ID() || a.Note != "approved in the child" {
			t.Fatalf("decision lost: %+v", a)
		}
		if _, err := s.Claim(ctx, id, testBinding()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a claim survives a crash", func(t *testing.T) {
		t.Parallel()
		db := b.newDB(t)
		id := prepare(t, db)
		crash(t, b, db, "approve", id)
		crash(t, b, db, "claim", id)
		s := b.open(t, db, nil)
		a := mustState(t, s, id, approval.StateClaimed)
		if a.ClaimedAt.IsZero() || a.Receipt != nil {
			t.Fatalf("after crash: %+v", a)
		}
		_, err := s.Claim(ctx, id, testBinding())
		wantErr(t, err, approval.ErrAlreadyClaimed)
		// And nothing but a reconciliation settles it.
		a, err = s.Reconcile(ctx, id, carol, approval.EffectNotStarted, "remote ledger has no entry for this call")
		if err != nil || a.State != approval.StateClaimed || a.Reconciliation == nil {
			t.Fatalf("reconcile = %+v, %v", a, err)
		}
	})
}

func testClosedStore(t *testing.T, b backend) {
	s, err := b.connect(b.newDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	ctx := context.Background()
	_, err = s.Prepare(ctx, testIntent(t, "k", `{}`))
	wantErr(t, err, approval.ErrClosed)
	_, err = s.Get(ctx, "apv_x")
	wantErr(t, err, approval.ErrClosed)
	_, err = s.List(ctx, approval.Filter{})
	wantErr(t, err, approval.ErrClosed)
	_, err = s.Claim(ctx, "apv_x", testBinding())
	wantErr(t, err, approval.ErrClosed)
}
