package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolsUsageMistakes(t *testing.T) {
	t.Setenv("EMPTY_TOKEN", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing command: list or call"},
		{[]string{"lsit"}, "unknown command lsit: want list or call"},
		{[]string{"list"}, "missing URL"},
		{[]string{"list", "ftp://example.com/mcp"}, "ftp://example.com/mcp is not an http(s) URL: give the server's MCP endpoint"},
		{[]string{"list", "127.0.0.1:8080/mcp"}, "is not an http(s) URL"},
		{[]string{"list", "http://a/mcp", "http://b/mcp"}, "too many arguments"},
		{[]string{"call", "http://a/mcp"}, "missing the tool's NAME (run 'agnara tools list http://a/mcp' to see them)"},
		{[]string{"call", "http://a/mcp", "t", "[1]"}, `the arguments [1] are not a JSON object, such as '{"id":"1"}'`},
		{[]string{"call", "http://a/mcp", "t", "-answers", "yes"}, "-answers yes is not a JSON object"},
		{[]string{"list", "http://a/mcp", "-era", "new"}, "-era new: want modern (2026-07-28) or legacy (2025-11-25)"},
		{[]string{"list", "http://a/mcp", "-yes"}, "flag provided but not defined: -yes"},
		{[]string{"list", "http://a/mcp", "-token-env", "EMPTY_TOKEN"}, "the environment variable EMPTY_TOKEN is empty"},
		{[]string{"list", "http://a/mcp", "-client-id", "demo"}, "add -token-url"},
		{[]string{"list", "http://a/mcp", "-token-url", "http://a/token"}, "-token-url needs -client-id"},
		{[]string{"list", "http://a/mcp", "-token-url", "http://a/token", "-client-id", "x", "-client-secret-env", "EMPTY_TOKEN"}, "EMPTY_TOKEN holding the client secret is empty"},
		{[]string{"list", "http://a/mcp", "-token-url", "http://a/token", "-token-env", "X"}, "give one, a token or the client-credentials grant"},
		{[]string{"call", "http://a/mcp", "t\x1b[2J"}, ""}, // reaches the network: below
	} {
		if tc.want == "" {
			continue
		}
		code, out, errOut := tools(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "usage: agnara tools list URL") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if code, out, _ := tools(t, "help"); code != 0 || out != toolsUsage {
		t.Errorf("help: exit %d, %q", code, out)
	}
	if code, out, _ := tools(t, "list", "-h"); code != 0 || out != toolsUsage {
		t.Errorf("list -h: exit %d, %q", code, out)
	}
	if code, out, _ := agnara(time.Time{}, "help"); code != 0 || !strings.Contains(out, "tools      list and call the tools of any MCP server") {
		t.Errorf("agnara help: exit %d, %q", code, out)
	}
}

type askInput struct {
	What string `json:"what,omitempty"`
}

// hostileServer is an MCP server (handshake era) whose texts carry
// terminal escapes, and whose tools ask questions.
func hostileServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "evil\x1b[2J", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name: "shout", Title: "Shout\x1b[31m", Description: "Line one\nline two\x1b]0;pwned\x07",
		InputSchema: map[string]any{"type": "object"},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "plain\nred \x1b[31mtext"}},
			StructuredContent: map[string]any{"name": "\u202eevil"},
		}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks."}, func(ctx context.Context, req *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, any, error) {
		schema := map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []string{"confirm"}}
		msg := "Go ahead?\x1b[2J"
		if in.What == "url" {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in\x1b[2J", URL: "https://auth.example.com/x?\u202eevil", ElicitationID: "e-1"})
			if err != nil {
				return nil, nil, err
			}
			if res.Action == "accept" {
				if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: "e-1"}); err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, map[string]any{"action": res.Action}, nil
		}
		if in.What == "form" {
			schema = map[string]any{"type": "object", "properties": map[string]any{
				"name": map[string]any{"type": "string", "title": "Name"},
				"age":  map[string]any{"type": "integer"},
			}, "required": []string{"name"}}
			msg = "Who are you?"
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, map[string]any{"action": res.Action, "content": res.Content}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestToolsEscapeWhatTheServerSent(t *testing.T) {
	url := hostileServer(t)
	code, out, errOut := tools(t, "list", url, "-era", "legacy")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("list: exit %d, %q %q", code, out, errOut)
	}
	for _, want := range []string{`"evil\x1b[2J 1", protocol 2025-11-25: 2 tools`, `"Shout\x1b[31m"`, `"Line one line two\x1b]0;pwned\a"`} {
		if !strings.Contains(out, want) {
			t.Errorf("list: no %s in\n%s", want, out)
		}
	}
	code, out, errOut = tools(t, "call", url, "shout", "-era", "legacy")
	if code != 0 || strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, "plain\n\"red \\x1b[31mtext\"\n") || !strings.Contains(out, `"name": "\u202eevil"`) {
		t.Errorf("call: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = tools(t, "call", url, "shout", "-era", "legacy", "-json")
	if code != 0 || strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, `\u001b[31m`) {
		t.Errorf("call -json: exit %d, %q", code, out)
	}
}

// TestToolsAskOnATerminal answers the server's questions as a person at a
// terminal would, and by flags as a script would.
func TestToolsAskOnATerminal(t *testing.T) {
	url := hostileServer(t)
	run := func(stdin string, interactive bool, args ...string) (int, string, string) {
		var out, errOut strings.Builder
		tc := &toolsCLI{stdout: &out, stderr: &errOut, stdin: strings.NewReader(stdin), getenv: os.Getenv, interactive: interactive}
		code := tc.run(append(args, "-era", "legacy"))
		return code, out.String(), errOut.String()
	}
	for _, tc := range []struct {
		name, stdin string
		interactive bool
		args        []string
		want        string // in stdout
		prompt      string // in stderr
	}{
		{"confirm yes", "y\n", true, []string{"call", url, "ask"}, `"action": "accept"`, `"Go ahead?\x1b[2J" [y/N] `},
		{"confirm no", "\n", true, []string{"call", url, "ask"}, `"action": "decline"`, "[y/N]"},
		{"confirm at end of input", "", true, []string{"call", url, "ask"}, `"action": "cancel"`, "[y/N]"},
		{"confirm -yes", "", false, []string{"call", url, "ask", "-yes"}, `"confirm": true`, `Confirmed (-yes): "Go ahead?\x1b[2J"`},
		{"confirm, no terminal", "y\n", false, []string{"call", url, "ask"}, `"action": "decline"`, "not a terminal; pass -yes to confirm"},
		{"form", "old\n42\nAda\n", true, []string{"call", url, "ask", `{"what":"form"}`}, `"age": 42`, "age (integer):   want an integer; try again"},
		{"form, required left empty", "\n", true, []string{"call", url, "ask", `{"what":"form"}`}, `"action": "cancel"`, "Name (string, required): "},
		{"form -answers", "", false, []string{"call", url, "ask", `{"what":"form"}`, "-answers", `{"name":"Bo"}`}, `"name": "Bo"`, "Answered the form with -answers"},
		{"url opened", "y\n", true, []string{"call", url, "ask", `{"what":"url"}`}, `"action": "accept"`, "\"Sign in\\x1b[2J\"\nThe server asks you to open this page in your browser:\n  \"https://auth.example.com/x?\\u202eevil\"\nOpen it, then answer: did you open it? [y/N] "},
		{"url not opened", "n\n", true, []string{"call", url, "ask", `{"what":"url"}`}, `"action": "decline"`, "did you open it? [y/N] "},
		{"url at end of input", "", true, []string{"call", url, "ask", `{"what":"url"}`}, `"action": "cancel"`, "did you open it? [y/N] "},
		{"url, no terminal", "y\n", false, []string{"call", url, "ask", `{"what":"url"}`, "-yes"}, `"action": "decline"`, `Declined the server's request to open "https://auth.example.com/x?\u202eevil" (not a terminal): "Sign in\x1b[2J"`},
		{"form, no terminal", "", false, []string{"call", url, "ask", `{"what":"form"}`, "-yes"}, `"action": "decline"`, "pass -answers JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(tc.stdin, tc.interactive, tc.args...)
			if code != 0 || !strings.Contains(out, tc.want) || !strings.Contains(errOut, tc.prompt) {
				t.Errorf("exit %d\nstdout %q, want %q\nstderr %q, want %q", code, out, tc.want, errOut, tc.prompt)
			}
		})
	}
}

func TestSpinner(t *testing.T) {
	var buf mcptest.Buffer
	stop := startSpinner(&buf, "calling x", time.Millisecond, time.Millisecond)
	waitText(t, &buf, " calling x") // drawn once: stop then erases it
	stop()
	stop() // twice is harmless
	got := buf.String()
	if !strings.HasPrefix(got, "\r") || !strings.Contains(got, " calling x") || !strings.HasSuffix(got, strings.Repeat(" ", len("calling x")+2)+"\r") {
		t.Errorf("spinner drew %q", got)
	}
	after := buf.String()
	time.Sleep(5 * time.Millisecond)
	if buf.String() != after {
		t.Errorf("the spinner drew after it was stopped")
	}

	// A call quicker than the delay draws nothing; nor does a stderr that
	// is no terminal.
	var quick mcptest.Buffer
	startSpinner(&quick, "calling", time.Hour, time.Millisecond)()
	off := (&toolsCLI{stderr: &quick}).spin("calling")
	time.Sleep(5 * time.Millisecond)
	off()
	if quick.String() != "" {
		t.Errorf("drew %q", quick.String())
	}
}

// TestToolsServerNotRunning: a server that is not there is named first,
// with what to check, at either era.
func TestToolsServerNotRunning(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/mcp"
	l.Close() // nothing listens there now
	for _, era := range []string{"modern", "legacy"} {
		code, out, errOut := tools(t, "list", url, "-era", era)
		if want := "agnara tools list: cannot reach " + url + ": connection refused; is the server running?\n"; code != 1 || out != "" || errOut != want {
			t.Errorf("%s: exit %d, %q %q; want %q", era, code, out, errOut, want)
		}
	}
	code, _, errOut := tools(t, "call", "http://no-such-host.invalid/mcp", "x")
	if code != 1 || !strings.HasPrefix(errOut, "agnara tools call: cannot reach http://no-such-host.invalid/mcp: no such host no-such-host.invalid; check the URL") {
		t.Errorf("unknown host: exit %d, %q", code, errOut)
	}
}
