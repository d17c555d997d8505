package mcpexpose

import (
	"slices"
	"testing"

	"github.com/agnara-go/agnara/agnara"
)

// TestListenPendingIsBounded: a listen whose client stops reading (its
// writer blocked in a write) holds at most one event of each kind waiting,
// and one update of each resource it agreed to, however many swaps and
// updates come, in the rule's order (ADR 90): the tool list, the resource
// list, the prompt list, as first queued.
func TestListenPendingIsBounded(t *testing.T) {
	snap := func(tools ...string) *Snapshot {
		app := agnara.New("bounded", nil)
		exp := New(app)
		for _, name := range tools {
			exp.Tool(app.Capability(func() (string, error) { return name, nil }, &agnara.CapabilityOptions{Name: name, Description: name}), nil)
		}
		s, err := exp.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := snap("a"), snap("a", "b")
	var ls edgeListens
	l := &edgeListen{tools: true, resources: true, prompts: true, uris: []string{"docs://x", "docs://y"}, wake: make(chan struct{}, 1)}
	ls.add(l)
	for i := range 1000 {
		old, next := a, b
		if i%2 == 1 {
			old, next = b, a
		}
		ls.changed(old, next, i%3 == 0, i%5 == 0)
		ls.changed(nil, nil, true, true) // a retired epoch's sweep
		ls.updated("docs://x")
		ls.updated("docs://other")
	}
	want := []listenEvent{{kind: listenTools}, {kind: listenResources}, {kind: listenPrompts}, {kind: listenUpdated, uri: "docs://x"}}
	if got := l.take(); !slices.Equal(got, want) {
		t.Errorf("pending: %v, want %v", got, want)
	}
	ls.remove(l)
	ls.changed(a, b, true, true)
	if got := l.take(); len(got) != 0 {
		t.Errorf("a listen removed was told %v", got)
	}
}
