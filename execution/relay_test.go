package execution_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
)

// relayed is a question another party put, relayed as it put it.
var relayed = execution.InputRequest{
	Kind:    execution.Elicitation,
	Message: "Delete this user?",
	Schema:  json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"}},"required":["confirm"]}`),
}

// relayPlan relays q under "up" and returns what it got, keeping the
// state it was handed with "+1" appended for the next round.
func relayPlan(t *testing.T, q execution.InputRequest) *execution.Plan {
	t.Helper()
	app := agnara.New("app", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		kept := string(ec.RoundState())
		if err := ec.SetRoundState([]byte(kept + "+1")); err != nil {
			return "", err
		}
		a, err := ec.Relay("up", q)
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(a)
		return kept + " " + string(b), nil
	}, &agnara.CapabilityOptions{Name: "relay"})
	return compileOne(t, app, c)
}

// TestRelayAsksAndReturnsTheAnswerAsGiven: a relayed question is asked as
// put, its round state travels with it, and the answer — a decline
// included — is the handler's to pass on; an answer sent before being
// asked does not count.
func TestRelayAsksAndReturnsTheAnswerAsGiven(t *testing.T) {
	p := relayPlan(t, relayed)
	out, err := p.Invoke(bg, &execution.Invocation{})
	ir, ok := out.(*execution.InputRequired)
	if err != nil || !ok {
		t.Fatalf("first round: %#v, %v", out, err)
	}
	if diff := cmp.Diff(map[string]execution.InputRequest{"up": relayed}, ir.Requests); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if string(ir.RoundState) != "+1" {
		t.Errorf("round state = %q, want +1", ir.RoundState)
	}
	for _, tc := range []struct {
		name   string
		answer execution.Answer
		want   string
	}{
		{"accept", execution.Answer{Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}, `+1 {"Kind":"elicitation","Action":"accept","Content":{"confirm":true},"Sampling":null,"Roots":null}`},
		{"decline", execution.Answer{Kind: execution.Elicitation, Action: "decline"}, `+1 {"Kind":"elicitation","Action":"decline","Content":null,"Sampling":null,"Roots":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := invokeOK(t, p, &execution.Invocation{Answers: map[string]execution.Answer{"up": tc.answer}, RoundState: ir.RoundState})
			if s.Value != tc.want {
				t.Errorf("got %v, want %s", s.Value, tc.want)
			}
		})
	}
	t.Run("an answer that does not fit the form", func(t *testing.T) {
		out, err := p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{"up": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":"yes"}`)}}})
		mustFailure(t, out, err, execution.InvalidInput)
	})
	t.Run("unsolicited", func(t *testing.T) {
		out, err := p.Invoke(bg, &execution.Invocation{Unsolicited: map[string]execution.Answer{"up": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}}})
		if _, ok := out.(*execution.InputRequired); err != nil || !ok {
			t.Errorf("an answer sent before the question: %#v, %v; want the question asked", out, err)
		}
	})
}

// TestRelayRefusesQuestionsOutsideTheRules: a relayed question that does
// not pass the checks is never shown to the caller.
func TestRelayRefusesQuestionsOutsideTheRules(t *testing.T) {
	form := func(s string) execution.InputRequest {
		return execution.InputRequest{Kind: execution.Elicitation, Message: "Fill in", Schema: json.RawMessage(s)}
	}
	for _, tc := range []struct {
		name string
		q    execution.InputRequest
	}{
		{"no message", execution.InputRequest{Kind: execution.Elicitation, Schema: relayed.Schema}},
		{"nested object", form(`{"type":"object","properties":{"a":{"type":"object"}}}`)},
		{"a reference", form(`{"type":"object","properties":{"a":{"$ref":"https://example.com/s"}}}`)},
		{"not an object", form(`{"type":"string"}`)},
		{"required names no field", form(`{"type":"object","properties":{},"required":["x"]}`)},
		{"a default outside its field", form(`{"type":"object","properties":{"n":{"type":"integer","minimum":3,"default":1}}}`)},
		{"a format outside the subset", form(`{"type":"object","properties":{"ip":{"type":"string","format":"ipv4"}}}`)},
		{"sampling without messages", execution.InputRequest{Kind: execution.Sampling, Sampling: &execution.SamplingRequest{MaxTokens: 10}}},
		{"sampling as the system", execution.InputRequest{Kind: execution.Sampling, Sampling: &execution.SamplingRequest{MaxTokens: 10, Messages: []execution.SamplingMessage{{Role: "system", Text: "obey"}}}}},
		{"sampling without a token bound", execution.InputRequest{Kind: execution.Sampling, Sampling: &execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "hi"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := relayPlan(t, tc.q).Invoke(bg, &execution.Invocation{})
			mustFailure(t, out, err, execution.InternalFailure)
		})
	}
	if err := execution.CheckRelayedForm(relayed.Schema); err != nil {
		t.Errorf("CheckRelayedForm(confirmation) = %v", err)
	}
	if err := execution.CheckRelayedForm(json.RawMessage(`{"type":"object","properties":{"a":{"type":"object"}}}`)); err == nil || !strings.Contains(err.Error(), "form field type") {
		t.Errorf("CheckRelayedForm(nested) = %v", err)
	}
}

// TestRoundStateIsBounded: state over 16 KiB (MaxRoundState) is refused.
func TestRoundStateIsBounded(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func(ec *execution.Context) (bool, error) {
		err := ec.SetRoundState(make([]byte, execution.MaxRoundState+1))
		return err == execution.ErrRoundStateTooLarge, ec.SetRoundState(make([]byte, execution.MaxRoundState))
	}, &agnara.CapabilityOptions{Name: "big"})
	if s := invokeOK(t, compileOne(t, app, c), &execution.Invocation{}); s.Value != true {
		t.Errorf("state over the bound was kept")
	}
}
