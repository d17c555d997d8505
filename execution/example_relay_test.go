package execution_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// A capability that relays another party's question: the question is
// asked as the other party put it, what the handler keeps for the next
// round comes back with the answer, and the answer — a decline too — is
// the handler's to pass on.
func ExampleContext_Relay() {
	question := execution.InputRequest{
		Kind:    execution.Elicitation,
		Message: "Delete this user?",
		Schema:  json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`),
	}
	app := agnara.New("relay", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		if err := ec.SetRoundState([]byte("remote call 7")); err != nil {
			return "", err
		}
		a, err := ec.Relay("remote.q1", question)
		if err != nil {
			return "", err // asks the caller
		}
		return fmt.Sprintf("%s: %s", ec.RoundState(), a.Action), nil
	}, &agnara.CapabilityOptions{Name: "relayed"})
	plans, err := execution.Compile(app)
	if err != nil {
		panic(err)
	}
	p, _ := plans.Lookup(c.Identity())

	out, _ := p.Invoke(context.Background(), &execution.Invocation{})
	ir := out.(*execution.InputRequired)
	fmt.Println(ir.Requests["remote.q1"].Message, string(ir.RoundState))

	out, _ = p.Invoke(context.Background(), &execution.Invocation{
		Answers:    map[string]execution.Answer{"remote.q1": {Kind: execution.Elicitation, Action: "decline"}},
		RoundState: ir.RoundState,
	})
	fmt.Println(out.(execution.Success).Value)
	// Output:
	// Delete this user? remote call 7
	// remote call 7: decline
}
