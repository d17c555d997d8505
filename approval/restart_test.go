package approval_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
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
)

func TestMain(m *testing.M) {
	if step := os.Getenv(childStepEnv); step != "" {
		os.Exit(crashChild(step, os.Getenv(childDBEnv), os.Getenv(childIDEnv)))
	}
	os.Exit(m.Run())
}

func crashChild(step, path, id string) int {
	s, err := approval.OpenSQLite(path, nil)
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
func crash(t *testing.T, path, step, id string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childStepEnv+"="+step, childDBEnv+"="+path, childIDEnv+"="+id)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), step+" done") {
		t.Fatalf("child %s: %v\n%s", step, err, out)
	}
}

func TestRestart(t *testing.T) {
	ctx := context.Background()
	prepare := func(t *testing.T, path string) string {
		s, err := approval.OpenSQLite(path, nil)
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
		path := dbPath(t)
		id := prepare(t, path)
		s, err := approval.OpenSQLite(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Approve(ctx, id, approver, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(t, path, nil)
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
		path := dbPath(t)
		id := prepare(t, path)
		s, err := approval.OpenSQLite(path, nil)
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
		s = open(t, path, nil)
		_, err = s.Claim(ctx, id, testBinding())
		wantErr(t, err, approval.ErrAlreadyClaimed)
		mustState(t, s, id, approval.StateClaimed)
	})

	t.Run("an approval survives a crash", func(t *testing.T) {
		t.Parallel()
		path := dbPath(t)
		id := prepare(t, path)
		crash(t, path, "approve", id)
		s := open(t, path, nil)
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
		path := dbPath(t)
		id := prepare(t, path)
		crash(t, path, "approve", id)
		crash(t, path, "claim", id)
		s := open(t, path, nil)
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

func TestClaimExactlyOnce(t *testing.T) {
	ctx := context.Background()
	for _, stores := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d stores", stores), func(t *testing.T) {
			t.Parallel()
			path := dbPath(t)
			var ss []*approval.SQLiteStore
			for range stores {
				ss = append(ss, open(t, path, nil))
			}
			for round := range 5 {
				a, err := ss[0].Prepare(ctx, testIntent(t, fmt.Sprint("k", round), `{"id":1}`))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ss[len(ss)-1].Approve(ctx, a.ID, approver, ""); err != nil {
					t.Fatal(err)
				}
				var won, lost atomic.Int32
				var wg sync.WaitGroup
				start := make(chan struct{})
				for g := range 8 {
					wg.Go(func() {
						<-start
						_, err := ss[g%len(ss)].Claim(ctx, a.ID, testBinding())
						switch {
						case err == nil:
							won.Add(1)
						case errors.Is(err, approval.ErrAlreadyClaimed):
							lost.Add(1)
						default:
							t.Errorf("claim: %v", err)
						}
					})
				}
				close(start)
				wg.Wait()
				if won.Load() != 1 || lost.Load() != 7 {
					t.Fatalf("round %d: %d claims won, %d lost; want 1 and 7", round, won.Load(), lost.Load())
				}
				evs, err := ss[0].Events(ctx, a.ID)
				if err != nil {
					t.Fatal(err)
				}
				claims := 0
				for _, e := range evs {
					if e.Kind == "claimed" {
						claims++
					}
				}
				if claims != 1 {
					t.Fatalf("round %d: %d claimed events", round, claims)
				}
			}
		})
	}
}

func TestClosedStore(t *testing.T) {
	s, err := approval.OpenSQLite(dbPath(t), nil)
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
