package execution_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

type Leaf struct {
	Name string  `json:"name"`
	Note *string `json:"note,omitempty"`
}

type Tree struct {
	ID       int               `json:"id"`
	Score    float64           `json:"score"`
	Tags     []string          `json:"tags"`
	Attrs    map[string]string `json:"attrs"`
	Leaf     *Leaf             `json:"leaf"`
	Leaves   []Leaf            `json:"leaves,omitempty"`
	Children []*Leaf           `json:"children"`
	Grid     [2][]int8         `json:"grid"`
	Flag     bool              `json:"flag,omitempty"`
	hidden   int
	Skipped  string `json:"-"`
}

type Bounded struct {
	N int `json:"n" jsonschema:"minimum=1"`
}

type Formatted struct {
	Email string `json:"email" jsonschema:"format=email"`
}

type Stamped struct {
	At time.Time `json:"at"`
}

type Base struct {
	X int `json:"x"`
}

type Embeds struct {
	Base
	Y int `json:"y"`
}

type Loose struct {
	V any `json:"v"`
}

// outputPlan compiles a capability returning a T and returns its plan.
func outputPlan[T any](t *testing.T) *execution.Plan {
	t.Helper()
	app := agnara.New("e", nil)
	c := app.Capability(func(context.Context) (T, error) { var z T; return z, nil }, &agnara.CapabilityOptions{Name: "c", Description: "c"})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Plan(c)
	return p
}

// TestOutputEnforced checks which output types are trusted to satisfy
// their derived schema, and, for the trusted ones, that values of every
// shape the type allows (zero, nil and empty parts, nesting) do satisfy
// it: the claim that makes validating their successes redundant.
func TestOutputEnforced(t *testing.T) {
	note := "n"
	cases := []struct {
		name   string
		plan   *execution.Plan
		want   bool
		values []any
	}{
		{"tree", outputPlan[Tree](t), true, []any{
			Tree{},
			Tree{ID: -3, Score: 1.5e300, Tags: []string{}, Attrs: map[string]string{}, Leaf: &Leaf{Name: "a", Note: &note},
				Leaves: []Leaf{{}}, Children: []*Leaf{nil, {Name: "x"}}, Grid: [2][]int8{{1, -1}, nil}, Flag: true, hidden: 1, Skipped: "s"},
		}},
		{"pointer", outputPlan[*Leaf](t), true, []any{(*Leaf)(nil), &Leaf{}}},
		{"slice", outputPlan[[]Leaf](t), true, []any{[]Leaf(nil), []Leaf{}, []Leaf{{Name: "x"}}}},
		{"map", outputPlan[map[string][]int](t), true, []any{map[string][]int(nil), map[string][]int{"a": nil, "b": {1}}}},
		{"string", outputPlan[string](t), true, []any{"", "<&>\u2028"}},
		{"uint64", outputPlan[uint64](t), true, []any{uint64(1<<64 - 1)}},
		{"bytes", outputPlan[[]byte](t), false, nil},
		{"bounded", outputPlan[Bounded](t), false, nil},
		{"format", outputPlan[Formatted](t), false, nil},
		{"time", outputPlan[Stamped](t), false, nil},
		{"embedded", outputPlan[Embeds](t), false, nil},
		{"interface", outputPlan[Loose](t), false, nil},
		{"raw", rawOutputPlan(t), false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := registry.Facts(tc.plan).OutputEnforced; got != tc.want {
				t.Fatalf("OutputEnforced = %v, want %v; schema %s", got, tc.want, tc.plan.OutputSchema())
			}
			if len(tc.values) == 0 {
				return
			}
			schema, err := jsonschema.UnmarshalJSON(bytesReader(tc.plan.OutputSchema()))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			c.AssertFormat()
			if err := c.AddResource("out.json", schema); err != nil {
				t.Fatal(err)
			}
			s, err := c.Compile("out.json")
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tc.values {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				doc, err := jsonschema.UnmarshalJSON(bytesReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Validate(doc); err != nil {
					t.Errorf("%s does not satisfy %s: %v", b, tc.plan.OutputSchema(), err)
				}
			}
		})
	}
}

func rawOutputPlan(t *testing.T) *execution.Plan {
	t.Helper()
	app := agnara.New("e", nil)
	c := app.Capability(func(context.Context) (json.RawMessage, error) { return json.RawMessage(`1`), nil },
		&agnara.CapabilityOptions{Name: "c", Description: "c", OutputSchema: json.RawMessage(`{"type":"integer"}`)})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Plan(c)
	return p
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
