package approval

import (
	"slices"
	"strings"
)

// Transition is one allowed change of an approval's state, and what makes it.
type Transition struct {
	From, To State
	// By is what causes the transition: "approve", "reject", "cancel",
	// "claim" and "complete" name the [Store] methods, "deadline" the
	// approval's expiry, observed lazily.
	By string
}

// transitions is the lifecycle, the one table every transition of the
// stores checks (in Go, and again in the conditional UPDATE it runs) and the
// lifecycle in docs/approvals.md is tested against. A state no transition
// leaves is final.
var transitions = [...]Transition{
	{StatePending, StateApproved, "approve"},
	{StatePending, StateRejected, "reject"},
	{StatePending, StateCanceled, "cancel"},
	{StatePending, StateExpired, "deadline"},
	{StateApproved, StateClaimed, "claim"},
	{StateApproved, StateCanceled, "cancel"},
	{StateApproved, StateExpired, "deadline"},
	{StateClaimed, StateCompleted, "complete"},
}

// Transitions returns every allowed transition, grouped by the state they
// leave in lifecycle order, in a new slice. Nothing else ever changes an
// approval's state: rejected, expired, canceled and completed are final, and
// claimed is final too when the process died before completing (only a
// reconciliation, recorded beside it, says what happened).
func Transitions() []Transition { return slices.Clone(transitions[:]) }

// canTransition reports whether the lifecycle allows from → to.
func canTransition(from, to State) bool {
	for _, t := range transitions {
		if t.From == from && t.To == to {
			return true
		}
	}
	return false
}

// sqlSources returns the states to can be reached from as a SQL list, such
// as 'pending','approved', for the "AND state IN (...)" guard of the
// conditional UPDATE that makes the transition. States are constants of
// this package, never input, so they are written as literals.
func sqlSources(to State) string {
	var b strings.Builder
	for _, t := range transitions {
		if t.To != to {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString("'" + string(t.From) + "'")
	}
	return b.String()
}
