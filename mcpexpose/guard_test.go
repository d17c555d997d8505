package mcpexpose_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
)

type purgeInput struct {
	ID string `json:"id"`
}

// TestDestructiveNeedsAGuard: a tool annotated Destructive says who may run
// it (a scope, a policy, a confirmation), or says in so many words that
// anyone may (AnyoneMayCall), which the snapshot's review form then shows;
// else Compile refuses it with the registration's file:line and the fix. A
// tool with no annotations declares nothing and compiles (ADR 57).
func TestDestructiveNeedsAGuard(t *testing.T) {
	const unguarded = `annotated Destructive, but any caller, anonymous ones included, may run it: ` +
		`declare who may (Scopes: []string{"<scope>"}, a policy in Policies, or Confirm: "<question>"), or set AnyoneMayCall: true if anyone may`
	allow := policy.Func(func(context.Context, policy.Request) error { return nil })
	tests := []struct {
		name   string
		opts   agnara.CapabilityOptions
		want   []string // after "file:line: app.purge: "; none: it compiles
		anyone bool     // the review form says anyoneMayCall
	}{
		{"destructive, nothing else", agnara.CapabilityOptions{Annotations: agnara.Destructive}, []string{unguarded}, false},
		{"destructive and more hints", agnara.CapabilityOptions{Annotations: agnara.Destructive | agnara.Idempotent | agnara.OpenWorld}, []string{unguarded}, false},
		{"destructive with a rate limit and a timeout", agnara.CapabilityOptions{Annotations: agnara.Destructive, RateLimit: agnara.RateLimit{Rate: 1, Burst: 1}, Timeout: time.Second}, []string{unguarded}, false},
		{"destructive with a scope", agnara.CapabilityOptions{Annotations: agnara.Destructive, Scopes: []string{"records:admin"}}, nil, false},
		{"destructive with a policy", agnara.CapabilityOptions{Annotations: agnara.Destructive, Policies: []policy.Policy{allow}}, nil, false},
		{"destructive with a confirmation", agnara.CapabilityOptions{Annotations: agnara.Destructive, Confirm: "Purge it for good?"}, nil, false},
		{"destructive, anyone may call", agnara.CapabilityOptions{Annotations: agnara.Destructive, AnyoneMayCall: true}, nil, true},
		{"anyone may call, confirmed", agnara.CapabilityOptions{Annotations: agnara.Destructive, Confirm: "Sure?", AnyoneMayCall: true}, nil, true},
		{"anyone may call a read", agnara.CapabilityOptions{Annotations: agnara.ReadOnly, AnyoneMayCall: true}, nil, true},
		{"anyone may call, with scopes", agnara.CapabilityOptions{Annotations: agnara.Destructive, Scopes: []string{"records:admin"}, AnyoneMayCall: true},
			[]string{`AnyoneMayCall contradicts Scopes ["records:admin"]: remove one of them`}, false},
		{"no annotations", agnara.CapabilityOptions{}, nil, false},
		{"hints that are not destructive", agnara.CapabilityOptions{Annotations: agnara.Idempotent | agnara.OpenWorld}, nil, false},
		{"read-only and destructive: the contradiction alone", agnara.CapabilityOptions{Annotations: agnara.ReadOnly | agnara.Destructive},
			[]string{`annotations ReadOnly and Destructive contradict each other`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := agnara.New("app", nil)
			opts := tt.opts
			opts.Name, opts.Description = "purge", "Purges a record."
			site := nextLine()
			purge := app.Capability(func(context.Context, purgeInput) error { return nil }, &opts)
			exp := mcpexpose.New(app)
			exp.Tool(purge, nil)
			snap, err := exp.Compile()
			var got []string
			for _, e := range mistakesOf(t, err) {
				got = append(got, e.Error())
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, "mcpexpose/"+site+": app.purge: "+w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Compile mistakes (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			b, err := snap.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Tools []map[string]json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			v, ok := doc.Tools[0]["anyoneMayCall"]
			if ok != tt.anyone || ok && string(v) != "true" {
				t.Errorf("review form: anyoneMayCall = %s (present %v), want present %v", v, ok, tt.anyone)
			}
		})
	}
}
