package mcpexpose_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Invite is a form with a default on every optional field, a titled single
// select, a legacy-titled one (enumnames) and a titled multi-select.
type Invite struct {
	Email  string   `json:"email" jsonschema:"format=email"`
	Role   string   `json:"role,omitempty" jsonschema:"enum=viewer,enum=editor,default=viewer" enumtitles:"Can view,Can edit"`
	Seats  int      `json:"seats,omitempty" jsonschema:"minimum=1,default=2"`
	Notify string   `json:"notify,omitempty" jsonschema:"enum=now,enum=later,default=later" enumnames:"Right away,Tomorrow"`
	Public bool     `json:"public,omitempty" jsonschema:"default=true"`
	Extras []string `json:"extras,omitempty" jsonschema:"enum=wiki,enum=chat" enumtitles:"Wiki,Chat"`
}

var inviteForm = execution.NewForm[Invite]("Who should join?")

// formApp serves team.invite, which asks inviteForm, and team.greet, which
// asks one name (like the conformance suite's user_name question) and then,
// if asked to, confirms.
func formApp(t testing.TB, greeted *atomic.Int32) *mcpexpose.Snapshot {
	t.Helper()
	type NameForm struct {
		Name string `json:"name" jsonschema:"minLength=1"`
	}
	type GreetIn struct {
		Confirm bool `json:"confirm,omitempty"`
	}
	nameForm := execution.NewForm[NameForm]("What is your name?")
	app := agnara.New("team", nil)
	invite := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "invite", inviteForm)
		return fmt.Sprintf("%+v", v), err
	}, &agnara.CapabilityOptions{Name: "invite", Description: "Invite someone.", Forms: []agnara.Form{inviteForm}})
	greet := app.Capability(func(ec *execution.Context, in GreetIn) (string, error) {
		v, err := execution.Ask(ec, "user_name", nameForm)
		if err != nil {
			return "", err
		}
		if in.Confirm {
			ok, err := ec.Confirm("sure", "Greet "+v.Name+"?")
			if err != nil {
				return "", err
			}
			if !ok {
				return "not greeted", nil
			}
		}
		greeted.Add(1)
		return "Hello, " + v.Name + "!", nil
	}, &agnara.CapabilityOptions{Name: "greet", Description: "Greet someone.", Forms: []agnara.Form{nameForm}})
	exp := mcpexpose.New(app)
	exp.Tool(invite, nil)
	exp.Tool(greet, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestFormWithDefaultsOverEveryRevision has the Go SDK client answer a form
// with only the one field it requires, at each revision. The client SDK
// fills in the defaults it was sent (the server applies none), so what the
// handler gets shows which defaults each revision carries; the schema the
// client saw shows how each revision titles options.
func TestFormWithDefaultsOverEveryRevision(t *testing.T) {
	var greeted atomic.Int32
	h, err := mcpexpose.NewHandler(formApp(t, &greeted), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	const (
		oneOfRole    = `"role":{"type":"string","default":"viewer","oneOf":[{"const":"viewer","title":"Can view"},{"const":"editor","title":"Can edit"}]}`
		oneOfNotify  = `"notify":{"type":"string","oneOf":[{"const":"now","title":"Right away"},{"const":"later","title":"Tomorrow"}],"default":"later"}`
		legacyNotify = `"notify":{"type":"string","enum":["now","later"],"default":"later","enumNames":["Right away","Tomorrow"]}`
		extras       = `"extras":{"type":"array","items":{"anyOf":[{"const":"wiki","title":"Wiki"},{"const":"chat","title":"Chat"}]}}`
	)
	for _, tc := range []struct {
		era, version string
		schema       string
		got          string
	}{
		{"2026-07-28", "",
			`{"type":"object","properties":{"email":{"type":"string","format":"email"},` + oneOfRole + `,"seats":{"type":"integer","minimum":1,"default":2},` + oneOfNotify + `,"public":{"type":"boolean","default":true},` + extras + `},"required":["email"]}`,
			`{Email:ada@example.com Role:viewer Seats:2 Notify:later Public:true Extras:[]}`},
		{"2025-11-25", "2025-11-25",
			`{"type":"object","properties":{"email":{"type":"string","format":"email"},` + oneOfRole + `,"seats":{"type":"integer","minimum":1,"default":2},` + legacyNotify + `,"public":{"type":"boolean","default":true},` + extras + `},"required":["email"]}`,
			`{Email:ada@example.com Role:viewer Seats:2 Notify:later Public:true Extras:[]}`},
		// 2025-06-18 knows only enumNames titles and boolean defaults.
		{"2025-06-18", "2025-06-18",
			`{"type":"object","properties":{"email":{"type":"string","format":"email"},"role":{"type":"string","enum":["viewer","editor"],"enumNames":["Can view","Can edit"]},"seats":{"type":"integer","minimum":1},"notify":{"type":"string","enum":["now","later"],"enumNames":["Right away","Tomorrow"]},"public":{"type":"boolean","default":true},` + extras + `},"required":["email"]}`,
			`{Email:ada@example.com Role: Seats:0 Notify: Public:true Extras:[]}`},
	} {
		t.Run(tc.era, func(t *testing.T) {
			var seen []byte
			cs := connect(t, url, "", tc.version, elicit(func(r *mcp.ElicitRequest) *mcp.ElicitResult {
				seen, _ = json.Marshal(r.Params.RequestedSchema)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"email": "ada@example.com", "extras": []any{}}}
			}))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "team.invite"})
			if err != nil || res.IsError {
				t.Fatalf("invite = %+v, %v", res, err)
			}
			if got := textOf(t, res); got != `{"result":"`+tc.got+`"}` {
				t.Errorf("handler got %s\nwant %s", got, tc.got)
			}
			if diff := cmp.Diff(canonical(t, tc.schema), canonical(t, string(seen))); diff != "" {
				t.Errorf("requested schema (-want +got):\n%s", diff)
			}
			if !strings.Contains(string(seen), `"email"`) || strings.Index(string(seen), `"email"`) > strings.Index(string(seen), `"extras"`) {
				t.Errorf("fields lost their order: %s", seen)
			}
		})
	}
}

// canonical re-encodes JSON with sorted keys, so that schemas compare by
// meaning, not by the order of keywords inside a field.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
