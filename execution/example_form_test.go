package execution_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// Invitation is a form: the user sees its fields pre-filled with the
// defaults, and its options by their titles.
type Invitation struct {
	Email string `json:"email" jsonschema:"format=email" jsonschema_description:"Who to invite"`
	Role  string `json:"role" jsonschema:"enum=viewer,enum=editor,default=viewer" enumtitles:"Can view,Can edit"`
	Seats int    `json:"seats" jsonschema:"minimum=1,maximum=10,default=1"`
	// Notify keeps the legacy form of titles for handshake-era clients
	// that read only enumNames.
	Notify string `json:"notify" jsonschema:"enum=now,enum=later,default=now" enumnames:"Right away,Tomorrow"`
}

var invitation = execution.NewForm[Invitation]("Who should join the project?")

// A form with default values and titled options. The defaults are
// suggestions the client fills in; the server validates whatever the
// client sends against the form, and applies no default itself.
func ExampleNewForm() {
	if err := invitation.Err(); err != nil {
		panic(err)
	}
	var schema any
	_ = json.Unmarshal(invitation.Schema(), &schema)
	props := schema.(map[string]any)["properties"].(map[string]any)
	for _, name := range []string{"role", "seats", "notify"} {
		b, _ := json.Marshal(props[name])
		fmt.Printf("%s: %s\n", name, b)
	}

	app := agnara.New("team", nil)
	invite := app.Capability(func(ec *execution.Context) (string, error) {
		in, err := execution.Ask(ec, "invitation", invitation)
		if err != nil {
			return "", err // the question, the first time round
		}
		return fmt.Sprintf("invited %s as %s (%d seat)", in.Email, in.Role, in.Seats), nil
	}, &agnara.CapabilityOptions{Name: "invite", Forms: []agnara.Form{invitation}})
	plans, err := execution.Compile(app)
	if err != nil {
		panic(err)
	}
	p, _ := plans.Plan(invite)

	out, _ := p.Invoke(context.Background(), &execution.Invocation{})
	fmt.Println("asked:", len(out.(*execution.InputRequired).Requests["invitation"].Schema) > 0)

	for _, content := range []string{
		`{"email":"ada@example.com","role":"viewer","seats":1,"notify":"now"}`,
		`{"email":"ada@example.com","role":"Can edit","seats":1,"notify":"now"}`,
	} {
		out, _ = p.Invoke(context.Background(), &execution.Invocation{Answers: map[string]execution.Answer{
			"invitation": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(content)},
		}})
		switch o := out.(type) {
		case execution.Success:
			fmt.Println(o.Value)
		case *execution.Failure:
			fmt.Println(o.Code, o.Message)
		}
	}
	// Output:
	// role: {"default":"viewer","oneOf":[{"const":"viewer","title":"Can view"},{"const":"editor","title":"Can edit"}],"type":"string"}
	// seats: {"default":1,"maximum":10,"minimum":1,"type":"integer"}
	// notify: {"default":"now","enum":["now","later"],"enumNames":["Right away","Tomorrow"],"type":"string"}
	// asked: true
	// invited ada@example.com as viewer (1 seat)
	// invalid_input the answer to "invitation" does not match the requested form: /role: matches none of the allowed alternatives
}
