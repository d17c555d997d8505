package execution_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
)

type Shipping struct {
	Name    string   `json:"name" jsonschema:"minLength=1,maxLength=40" jsonschema_description:"Recipient"`
	Email   string   `json:"email" jsonschema:"format=email"`
	Express bool     `json:"express,omitempty"`
	Weight  float64  `json:"weight" jsonschema:"minimum=0,maximum=30"`
	Size    string   `json:"size" jsonschema:"enum=S,enum=M,enum=L"`
	Extras  []string `json:"extras,omitempty" jsonschema:"enum=gift,enum=insurance"`
}

var shippingForm = execution.NewForm[Shipping]("Where should it go?")

func TestFormSchema(t *testing.T) {
	if err := shippingForm.Err(); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"name":{"type":"string","description":"Recipient","minLength":1,"maxLength":40},"email":{"type":"string","format":"email"},"express":{"type":"boolean"},"weight":{"type":"number","minimum":0,"maximum":30},"size":{"type":"string","enum":["S","M","L"]},"extras":{"type":"array","items":{"type":"string","enum":["gift","insurance"]}}},"required":["name","email","weight","size"]}`
	if got := string(shippingForm.Schema()); got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
}

func TestTitledEnums(t *testing.T) {
	type choice struct {
		Size  string   `json:"size" jsonschema:"enum=s,enum=l" enumtitles:"Small,Large"`
		Extra []string `json:"extra" jsonschema:"enum=g,enum=i" enumtitles:"Gift wrap, Insurance"`
	}
	f := execution.NewForm[choice]("Pick")
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},"extra":{"type":"array","items":{"anyOf":[{"const":"g","title":"Gift wrap"},{"const":"i","title":"Insurance"}]}}},"required":["size","extra"]}`
	if got := string(f.Schema()); got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
	app := agnara.New("app", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "pick", f)
		return v.Size, err
	}, &agnara.CapabilityOptions{Name: "x", Forms: []agnara.Form{f}})
	p := compileOne(t, app, c)
	out, err := p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{"pick": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"size":"m","extra":[]}`)}}})
	mustFailure(t, out, err, execution.InvalidInput) // "m" is not an option: said once
	out, err = p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{"pick": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"size":"l","extra":["g"]}`)}}})
	if s := mustSuccess(t, out, err); s.Value != "l" {
		t.Errorf("value = %v", s.Value)
	}
	type mismatch struct {
		Size string `json:"size" jsonschema:"enum=s,enum=l" enumtitles:"Small"`
	}
	if execution.NewForm[mismatch]("q").Err() == nil {
		t.Error("a title count that does not match the enum was accepted")
	}
}

func TestFormsOutsideTheSubset(t *testing.T) {
	type nested struct {
		Addr struct{ Street string } `json:"addr"`
	}
	type pointer struct {
		N *int `json:"n"`
	}
	type badFormat struct {
		IP string `json:"ip" jsonschema:"format=ipv4"`
	}
	type list struct {
		Tags []string `json:"tags"`
	}
	type pattern struct {
		Code string `json:"code" jsonschema:"pattern=^[a-z]+$"`
	}
	for name, err := range map[string]error{
		"nested object":     execution.NewForm[nested]("q").Err(),
		"pointer":           execution.NewForm[pointer]("q").Err(),
		"format":            execution.NewForm[badFormat]("q").Err(),
		"list without enum": execution.NewForm[list]("q").Err(),
		"pattern":           execution.NewForm[pattern]("q").Err(),
		"not a struct":      execution.NewForm[string]("q").Err(),
	} {
		if err == nil {
			t.Errorf("%s: form accepted", name)
		}
	}
	// Declared forms are checked by Compile, at the registration's line.
	app := agnara.New("app", nil)
	site := lineAfter(here())
	app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "x", Forms: []agnara.Form{execution.NewForm[pattern]("q")}})
	if _, err := execution.Compile(app); err == nil || !strings.Contains(err.Error(), site) || !strings.Contains(err.Error(), `"pattern" is not allowed in a form`) {
		t.Errorf("Compile = %v, want the form's mistake at %s", err, site)
	}
}

func TestAskAndAnswer(t *testing.T) {
	var ran int
	var got Shipping
	app := agnara.New("shop", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		ran++
		s, err := execution.Ask(ec, "ship", shippingForm)
		if err != nil {
			return "", err
		}
		ok, err := ec.Confirm("go", "Ship to "+s.Name+"?")
		if err != nil {
			return "", err
		}
		got = s
		if !ok {
			return "kept", nil
		}
		return "shipped", nil
	}, &agnara.CapabilityOptions{Name: "ship", Forms: []agnara.Form{shippingForm}})
	p := compileOne(t, app, c)
	valid := json.RawMessage(`{"name":"Ada","email":"ada@example.com","weight":2.5,"size":"M","extras":["gift"]}`)

	tests := []struct {
		name    string
		answers map[string]execution.Answer
		asked   []string // keys of the questions, when the outcome asks
		value   any
		code    execution.Code
	}{
		{"first round asks the form", nil, []string{"ship"}, nil, 0},
		{"invalid form is refused once, not asked again", map[string]execution.Answer{"ship": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"name":"","email":"x","weight":99,"size":"XL"}`)}}, nil, nil, execution.InvalidInput},
		{"accepted form without content is refused", map[string]execution.Answer{"ship": {Kind: execution.Elicitation, Action: "accept"}}, nil, nil, execution.InvalidInput},
		{"an action that is not one is refused", map[string]execution.Answer{"ship": {Kind: execution.Elicitation, Action: "maybe"}}, nil, nil, execution.InvalidInput},
		{"answer of another kind is asked again", map[string]execution.Answer{"ship": {Kind: execution.Sampling}}, []string{"ship"}, nil, 0},
		{"valid form asks the confirmation", map[string]execution.Answer{"ship": {Kind: execution.Elicitation, Action: "accept", Content: valid}}, []string{"go"}, nil, 0},
		{"confirmed", map[string]execution.Answer{
			"ship": {Kind: execution.Elicitation, Action: "accept", Content: valid},
			"go":   {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":true}`)},
		}, nil, "shipped", 0},
		{"said no", map[string]execution.Answer{
			"ship": {Kind: execution.Elicitation, Action: "accept", Content: valid},
			"go":   {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":false}`)},
		}, nil, "kept", 0},
		{"declined form", map[string]execution.Answer{"ship": {Kind: execution.Elicitation, Action: "decline"}}, nil, nil, execution.Forbidden},
		{"cancelled confirmation", map[string]execution.Answer{
			"ship": {Kind: execution.Elicitation, Action: "accept", Content: valid},
			"go":   {Kind: execution.Elicitation, Action: "cancel"},
		}, nil, nil, execution.Forbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := p.Invoke(bg, &execution.Invocation{Answers: tt.answers})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.asked != nil:
				ir := mustInputRequired(t, out, err)
				var keys []string
				for k := range ir.Requests {
					keys = append(keys, k)
				}
				if diff := cmp.Diff(tt.asked, keys); diff != "" {
					t.Errorf("asked (-want +got):\n%s", diff)
				}
			case tt.code != 0:
				mustFailure(t, out, err, tt.code)
			default:
				if s := mustSuccess(t, out, err); s.Value != tt.value {
					t.Errorf("value = %v, want %v", s.Value, tt.value)
				}
			}
		})
	}
	if got.Email != "ada@example.com" || got.Extras[0] != "gift" {
		t.Errorf("decoded form = %+v", got)
	}
}

func TestSampleRootsAndCanAsk(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		if !ec.CanAsk(execution.Sampling) {
			return "no sampling", nil
		}
		r, err := ec.Sample("q", execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "Capital of France?"}}, MaxTokens: 50})
		roots, rerr := ec.Roots("roots")
		if err := errors.Join(err, rerr); err != nil {
			return "", err // both questions are asked in one round
		}
		return r.Text + " " + roots[0].URI, nil
	}, &agnara.CapabilityOptions{Name: "x"})
	p := compileOne(t, app, c)

	out, err := p.Invoke(bg, &execution.Invocation{Supports: func(k execution.InputKind) bool { return k != execution.Sampling }})
	if s := mustSuccess(t, out, err); s.Value != "no sampling" {
		t.Errorf("value = %v", s.Value)
	}
	out, err = p.Invoke(bg, nil)
	reqs := mustInputRequired(t, out, err).Requests
	if len(reqs) != 2 || reqs["q"].Kind != execution.Sampling || reqs["q"].Sampling.MaxTokens != 50 || reqs["roots"].Kind != execution.Roots {
		t.Errorf("requests = %+v", reqs)
	}
	out, err = p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{
		"q":     {Kind: execution.Sampling, Sampling: &execution.SamplingResult{Role: "assistant", Text: "Paris"}},
		"roots": {Kind: execution.Roots, Roots: []execution.Root{{URI: "file:///w"}}},
	}})
	if s := mustSuccess(t, out, err); s.Value != "Paris file:///w" {
		t.Errorf("value = %v", s.Value)
	}
}

func TestInputRequiredWithoutAQuestionIsInternal(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func() error { return execution.ErrInputRequired }, &agnara.CapabilityOptions{Name: "x"})
	p := compileOne(t, app, c)
	out, err := p.Invoke(bg, nil)
	mustFailure(t, out, err, execution.InternalFailure)
}

func TestConfirmKeyIsReserved(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func(ec *execution.Context) (bool, error) {
		return ec.Confirm(execution.ConfirmKey, "A harmless question?")
	}, &agnara.CapabilityOptions{Name: "x"})
	p := compileOne(t, app, c)
	out, err := p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{
		execution.ConfirmKey: {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":true}`)},
	}})
	mustFailure(t, out, err, execution.InternalFailure)
}

// mustInputRequired returns the questions of an outcome that must ask.
func mustInputRequired(t *testing.T, out execution.Outcome, err error) *execution.InputRequired {
	t.Helper()
	if err != nil {
		t.Fatalf("Invoke error = %v, want input required", err)
	}
	ir, ok := out.(*execution.InputRequired)
	if !ok || len(ir.Requests) == 0 {
		t.Fatalf("outcome = %#v, want input required with questions", out)
	}
	if got := execution.LabelOf(out); got != "input_required" {
		t.Errorf("Label = %q, want input_required", got)
	}
	return ir
}

// An invalid answer is told once, with each field that is wrong and what
// was expected, so a client that keeps sending it is not asked forever.
func TestInvalidAnswerSaysWhatIsWrong(t *testing.T) {
	app := agnara.New("shop", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		s, err := execution.Ask(ec, "ship", shippingForm)
		return s.Name, err
	}, &agnara.CapabilityOptions{Name: "ship", Forms: []agnara.Form{shippingForm}})
	p := compileOne(t, app, c)
	out, err := p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{
		"ship": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"name":"","email":"x","weight":99,"size":"XL"}`)},
	}})
	f := mustFailure(t, out, err, execution.InvalidInput)
	if !strings.Contains(f.Message, `the answer to "ship" does not match the requested form`) || f.Details["question"] != "ship" {
		t.Errorf("failure = %q, details %v", f.Message, f.Details)
	}
	var paths []string
	for _, v := range f.Details["violations"].([]execution.Violation) {
		paths = append(paths, v.Path)
	}
	if diff := cmp.Diff([]string{"/email", "/name", "/size", "/weight"}, paths); diff != "" {
		t.Errorf("violation paths (-want +got):\n%s", diff)
	}
}

func TestDeclinedAndCancelledSayWhat(t *testing.T) {
	app := agnara.New("shop", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		s, err := execution.Ask(ec, "ship", shippingForm)
		return s.Name, err
	}, &agnara.CapabilityOptions{Name: "ship", Forms: []agnara.Form{shippingForm}})
	p := compileOne(t, app, c)
	for action, want := range map[string]string{"decline": "the caller declined the request for input", "cancel": "the caller cancelled the request for input"} {
		out, err := p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{"ship": {Kind: execution.Elicitation, Action: action}}})
		if f := mustFailure(t, out, err, execution.Forbidden); f.Message != want {
			t.Errorf("%s: message %q, want %q", action, f.Message, want)
		}
	}
}

// Unsolicited answers — sent without a question vouching for them — answer
// forms, sampling and roots, never a confirmation; an answer to an asked
// question wins over one under the same key.
func TestUnsolicitedAnswers(t *testing.T) {
	type name struct {
		Name string `json:"name" jsonschema:"minLength=1"`
	}
	form := execution.NewForm[name]("Name?")
	app := agnara.New("app", nil)
	ask := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", form)
		return v.Name, err
	}, &agnara.CapabilityOptions{Name: "ask", Forms: []agnara.Form{form}})
	confirm := app.Capability(func(ec *execution.Context) (string, error) {
		ok, err := ec.Confirm("sure", "Sure?")
		return fmt.Sprint(ok), err
	}, &agnara.CapabilityOptions{Name: "confirm"})
	declared := app.Capability(func() (string, error) { return "done", nil }, &agnara.CapabilityOptions{Name: "declared", Confirm: "Really?"})
	sample := app.Capability(func(ec *execution.Context) (string, error) {
		r, err := ec.Sample("s", execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "hi"}}, MaxTokens: 5})
		return r.Text, err
	}, &agnara.CapabilityOptions{Name: "sample"})
	roots := app.Capability(func(ec *execution.Context) (string, error) {
		r, err := ec.Roots("r")
		if err != nil {
			return "", err
		}
		return r[0].URI, nil
	}, &agnara.CapabilityOptions{Name: "roots"})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	accept := func(content string) execution.Answer {
		return execution.Answer{Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(content)}
	}
	yes := accept(`{"confirm":true}`)
	for _, tc := range []struct {
		name        string
		c           *agnara.Capability
		answers     map[string]execution.Answer
		unsolicited map[string]execution.Answer
		want        string // the value, or "ask:<key>" or "fail:<code>"
	}{
		{"a form", ask, nil, map[string]execution.Answer{"name": accept(`{"name":"Ada"}`)}, "Ada"},
		{"a form, with keys nobody asked", ask, nil, map[string]execution.Answer{"name": accept(`{"name":"Ada"}`), "other": accept(`{"x":1}`)}, "Ada"},
		{"a form, answered badly", ask, nil, map[string]execution.Answer{"name": accept(`{"name":""}`)}, "fail:invalid_input"},
		{"an asked answer wins", ask, map[string]execution.Answer{"name": accept(`{"name":"Asked"}`)}, map[string]execution.Answer{"name": accept(`{"name":"Unasked"}`)}, "Asked"},
		{"Context.Confirm", confirm, nil, map[string]execution.Answer{"sure": yes}, "ask:sure"},
		{"Context.Confirm, asked", confirm, map[string]execution.Answer{"sure": yes}, nil, "true"},
		{"the declared confirmation", declared, nil, map[string]execution.Answer{execution.ConfirmKey: yes}, "ask:" + execution.ConfirmKey},
		{"sampling", sample, nil, map[string]execution.Answer{"s": {Kind: execution.Sampling, Sampling: &execution.SamplingResult{Role: "assistant", Text: "hello"}}}, "hello"},
		{"roots", roots, nil, map[string]execution.Answer{"r": {Kind: execution.Roots, Roots: []execution.Root{{URI: "file:///w"}}}}, "file:///w"},
		{"an answer of another kind", sample, nil, map[string]execution.Answer{"s": accept(`{}`)}, "ask:s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := plans.Plan(tc.c)
			out, err := p.Invoke(bg, &execution.Invocation{Answers: tc.answers, Unsolicited: tc.unsolicited})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch o := out.(type) {
			case execution.Success:
				got = fmt.Sprint(o.Value)
			case *execution.InputRequired:
				for k := range o.Requests {
					got = "ask:" + k
				}
			case *execution.Failure:
				got = "fail:" + o.Code.String()
			}
			if got != tc.want {
				t.Errorf("outcome = %s, want %s", got, tc.want)
			}
		})
	}
}
