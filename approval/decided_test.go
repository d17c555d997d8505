package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
)

// decider is what Decided adds to both of the package's stores.
type decider interface {
	Decided(ctx context.Context) (approved, rejected int64, err error)
}

// lifecyclePaths returns every path through the transition table from
// pending: each state an approval can be in, with the transitions that
// brought it there.
func lifecyclePaths() [][]approval.Transition {
	var paths [][]approval.Transition
	var walk func(from approval.State, path []approval.Transition)
	walk = func(from approval.State, path []approval.Transition) {
		for _, tr := range approval.Transitions() {
			if tr.From == from {
				p := append(slices.Clone(path), tr)
				paths = append(paths, p)
				walk(tr.To, p)
			}
		}
	}
	walk(approval.StatePending, nil)
	return paths
}

// testDecided drives one approval along every path of the lifecycle
// through one store instance, and reads the decisions from another on the
// same database after each step, as a process scraping metrics does while
// the command line decides: each approval that ever was approved or
// rejected is counted, whatever became of it since, and the counts never
// go down.
func testDecided(t *testing.T, b backend) {
	ctx := context.Background()
	c := newClock()
	db := b.newDB(t)
	decide, read := b.open(t, db, c), b.open(t, db, c)
	reader, ok := read.(decider)
	if !ok {
		t.Fatalf("%T has no Decided", read)
	}
	if _, ok := decide.(decider); !ok {
		t.Fatalf("%T has no Decided", decide)
	}
	var wantApproved, wantRejected int64
	check := func(t *testing.T, step string) {
		t.Helper()
		approved, rejected, err := reader.Decided(ctx)
		if err != nil {
			t.Fatalf("%s: Decided: %v", step, err)
		}
		if approved != wantApproved || rejected != wantRejected {
			t.Errorf("%s: Decided = %d approved, %d rejected; want %d, %d", step, approved, rejected, wantApproved, wantRejected)
		}
	}
	check(t, "an empty store")
	receipt := approval.Receipt{Effect: approval.EffectCommitted, Result: json.RawMessage(`{}`)}
	steps := map[string]func(id string) error{
		"approve": func(id string) error { _, err := decide.Approve(ctx, id, approver, ""); return err },
		"reject":  func(id string) error { _, err := decide.Reject(ctx, id, approver, ""); return err },
		"cancel":  func(id string) error { _, err := decide.Cancel(ctx, id, carol, ""); return err },
		"claim":   func(id string) error { _, err := decide.Claim(ctx, id, testBinding()); return err },
		"complete": func(id string) error {
			_, err := decide.Complete(ctx, id, receipt)
			return err
		},
		"deadline": func(id string) error {
			c.Add(25 * time.Hour) // past either TTL; the read records the expiry
			a, err := decide.Get(ctx, id)
			if err == nil && a.State != approval.StateExpired {
				err = fmt.Errorf("still %s", a.State)
			}
			return err
		},
	}
	for i, path := range lifecyclePaths() {
		var names []string
		for _, tr := range path {
			names = append(names, tr.By)
		}
		name := strings.Join(names, " ")
		a, err := decide.Prepare(ctx, testIntent(t, fmt.Sprintf("path-%d", i), `{"id":42}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range path {
			do, ok := steps[tr.By]
			if !ok {
				t.Fatalf("no step drives the transition %s → %s by %q: add one", tr.From, tr.To, tr.By)
			}
			if err := do(a.ID); err != nil {
				t.Fatalf("%s: %s: %v", name, tr.By, err)
			}
			switch tr.To {
			case approval.StateApproved:
				wantApproved++
			case approval.StateRejected:
				wantRejected++
			}
			check(t, name)
		}
	}
	if wantApproved < 4 || wantRejected < 1 {
		t.Fatalf("the paths decided %d approvals and rejected %d: the walk missed the lifecycle", wantApproved, wantRejected)
	}
}
