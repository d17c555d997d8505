package mcpexpose_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/peers"
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

// TestUnexpectedInputResponses follows the 2026-07-28 revision (MRTR,
// Error Handling): a server SHOULD ignore information in inputResponses it
// does not recognize or need. Answers no sealed question vouches for may
// still answer a form the handler asks in that round; they never answer a
// confirmation, and the sealed state keeps its single use.
func TestUnexpectedInputResponses(t *testing.T) {
	var greeted atomic.Int32
	h, err := mcpexpose.NewHandler(formApp(t, &greeted), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	accept := func(content map[string]any) map[string]any {
		return map[string]any{"action": "accept", "content": content}
	}
	alice := accept(map[string]any{"name": "Alice"})
	extra := map[string]any{"unknown_extra_key": accept(map[string]any{"foo": "bar"}), "another_unexpected": accept(map[string]any{"baz": 123})}
	with := func(base map[string]any, more ...map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for _, m := range more {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		args      map[string]any
		responses map[string]any
		// want: the text of a complete result, "ask:<keys>" for an
		// input-required result asking those keys, or "fail:<code>".
		want string
	}{
		{"answer without state", nil, map[string]any{"user_name": alice}, `{"result":"Hello, Alice!"}`},
		{"answer and unknown keys without state", nil, with(map[string]any{"user_name": alice}, extra), `{"result":"Hello, Alice!"}`},
		{"unknown keys only", nil, extra, "ask:user_name"},
		{"an answer of the wrong kind", nil, map[string]any{"user_name": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Alice"}, "model": "m"}}, "ask:user_name"},
		{"an answer that does not fit the form", nil, map[string]any{"user_name": accept(map[string]any{"name": ""})}, "fail:invalid_input"},
		{"a declined answer", nil, map[string]any{"user_name": map[string]any{"action": "decline"}}, "fail:forbidden"},
		{"a confirmation without state is asked", map[string]any{"confirm": true}, map[string]any{"user_name": alice, "sure": accept(map[string]any{"confirm": true})}, "ask:sure"},
		{"the declared confirmation key without state means nothing", nil, with(map[string]any{"user_name": alice}, map[string]any{execution.ConfirmKey: accept(map[string]any{"confirm": true})}), `{"result":"Hello, Alice!"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := greeted.Load()
			msg := rawCall(t, url, "", "team.greet", tc.args, map[string]any{"inputResponses": tc.responses})
			got := outcomeOf(t, msg)
			if got != tc.want {
				t.Errorf("outcome = %s, want %s (%v)", got, tc.want, msg)
			}
			if ran := greeted.Load() != before; ran != strings.HasPrefix(tc.want, `{"result"`) {
				t.Errorf("handler finished = %v", ran)
			}
		})
	}

	t.Run("no default is filled in by the server", func(t *testing.T) {
		msg := rawCall(t, url, "", "team.invite", nil, map[string]any{"inputResponses": map[string]any{"invite": accept(map[string]any{"email": "ada@example.com"})}})
		if got, want := outcomeOf(t, msg), `{"result":"{Email:ada@example.com Role: Seats:0 Notify: Public:false Extras:[]}"}`; got != want {
			t.Errorf("outcome = %s, want %s", got, want)
		}
	})

	t.Run("extra keys beside sealed state", func(t *testing.T) {
		args := map[string]any{"confirm": true}
		state := stateOf(t, rawCall(t, url, "", "team.greet", args, nil))
		msg := rawCall(t, url, "", "team.greet", args, map[string]any{"requestState": state, "inputResponses": with(map[string]any{"user_name": alice}, extra)})
		if got := outcomeOf(t, msg); got != "ask:sure" {
			t.Fatalf("second round = %s, want the confirmation asked (%v)", got, msg)
		}
		// The confirmation, answered under the state that asked it, counts.
		next := stateOf(t, msg)
		final := rawCall(t, url, "", "team.greet", args, map[string]any{"requestState": next, "inputResponses": with(map[string]any{"user_name": alice, "sure": accept(map[string]any{"confirm": true})}, extra)})
		if got := outcomeOf(t, final); got != `{"result":"Hello, Alice!"}` {
			t.Fatalf("third round = %s (%v)", got, final)
		}
		// Unsolicited answers do not make sealed state reusable.
		replay := rawCall(t, url, "", "team.greet", args, map[string]any{"requestState": next, "inputResponses": with(map[string]any{"user_name": alice, "sure": accept(map[string]any{"confirm": true})})})
		if e, _ := replay["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
			t.Errorf("replayed state = %v, want -32602", replay)
		}
	})
}

// outcomeOf summarizes a tools/call response for TestUnexpectedInputResponses.
func outcomeOf(t *testing.T, msg map[string]any) string {
	t.Helper()
	if e, ok := msg["error"].(map[string]any); ok {
		return fmt.Sprintf("error:%v", e["code"])
	}
	res, _ := msg["result"].(map[string]any)
	if res["resultType"] == "input_required" {
		reqs, _ := res["inputRequests"].(map[string]any)
		keys := make([]string, 0, len(reqs))
		for k := range reqs {
			keys = append(keys, k)
		}
		return "ask:" + strings.Join(keys, ",")
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		return fmt.Sprint(res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	if res["isError"] == true {
		var f struct{ Code string }
		_ = json.Unmarshal([]byte(text), &f)
		return "fail:" + f.Code
	}
	return text
}

// TestTypeScriptClientAnswersAFormWithDefaults has the TypeScript SDK
// client (handshake era) take the invite form, legacy enumNames and
// defaults included, and answer only two fields. That client applies no
// defaults (it does not declare elicitation.form.applyDefaults), but on a
// handshake-era session the Go SDK's ServerSession.Elicit fills in the
// defaults of the optional fields an accepted answer left out, before
// agnara sees the answer. agnara applies none itself (at 2026-07-28 the
// answer arrives as sent); this test pins the SDK's behaviour, so that a
// bump that changes it is noticed and docs/capabilities.md updated.
func TestTypeScriptClientAnswersAFormWithDefaults(t *testing.T) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	var greeted atomic.Int32
	h, err := mcpexpose.NewHandler(formApp(t, &greeted), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	out, err := exec.Command(node, filepath.Join("..", "conformance", "ts-client.mjs"), url, "team.invite", "{}", `[{"email":"ada@example.com","notify":"now"}]`).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	var got struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Elicited        []string `json:"elicited"`
		Result          struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Result.Content) == 0 {
		t.Fatalf("TypeScript client printed %q", out)
	}
	want := `{"result":"{Email:ada@example.com Role:viewer Seats:2 Notify:now Public:true Extras:[]}"}`
	if got.ProtocolVersion != "2025-11-25" || got.Result.IsError || got.Result.Content[0].Text != want || len(got.Elicited) != 1 {
		t.Errorf("version %s, elicited %q, result %s (error %v)\nwant %s", got.ProtocolVersion, got.Elicited, got.Result.Content[0].Text, got.Result.IsError, want)
	}
}
