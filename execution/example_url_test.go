package execution_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// A capability that needs its user to sign in with a third party asks the
// caller to open the third party's page. The first round asks; the caller
// answers accept (the user agreed to open it); on the next round AskURL
// returns nil, the capability waits for the third party's callback on its
// own side, and then tells the caller the interaction is done
// (notifications/elicitation/complete at MCP 2025-11-25).
func ExampleContext_AskURL() {
	signedIn := make(chan string, 1) // the third party's callback fills it
	app := agnara.New("calendar", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		if err := ec.AskURL("calendar.signin", "Sign in to your calendar", "https://calendar.example.com/oauth/start?flow=f81d4"); err != nil {
			return "", err // asks the caller, or the user declined
		}
		var account string
		select {
		case account = <-signedIn:
		case <-ec.Done():
			return "", ec.Err()
		}
		if err := ec.URLDone("calendar.signin"); err != nil {
			return "", err
		}
		return "linked " + account, nil
	}, &agnara.CapabilityOptions{Name: "link"})
	plans, err := execution.Compile(app)
	if err != nil {
		panic(err)
	}
	p, _ := plans.Plan(c)

	out, _ := p.Invoke(context.Background(), &execution.Invocation{})
	q := out.(*execution.InputRequired).Requests["calendar.signin"]
	fmt.Println(q.Kind, q.Message, q.URL)

	signedIn <- "ada@example.com"
	out, _ = p.Invoke(context.Background(), &execution.Invocation{
		Answers: map[string]execution.Answer{"calendar.signin": {Kind: execution.URLElicitation, Action: "accept"}},
		URLDone: func(key string) { fmt.Println("done:", key) },
	})
	fmt.Println(out.(execution.Success).Value)
	// Output:
	// url_elicitation Sign in to your calendar https://calendar.example.com/oauth/start?flow=f81d4
	// done: calendar.signin
	// linked ada@example.com
}
