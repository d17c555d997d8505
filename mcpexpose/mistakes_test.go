package mcpexpose_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// The registration file of TestEveryMistakeInOneRound makes seven mistakes
// (issue 31, item 7), which used to be reported in three rounds: tag bounds
// after tag keys, duplicate tool names and templates after both.
type mistake int

const (
	tagKey        mistake = iota // a jsonschema tag key with a typo
	tagBounds                    // tag bounds no value satisfies, in the same struct
	dupTool                      // two tools with one wire name
	dupTemplate                  // two resource templates with one URI template
	badName                      // an invalid capability name
	badInput                     // an input field whose type cannot be described
	noDescription                // a tool without a description
	mistakeCount
)

// The input of "search", in the four states of its two mistakes.
type (
	searchBoth struct {
		Query string `json:"query" jsonschema:"minLenght=1"`
		Limit int    `json:"limit,omitempty" jsonschema:"minimum=10,maximum=1"`
	}
	searchBounds struct { // the key fixed
		Query string `json:"query" jsonschema:"minLength=1"`
		Limit int    `json:"limit,omitempty" jsonschema:"minimum=10,maximum=1"`
	}
	searchKey struct { // the bounds fixed
		Query string `json:"query" jsonschema:"minLenght=1"`
		Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=10"`
	}
	searchFine struct {
		Query string `json:"query" jsonschema:"minLength=1"`
		Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=10"`
	}
)

type (
	ownerBad struct {
		Owner url.URL `json:"owner"`
	}
	ownerFine struct {
		Owner string `json:"owner" jsonschema:"format=uri"`
	}
	userRef struct {
		ID string `json:"id"`
	}
)

// mistakeFile registers the file, making the mistakes broken says and
// fixing the others. It returns the exposure and, by mistake, what its
// report must say: the file:line, the subject, and the words naming what
// to fix.
func mistakeFile(broken func(mistake) bool) (*mcpexpose.Exposure, map[mistake]string) {
	want := map[mistake]string{}
	app := agnara.New("app", nil)
	exp := mcpexpose.New(app)

	var searchFn any
	var searchIn string
	switch {
	case broken(tagKey) && broken(tagBounds):
		searchFn, searchIn = func(context.Context, searchBoth) (string, error) { return "", nil }, "searchBoth"
	case broken(tagBounds):
		searchFn, searchIn = func(context.Context, searchBounds) (string, error) { return "", nil }, "searchBounds"
	case broken(tagKey):
		searchFn, searchIn = func(context.Context, searchKey) (string, error) { return "", nil }, "searchKey"
	default:
		searchFn = func(context.Context, searchFine) (string, error) { return "", nil }
	}
	at := nextLine()
	search := app.Capability(searchFn, &agnara.CapabilityOptions{Name: "search", Description: "Searches."})
	want[tagKey] = at + `: app.search: input ` + searchIn + `.Query: unknown jsonschema tag key "minLenght" (did you mean "minLength"?)`
	want[tagBounds] = at + `: app.search: input ` + searchIn + `.Limit: minimum: minimum 10 is greater than maximum 1: no value satisfies both`
	exp.Tool(search, &mcpexpose.ToolOptions{Name: "find"})

	lookup := app.Capability(func(context.Context, userRef) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "lookup", Description: "Looks up."})
	lookupName := "lookup"
	if broken(dupTool) {
		lookupName = "find"
	}
	want[dupTool] = nextLine() + `: find: duplicate tool name (first declared at `
	exp.Tool(lookup, &mcpexpose.ToolOptions{Name: lookupName})

	byID := app.Capability(func(context.Context, userRef) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "user", Description: "A user."})
	profile := app.Capability(func(context.Context, userRef) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "profile", Description: "A profile."})
	exp.ResourceTemplate(byID, &mcpexpose.ResourceTemplateOptions{URITemplate: "users://{id}"})
	profileTemplate := "users://{id}/profile"
	if broken(dupTemplate) {
		profileTemplate = "users://{id}"
	}
	want[dupTemplate] = nextLine() + `: users://{id}: duplicate resource template (first declared at `
	exp.ResourceTemplate(profile, &mcpexpose.ResourceTemplateOptions{URITemplate: profileTemplate})

	name := "get_user"
	if broken(badName) {
		name = "get user"
	}
	want[badName] = nextLine() + `: app.get user: invalid capability name "get user": want a letter followed by at most 31 letters, digits, '_' or '-'`
	getUser := app.Capability(func(context.Context, userRef) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: name, Description: "Gets a user."})
	exp.Tool(getUser, &mcpexpose.ToolOptions{Name: "get_user"})

	ownerFn := any(func(context.Context, ownerFine) error { return nil })
	if broken(badInput) {
		ownerFn = func(context.Context, ownerBad) error { return nil }
	}
	want[badInput] = nextLine() + `: app.set_owner: input ownerBad.Owner: url.URL does not encode as a string; use a string field with jsonschema:"format=uri"`
	setOwner := app.Capability(ownerFn, &agnara.CapabilityOptions{Name: "set_owner", Description: "Sets the owner."})
	exp.Tool(setOwner, nil)

	description := "Counts users."
	if broken(noDescription) {
		description = ""
	}
	stats := app.Capability(func(context.Context) (int, error) { return 0, nil }, &agnara.CapabilityOptions{Name: "stats", Description: description})
	want[noDescription] = nextLine() + `: app.stats: a tool needs a description: set CapabilityOptions.Description of app.stats`
	exp.Tool(stats, nil)
	return exp, want
}

// mistakesOf returns the mistakes a compile error reports, one each.
func mistakesOf(t *testing.T, err error) []error {
	t.Helper()
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	for _, e := range j.Unwrap() {
		if _, nested := e.(interface{ Unwrap() []error }); nested {
			t.Errorf("mistake %q joins others: want one error per mistake", e)
		}
	}
	return j.Unwrap()
}

func TestEveryMistakeInOneRound(t *testing.T) {
	all := func(mistake) bool { return true }
	exp, want := mistakeFile(all)
	_, err := exp.Compile()
	t.Logf("the file with all seven mistakes:\n%v", err)
	got := mistakesOf(t, err)
	if len(got) != int(mistakeCount) {
		t.Errorf("Compile reported %d mistakes, want all %d at once:\n%v", len(got), mistakeCount, err)
	}
	for m := range mistakeCount {
		if !strings.Contains(err.Error(), want[m]) {
			t.Errorf("mistake %d is not reported: want %q in\n%v", m, want[m], err)
		}
	}
}

// TestFixingMistakesRevealsNoOther fixes the seven mistakes in every
// combination: each compile reports exactly the mistakes left, so that no
// fix ever reveals a mistake the compile before it kept back.
func TestFixingMistakesRevealsNoOther(t *testing.T) {
	for set := range 1 << mistakeCount {
		broken := func(m mistake) bool { return set&(1<<m) != 0 }
		exp, want := mistakeFile(broken)
		snap, err := exp.Compile()
		var left []mistake
		for m := range mistakeCount {
			if broken(m) {
				left = append(left, m)
			}
		}
		if len(left) == 0 {
			if err != nil || snap == nil {
				t.Errorf("the fixed file: Compile = %v", err)
			}
			continue
		}
		got := mistakesOf(t, err)
		if len(got) != len(left) {
			t.Errorf("mistakes %v: Compile reported %d, want %d:\n%v", left, len(got), len(left), err)
			continue
		}
		for _, m := range left {
			n := 0
			for _, e := range got {
				if strings.Contains(e.Error(), want[m]) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("mistakes %v: mistake %d reported %d times, want once (%q):\n%v", left, m, n, want[m], err)
			}
		}
	}
}

type pageRef struct {
	Page int `json:"page"`
}

// An exposure's checks that need a plan (a template variable that is no
// input field) run on every plan that compiled, even when another
// capability has a mistake of its own; and a declaration of a capability
// without a plan still counts for duplicates.
func TestPlanChecksRunBesideApplicationMistakes(t *testing.T) {
	app := agnara.New("app", nil)
	exp := mcpexpose.New(app)
	broken := nextLine()
	search := app.Capability(func(searchKey) error { return nil }, &agnara.CapabilityOptions{Name: "search", Description: "Searches."})
	page := app.Capability(func(context.Context, pageRef) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "page", Description: "A page."})
	exp.ResourceTemplate(search, &mcpexpose.ResourceTemplateOptions{URITemplate: "pages://{page}"})
	dup := nextLine()
	exp.ResourceTemplate(page, &mcpexpose.ResourceTemplateOptions{URITemplate: "pages://{page}"})
	tmpl := nextLine()
	exp.ResourceTemplate(page, &mcpexpose.ResourceTemplateOptions{URITemplate: "pages://{n}"})
	_, err := exp.Compile()
	for _, want := range []string{
		broken + `: app.search: input searchKey.Query: unknown jsonschema tag key "minLenght"`,
		dup + `: pages://{page}: duplicate resource template (first declared at `,
		tmpl + `: pages://{n}: template variable {n} is not a field of the input of app.page`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile = %v\nwant it to report %q", err, want)
		}
	}
	if got := len(mistakesOf(t, err)); got != 3 {
		t.Errorf("Compile reported %d mistakes, want 3:\n%v", got, err)
	}
}

// execution.Compile alone reports the tag mistakes of one struct together
// with the bounds its derived schema breaks, each as an error of its own.
func TestExecutionCompileSplitsSchemaProblems(t *testing.T) {
	app := agnara.New("app", nil)
	at := nextLine()
	app.Capability(func(searchBoth) error { return nil }, &agnara.CapabilityOptions{Name: "search"})
	_, err := execution.Compile(app)
	got := mistakesOf(t, err)
	want := []string{
		at + `: app.search: input searchBoth.Query: unknown jsonschema tag key "minLenght" (did you mean "minLength"?)`,
		at + `: app.search: input searchBoth.Limit: minimum: minimum 10 is greater than maximum 1: no value satisfies both`,
	}
	if len(got) != len(want) {
		t.Fatalf("Compile reported %d mistakes, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		if !strings.HasSuffix(got[i].Error(), strings.TrimPrefix(w, at)) || !strings.Contains(got[i].Error(), at) {
			t.Errorf("mistake %d = %q, want %q", i, got[i], w)
		}
	}
	if !errors.Is(err, got[0]) {
		t.Errorf("errors.Is does not find a listed mistake in the error")
	}
}

// A declaration with a bad option is still checked for everything else,
// and a capability declared twice without a description is reported once.
func TestDeclarationMistakesReportedOnceEach(t *testing.T) {
	app := agnara.New("app", nil)
	exp := mcpexpose.New(app)
	bare := app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "bare"})
	task := nextLine()
	exp.Tool(bare, &mcpexpose.ToolOptions{Task: 99})
	exp.Tool(bare, &mcpexpose.ToolOptions{Name: "bare_again"})
	_, err := exp.Compile()
	got := mistakesOf(t, err)
	want := []string{
		task + ": app.bare: a tool needs a description",
		task + ": app.bare: unknown ToolOptions.Task 99",
	}
	if len(got) != len(want) {
		t.Fatalf("Compile reported %d mistakes, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].Error(), "mcpexpose/"+w) {
			t.Errorf("mistake %d = %q, want it to begin %q", i, got[i], w)
		}
	}
}
