package approval

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTransitionTable(t *testing.T) {
	tests := []struct {
		from, to State
		want     bool
	}{
		{StatePending, StateApproved, true},
		{StatePending, StateClaimed, false}, // no dispatch without a decision
		{StateApproved, StateClaimed, true},
		{StateApproved, StateRejected, false}, // a decision is final
		{StateClaimed, StateCompleted, true},
		{StateClaimed, StateApproved, false}, // a claim is never released
		{StateClaimed, StateCanceled, false},
		{StateCompleted, StateClaimed, false},
		{StateExpired, StatePending, false},
		{StateRejected, StateApproved, false},
	}
	for _, tt := range tests {
		if got := canTransition(tt.from, tt.to); got != tt.want {
			t.Errorf("canTransition(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	for to, want := range map[State]string{
		StateExpired:   "'pending','approved'",
		StateCanceled:  "'pending','approved'",
		StateClaimed:   "'approved'",
		StateCompleted: "'claimed'",
		StatePending:   "",
	} {
		if got := sqlSources(to); got != want {
			t.Errorf("sqlSources(%s) = %s, want %s", to, got, want)
		}
	}
	ts := Transitions()
	ts[0].To = StateCompleted
	if Transitions()[0].To != StateApproved {
		t.Error("changing the returned slice changed the lifecycle")
	}
}

// leaving returns, per state, the causes of the transitions that leave it,
// sorted.
func leaving(ts []Transition) map[State][]string {
	out := map[State][]string{}
	for _, s := range States() {
		out[s] = []string{}
	}
	for _, tr := range ts {
		out[tr.From] = append(out[tr.From], tr.By)
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// TestLifecycleDocs ties the lifecycle written down for people (the State
// doc comment, docs/approvals.md) to the table the stores enforce.
func TestLifecycleDocs(t *testing.T) {
	want := leaving(Transitions())

	src, err := os.ReadFile("approval.go")
	if err != nil {
		t.Fatal(err)
	}
	var doc []Transition
	arrow := regexp.MustCompile(`(\w+)\s+→\s+(\w+)\s+(\w+)`)
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, "//\t") {
			continue
		}
		for _, m := range arrow.FindAllStringSubmatch(line, -1) {
			doc = append(doc, Transition{State(m[1]), State(m[2]), m[3]})
		}
	}
	if diff := cmp.Diff(want, leaving(doc)); diff != "" {
		t.Errorf("the State doc comment disagrees with Transitions (-table +doc):\n%s", diff)
	}

	md, err := os.ReadFile("../docs/approvals.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(\\w+)` \\| [^|]+ \\| ([^|]+) \\|$")
	paren := regexp.MustCompile(`\s*\([^)]*\)`)
	got := map[State][]string{}
	for _, line := range strings.Split(string(md), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || !State(m[1]).valid() {
			continue
		}
		causes := []string{}
		if c := strings.TrimSpace(paren.ReplaceAllString(m[2], "")); c != "—" {
			for _, part := range strings.Split(c, ", ") {
				part = strings.TrimPrefix(part, "its ")
				causes = append(causes, strings.Fields(part)[0])
			}
		}
		slices.Sort(causes)
		got[State(m[1])] = causes
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docs/approvals.md's state table disagrees with Transitions (-table +docs):\n%s", diff)
	}
}
