package execution_test

import (
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
)

// TestCheckURL: a URL question sends the user only to an absolute https
// URL (http only to a loopback host), without user information, of at
// most 4 KiB; each refusal says which rule the URL broke.
func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string // "" for valid, else a word of the error
	}{
		{"https://auth.example.com/sign-in?state=abc", ""},
		{"HTTPS://auth.example.com/", ""},
		{"http://localhost:8080/cb", ""},
		{"http://127.0.0.1/x", ""},
		{"http://127.9.9.9/x", ""},
		{"http://[::1]:9/x", ""},
		{"http://example.com/x", "loopback"},
		{"http://localhost.example.com/x", "loopback"},
		{"/relative/path", "absolute"},
		{"auth.example.com/x", "absolute"},
		{"mailto:user@example.com", "absolute"},
		{"javascript:alert(1)", "absolute"},
		{"ftp://example.com/x", "scheme"},
		{"file:///etc/passwd", "host"},
		{"https://user:pw@example.com/", "user information"},
		{"https://user@example.com/", "user information"},
		{"https:///nohost", "host"},
		{"https://example.com/\x00", "parse"},
		{"https://example.com/" + strings.Repeat("a", 4<<10), "at most 4096"},
		{"", "absolute"},
	} {
		t.Run(tc.url[:min(len(tc.url), 40)], func(t *testing.T) {
			err := execution.CheckURL(tc.url)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckURL = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("CheckURL = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// urlPlan asks to open url under "signin", then reports it done; done
// records the keys the adapter was told of.
func urlPlan(t *testing.T, url string) *execution.Plan {
	t.Helper()
	app := agnara.New("app", nil)
	c := app.Capability(func(ec *execution.Context) (string, error) {
		if err := ec.AskURL("signin", "Sign in to Example", url); err != nil {
			return "", err
		}
		if err := ec.URLDone("signin"); err != nil {
			return "", err
		}
		return "signed in", nil
	}, &agnara.CapabilityOptions{Name: "signin"})
	return compileOne(t, app, c)
}

// TestAskURL: the question is asked with its URL, answered only by an
// answer to the question as asked, of its kind; accept goes on (and
// URLDone tells the adapter the key), decline and cancel end the call
// forbidden, and a URL outside the rules is never shown.
func TestAskURL(t *testing.T) {
	const url = "https://auth.example.com/start?flow=7"
	p := urlPlan(t, url)
	out, err := p.Invoke(bg, &execution.Invocation{})
	ir, ok := out.(*execution.InputRequired)
	if err != nil || !ok {
		t.Fatalf("first round: %#v, %v", out, err)
	}
	want := map[string]execution.InputRequest{"signin": {Kind: execution.URLElicitation, Message: "Sign in to Example", URL: url}}
	if diff := cmp.Diff(want, ir.Requests); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	answer := func(kind execution.InputKind, action string) map[string]execution.Answer {
		return map[string]execution.Answer{"signin": {Kind: kind, Action: action}}
	}
	for _, tc := range []struct {
		name        string
		inv         execution.Invocation
		want        string // a success's value, "asks" or a failure's code
		wantToldFor []string
	}{
		{"accept", execution.Invocation{Answers: answer(execution.URLElicitation, "accept")}, "signed in", []string{"signin"}},
		{"decline", execution.Invocation{Answers: answer(execution.URLElicitation, "decline")}, string(execution.Forbidden), nil},
		{"cancel", execution.Invocation{Answers: answer(execution.URLElicitation, "cancel")}, string(execution.Forbidden), nil},
		{"no action", execution.Invocation{Answers: answer(execution.URLElicitation, "")}, string(execution.InvalidInput), nil},
		{"a form's answer", execution.Invocation{Answers: answer(execution.Elicitation, "accept")}, "asks", nil},
		{"unsolicited", execution.Invocation{Unsolicited: answer(execution.URLElicitation, "accept")}, "asks", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var told []string
			inv := tc.inv
			inv.URLDone = func(key string) { told = append(told, key) }
			out, err := p.Invoke(bg, &inv)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch o := out.(type) {
			case execution.Success:
				got, _ = o.Value.(string)
			case *execution.InputRequired:
				got = "asks"
			case *execution.Failure:
				got = string(o.Code)
			}
			if got != tc.want {
				t.Errorf("outcome %#v, want %s", out, tc.want)
			}
			if diff := cmp.Diff(tc.wantToldFor, told); diff != "" {
				t.Errorf("URLDone told (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("accept without an adapter that tells", func(t *testing.T) {
		s := invokeOK(t, p, &execution.Invocation{Answers: answer(execution.URLElicitation, "accept")})
		if s.Value != "signed in" {
			t.Errorf("got %v", s.Value)
		}
	})
	for _, bad := range []string{"http://example.com/x", "https://u:p@example.com/", "ftp://example.com/"} {
		t.Run("refused "+bad, func(t *testing.T) {
			out, err := urlPlan(t, bad).Invoke(bg, &execution.Invocation{})
			mustFailure(t, out, err, execution.InternalFailure)
		})
	}
}

// TestURLDoneNeedsAnAcceptedURLQuestion: URLDone refuses a key with no
// accepted URL question, and tells the adapter nothing.
func TestURLDoneNeedsAnAcceptedURLQuestion(t *testing.T) {
	app := agnara.New("app", nil)
	var got error
	c := app.Capability(func(ec *execution.Context) (string, error) {
		got = ec.URLDone("signin")
		return "ok", nil
	}, &agnara.CapabilityOptions{Name: "done"})
	p := compileOne(t, app, c)
	for _, tc := range []struct {
		name    string
		answers map[string]execution.Answer
	}{
		{"never asked", nil},
		{"declined", map[string]execution.Answer{"signin": {Kind: execution.URLElicitation, Action: "decline"}}},
		{"a form", map[string]execution.Answer{"signin": {Kind: execution.Elicitation, Action: "accept"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			told := false
			invokeOK(t, p, &execution.Invocation{Answers: tc.answers, URLDone: func(string) { told = true }})
			if got == nil || !strings.Contains(got.Error(), `no accepted URL question under "signin"`) {
				t.Errorf("URLDone = %v", got)
			}
			if told {
				t.Error("the adapter was told")
			}
		})
	}
}

// TestRelayURLElicitation: a relayed URL question passes the same checks
// as AskURL, and its answer, a decline too, is the handler's.
func TestRelayURLElicitation(t *testing.T) {
	q := execution.InputRequest{Kind: execution.URLElicitation, Message: "Sign in upstream", URL: "https://up.example.com/auth"}
	p := relayPlan(t, q)
	out, err := p.Invoke(bg, &execution.Invocation{})
	ir, ok := out.(*execution.InputRequired)
	if err != nil || !ok {
		t.Fatalf("first round: %#v, %v", out, err)
	}
	if diff := cmp.Diff(map[string]execution.InputRequest{"up": q}, ir.Requests); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	s := invokeOK(t, p, &execution.Invocation{Answers: map[string]execution.Answer{"up": {Kind: execution.URLElicitation, Action: "decline"}}, RoundState: ir.RoundState})
	if want := `+1 {"Kind":"url_elicitation","Action":"decline","Content":null,"Sampling":null,"Roots":null}`; s.Value != want {
		t.Errorf("got %v, want %s", s.Value, want)
	}
	for _, bad := range []execution.InputRequest{
		{Kind: execution.URLElicitation, Message: "x", URL: "http://evil.example.com/"},
		{Kind: execution.URLElicitation, URL: "https://up.example.com/auth"},
	} {
		out, err := relayPlan(t, bad).Invoke(bg, &execution.Invocation{})
		mustFailure(t, out, err, execution.InternalFailure)
	}
}
