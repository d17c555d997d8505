//lint:file-ignore U1000 the unexported fields are the point: Compile must refuse them in inputs

package execution_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
)

// The input structs of TestInputsAsWritten: each declares a field no
// argument could ever set, or a tag that reads as prose (issue 38).
type (
	unexportedInput struct {
		Query string `json:"query"`
		name  string
	}
	unexportedTagged struct {
		limit int `jsonschema:"minimum=1"`
	}
	skippedButDescribed struct {
		Note string `json:"-" jsonschema_description:"A note."`
	}
	skippedButBounded struct {
		Note string `json:"-" jsonschema:"minLength=1"`
	}
	hiddenFromSchema struct {
		Secret string `json:"secret" jsonschema:"-"`
	}
	nestedUnexported struct {
		Inner struct {
			ID    string `json:"id"`
			label string
		} `json:"inner"`
	}
	embeddedBase struct {
		ID    string `json:"id"`
		owner string
	}
	embeddedUnexported struct {
		embeddedBase
		Name string `json:"name"`
	}
	leftOutOnPurpose struct {
		Query  string `json:"query"`
		Cursor string `json:"-"`
		Both   string `json:"-" jsonschema:"-"`
		_      struct{}
	}
	proseTag struct {
		Query string `json:"query" jsonschema:"Search query"`
	}
	proseTagCommas struct {
		Query string `json:"query" jsonschema:"The query, as typed"`
	}
	proseAfterKeyword struct {
		Query string `json:"query" jsonschema:"minLength=1,Search query"`
	}
	descriptionComma struct {
		Query string `json:"query" jsonschema:"description=Search query, e.g. cats"`
	}
	misspeltKey struct {
		Query string `json:"query" jsonschema:"minLenght=1"`
	}
	misspeltFlag struct {
		Query string `json:"query" jsonschema:"requird"`
	}
	unexportedOutput struct {
		Name  string `json:"name"`
		cache string
	}
)

// TestInputsAsWritten: Compile refuses an input field that no argument can
// set, which the schema and the decoder would drop without a word, and
// says what a tag that is not keywords should have been; every mistake with
// the registration's file:line and the fix.
func TestInputsAsWritten(t *testing.T) {
	tests := []struct {
		name string
		fn   any
		want []string // after "file:line: app.x: "; none: it compiles
	}{
		{"unexported field", func(unexportedInput) error { return nil },
			[]string{`input unexportedInput.name: unexported field: no argument can set it, so the handler always sees its zero value: export it (Name, tagged json:"name"), or move it out of the input struct`}},
		{"unexported field with keywords", func(unexportedTagged) error { return nil },
			[]string{`input unexportedTagged.limit: unexported field: no argument can set it, so the handler always sees its zero value: export it (Limit, tagged json:"limit"), or move it out of the input struct`}},
		{"json:\"-\" with a description", func(skippedButDescribed) error { return nil },
			[]string{`input skippedButDescribed.Note: json:"-" leaves the field out of the arguments, but its jsonschema_description tag describes it as one: remove json:"-" to accept it, or the jsonschema_description tag to leave it out`}},
		{"json:\"-\" with keywords", func(skippedButBounded) error { return nil },
			[]string{`input skippedButBounded.Note: json:"-" leaves the field out of the arguments, but its jsonschema tag describes it as one: remove json:"-" to accept it, or the jsonschema tag to leave it out`}},
		{"jsonschema:\"-\" on an argument", func(hiddenFromSchema) error { return nil },
			[]string{`input hiddenFromSchema.Secret: jsonschema:"-" leaves the field out of the input schema, which admits no other member, so no call can set it: remove jsonschema:"-" to accept it, or tag it json:"-" to leave it out of the arguments`}},
		{"unexported field of a nested struct", func(nestedUnexported) error { return nil },
			[]string{`input nestedUnexported.Inner.label: unexported field: no argument can set it, so the handler always sees its zero value: export it (Label, tagged json:"label"), or move it out of the input struct`}},
		{"unexported field of an embedded struct", func(embeddedUnexported) error { return nil },
			[]string{`input embeddedUnexported.embeddedBase.owner: unexported field: no argument can set it, so the handler always sees its zero value: export it (Owner, tagged json:"owner"), or move it out of the input struct`}},
		{"fields left out on purpose", func(leftOutOnPurpose) error { return nil }, nil},
		{"unexported field of an output", func() (unexportedOutput, error) { return unexportedOutput{}, nil }, nil},
		{"a description in the jsonschema tag", func(proseTag) error { return nil },
			[]string{`input proseTag.Query: jsonschema tag "Search query" is a list of key=value keywords, not a description: write it as jsonschema_description:"Search query"`}},
		{"a description with commas", func(proseTagCommas) error { return nil },
			[]string{`input proseTagCommas.Query: jsonschema tag "The query, as typed" is a list of key=value keywords, not a description: write it as jsonschema_description:"The query, as typed"`}},
		{"a description after a keyword", func(proseAfterKeyword) error { return nil },
			[]string{`input proseAfterKeyword.Query: unknown jsonschema tag "Search query": a description is written jsonschema_description:"Search query"`}},
		{"a comma in description=", func(descriptionComma) error { return nil },
			[]string{`input descriptionComma.Query: a comma ends a jsonschema tag's keyword, so " e.g. cats" is read as a keyword of its own: write the text as jsonschema_description:"..." (or escape the comma as \,)`}},
		{"a misspelt key", func(misspeltKey) error { return nil },
			[]string{`input misspeltKey.Query: unknown jsonschema tag key "minLenght" (did you mean "minLength"?)`}},
		{"a misspelt flag", func(misspeltFlag) error { return nil },
			[]string{`input misspeltFlag.Query: unknown jsonschema tag "requird" (did you mean "required"?)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := agnara.New("app", nil)
			site := "execution/" + strings.TrimSuffix(lineAfter(here()), ":")
			app.Capability(tt.fn, &agnara.CapabilityOptions{Name: "x"})
			plans, err := execution.Compile(app)
			var got []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					got = append(got, e.Error())
				}
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, site+": app.x: "+w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Compile mistakes (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			// What an output leaves out stays out of its schema.
			p, _ := plans.Lookup("app.x")
			var out struct {
				Properties map[string]any `json:"properties"`
			}
			if s := p.OutputSchema(); s != nil {
				if err := json.Unmarshal(s, &out); err != nil {
					t.Fatal(err)
				}
			}
			for _, hidden := range []string{"cache", "Cursor", "Both", "_"} {
				if _, ok := out.Properties[hidden]; ok {
					t.Errorf("output schema publishes %q: %s", hidden, p.OutputSchema())
				}
			}
		})
	}
}

// TestUnexportedFieldKeepsItsJSONName: the fix suggested for an unexported
// field with a json tag (which go vet reports, so the struct is made here)
// keeps the name the tag gives.
func TestUnexportedFieldKeepsItsJSONName(t *testing.T) {
	in := reflect.StructOf([]reflect.StructField{
		{Name: "Query", Type: reflect.TypeFor[string](), Tag: `json:"query"`},
		{Name: "limit", PkgPath: "example.com/search", Type: reflect.TypeFor[int](), Tag: `json:"max,omitempty"`},
	})
	errType := reflect.TypeFor[error]()
	fn := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{in}, []reflect.Type{errType}, false), func([]reflect.Value) []reflect.Value {
		return []reflect.Value{reflect.Zero(errType)}
	})
	app := agnara.New("app", nil)
	app.Capability(fn.Interface(), &agnara.CapabilityOptions{Name: "x"})
	_, err := execution.Compile(app)
	const want = `.limit: unexported field: no argument can set it, so the handler always sees its zero value: export it (Limit, tagged json:"max"), or move it out of the input struct`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("Compile = %v, want a mistake ending %q", err, want)
	}
}

// TestFormsAsWritten: a form's answer is decoded like arguments, so a form
// with a field no answer can set is refused by NewForm, as an input is.
func TestFormsAsWritten(t *testing.T) {
	type contact struct {
		Email string `json:"email" jsonschema:"format=email"`
		name  string
	}
	err := execution.NewForm[contact]("Who?").Err()
	const want = `contact.name: unexported field: no argument can set it`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("NewForm(...).Err() = %v, want %q", err, want)
	}
}
