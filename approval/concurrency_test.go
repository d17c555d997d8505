package approval_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// racers is how many goroutines each race runs.
const racers = 20

// race runs fn(i) on racers goroutines released at once, and returns how
// many returned nil and how many returned an error that is want; any other
// error fails the test.
func race(t *testing.T, want error, fn func(i int) error) (won, lost int) {
	t.Helper()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			err := fn(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, want):
				lost++
			default:
				errs = append(errs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Errorf("want nil or %v, got %v", want, err)
	}
	return won, lost
}

// stores opens n stores on one database: n > 1 stands for n processes.
func stores(t *testing.T, b backend, n int, c *clock) []store {
	db := b.newDB(t)
	var ss []store
	for range n {
		ss = append(ss, b.open(t, db, c))
	}
	return ss
}

// countEvents counts id's events of kind.
func countEvents(t *testing.T, s store, id, kind string) int {
	t.Helper()
	evs, err := s.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func testClaimExactlyOnce(t *testing.T, b backend) {
	ctx := context.Background()
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d stores", n), func(t *testing.T) {
			t.Parallel()
			ss := stores(t, b, n, nil)
			for round := range 3 {
				a, err := ss[0].Prepare(ctx, testIntent(t, fmt.Sprint("k", round), `{"id":1}`))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ss[len(ss)-1].Approve(ctx, a.ID, approver, ""); err != nil {
					t.Fatal(err)
				}
				won, lost := race(t, approval.ErrAlreadyClaimed, func(i int) error {
					_, err := ss[i%n].Claim(ctx, a.ID, testBinding())
					return err
				})
				if won != 1 || lost != racers-1 {
					t.Fatalf("round %d: %d claims won, %d lost; want 1 and %d", round, won, lost, racers-1)
				}
				if c := countEvents(t, ss[0], a.ID, "claimed"); c != 1 {
					t.Fatalf("round %d: %d claimed events, want 1", round, c)
				}
			}
		})
	}
}

func testCompleteExactlyOnce(t *testing.T, b backend) {
	ctx := context.Background()
	ss := stores(t, b, 2, nil)
	a, err := ss[0].Prepare(ctx, testIntent(t, "k", `{"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss[0].Approve(ctx, a.ID, approver, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ss[1].Claim(ctx, a.ID, testBinding()); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		winner *approval.Receipt
	)
	won, lost := race(t, approval.ErrNotClaimed, func(i int) error {
		done, err := ss[i%2].Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectUnknown, Reason: execution.Reason(fmt.Sprint("code-", i))})
		if err == nil {
			mu.Lock()
			winner = done.Receipt
			mu.Unlock()
		}
		return err
	})
	if won != 1 || lost != racers-1 {
		t.Fatalf("%d completions won, %d lost; want 1 and %d", won, lost, racers-1)
	}
	got := mustState(t, ss[1], a.ID, approval.StateCompleted)
	if !equalReceipt(got.Receipt, winner) {
		t.Fatalf("stored receipt %+v, want the winner's %+v", got.Receipt, winner)
	}
	if c := countEvents(t, ss[0], a.ID, "completed"); c != 1 {
		t.Fatalf("%d completed events, want 1", c)
	}
}

func testDecideExactlyOnce(t *testing.T, b backend) {
	ctx := context.Background()
	ss := stores(t, b, 2, nil)
	a, err := ss[0].Prepare(ctx, testIntent(t, "k", `{"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	// Half approve, half reject, each a different approver: one decides.
	won, lost := race(t, approval.ErrNotPending, func(i int) error {
		p := policy.NewPrincipal(fmt.Sprint("approver-", i), []string{approval.DefaultApproverScope})
		if i%2 == 0 {
			_, err := ss[i%2].Approve(ctx, a.ID, p, "")
			return err
		}
		_, err := ss[i%2].Reject(ctx, a.ID, p, "")
		return err
	})
	if won != 1 || lost != racers-1 {
		t.Fatalf("%d decisions won, %d lost; want 1 and %d", won, lost, racers-1)
	}
	got, err := ss[1].Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	decisions := countEvents(t, ss[0], a.ID, "approved") + countEvents(t, ss[0], a.ID, "rejected")
	if decisions != 1 || (got.State != approval.StateApproved && got.State != approval.StateRejected) {
		t.Fatalf("state %s after %d decision events; want one decision", got.State, decisions)
	}
}

func testPrepareExactlyOnce(t *testing.T, b backend) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		expired bool // the key's approval expired before the race
	}{{"new key", false}, {"key whose approval expired", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			ss := stores(t, b, 2, c)
			in := testIntent(t, "k", `{"id":7}`)
			var old approval.Approval
			if tc.expired {
				var err error
				if old, err = ss[0].Prepare(ctx, in); err != nil {
					t.Fatal(err)
				}
				c.Add(25 * time.Hour)
			}
			ids := make([]string, racers)
			won, _ := race(t, nil, func(i int) error {
				a, err := ss[i%2].Prepare(ctx, in)
				ids[i] = a.ID
				return err
			})
			if won != racers {
				t.Fatalf("%d of %d prepares succeeded", won, racers)
			}
			for _, id := range ids {
				if id != ids[0] || id == old.ID {
					t.Fatalf("ids = %v (expired %q); want one new approval for all", ids, old.ID)
				}
			}
			all, err := ss[0].List(ctx, approval.Filter{})
			if want := map[bool]int{false: 1, true: 2}[tc.expired]; err != nil || len(all) != want {
				t.Fatalf("%d approvals (%v), want %d", len(all), err, want)
			}
			if n := countEvents(t, ss[1], ids[0], "prepared"); n != 1 {
				t.Fatalf("%d prepared events, want 1", n)
			}
			if tc.expired {
				if n := countEvents(t, ss[1], old.ID, "expired"); n != 1 {
					t.Fatalf("%d expired events for the old approval, want 1", n)
				}
			}
		})
	}
}
