package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/proctest"
	"golang.org/x/oauth2"
)

// tools runs `agnara tools args...` in this process, as main does (stderr
// is no terminal: no spinner, no questions).
func tools(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return agnara(time.Time{}, append([]string{"tools"}, args...)...)
}

// startUsers builds and starts the users example with extra flags and
// returns its MCP URL.
func startUsers(t *testing.T, args ...string) string {
	t.Helper()
	return proctest.Start(t, proctest.Build(t, "../../examples/users"), append([]string{"-addr", "127.0.0.1:0"}, args...)...)
}

// TestToolsAgainstUsers lists and calls the users example's tools at both
// eras, as the getting-started guide does.
func TestToolsAgainstUsers(t *testing.T) {
	url := startUsers(t, "-dev-scopes", "users:read users:write users:admin")
	for _, era := range []struct{ flag, version string }{{"modern", "2026-07-28"}, {"legacy", "2025-11-25"}} {
		t.Run(era.flag, func(t *testing.T) {
			code, out, errOut := tools(t, "list", url, "-era", era.flag)
			if code != 0 || errOut != "" {
				t.Fatalf("list: exit %d, %q", code, errOut)
			}
			for _, want := range []string{
				"users 0.1.0, protocol " + era.version + ": 4 tools\n",
				"NAME ", "users.get_user ", "Get user", "read-only,idempotent", "Look up one user by id.",
				"users.delete_user ", "destructive,idempotent",
				"VIEW ", " ui://users.get_user ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("list: no %q in\n%s", want, out)
				}
			}
			// The view users.get_user links: no CSP, then the page.
			code, out, errOut = agnara(time.Time{}, "resources", "read", url, "ui://users.get_user", "-era", era.flag)
			if code != 0 || !strings.HasPrefix(out, "[MCP App view ui://users.get_user]\n[csp: none, the page may reach no other origin]\n<!doctype html>\n") {
				t.Errorf("resources read of the view: exit %d, %q\n%.300s", code, errOut, out)
			}

			code, out, errOut = tools(t, "call", url, "users.create_user", `{"name":"Ada `+era.flag+`","email":"ada-`+era.flag+`@example.com"}`, "-era", era.flag)
			if code != 0 || !strings.Contains(out, `"name": "Ada `+era.flag+`"`) || strings.Count(out, "Ada") != 1 {
				t.Fatalf("call create_user: exit %d, %q %q", code, out, errOut)
			}
			var created struct {
				Result struct{ ID string } `json:"result"`
			}
			if err := json.Unmarshal([]byte(out), &created); err != nil || created.Result.ID == "" {
				t.Fatalf("the structured content printed is not the JSON result: %v\n%s", err, out)
			}

			// -json: the raw result, which parses.
			code, out, _ = tools(t, "call", "-json", "-era", era.flag, url, "users.get_user", `{"id":"`+created.Result.ID+`"}`)
			var res struct {
				IsError           bool
				StructuredContent struct{ Result map[string]any } `json:"structuredContent"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.IsError || res.StructuredContent.Result["email"] != "ada-"+era.flag+"@example.com" {
				t.Errorf("call -json: exit %d\n%s", code, out)
			}
			code, out, _ = tools(t, "list", url, "-json", "-era", era.flag)
			var list struct{ Tools []struct{ Name string } }
			if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Tools) != 4 {
				t.Errorf("list -json: exit %d\n%s", code, out)
			}

			// A failure: exit 1, the canonical code on stderr.
			code, out, errOut = tools(t, "call", url, "users.get_user", `{"id":"nobody"}`, "-era", era.flag)
			if code != 1 || out != "" || errOut != "agnara tools call: users.get_user failed: not_found: no user with this id\n" {
				t.Errorf("call of a missing user: exit %d, %q %q", code, out, errOut)
			}
			code, out, _ = tools(t, "call", url, "users.get_user", `{"id":"nobody"}`, "-era", era.flag, "-json")
			if code != 1 || !strings.Contains(out, `"isError": true`) || !strings.Contains(out, `not_found`) {
				t.Errorf("call -json of a missing user: exit %d, %q", code, out)
			}

			// A confirmation: declined without a terminal, accepted with -yes.
			code, _, errOut = tools(t, "call", url, "users.delete_user", `{"id":"`+created.Result.ID+`"}`, "-era", era.flag)
			if code != 1 || !strings.Contains(errOut, "Declined the server's confirmation (not a terminal; pass -yes to confirm): Delete this user?") ||
				!strings.Contains(errOut, "users.delete_user failed: forbidden: the caller declined the confirmation") {
				t.Errorf("delete without -yes: exit %d, %q", code, errOut)
			}
			if code, _, _ := tools(t, "call", url, "users.get_user", `{"id":"`+created.Result.ID+`"}`, "-era", era.flag); code != 0 {
				t.Errorf("the user is gone although the confirmation was declined")
			}
			code, out, errOut = tools(t, "call", url, "users.delete_user", `{"id":"`+created.Result.ID+`"}`, "-era", era.flag, "-yes")
			if code != 0 || !strings.Contains(errOut, "Confirmed (-yes): Delete this user?") || !strings.Contains(out, `"result": null`) {
				t.Errorf("delete -yes: exit %d, %q %q", code, out, errOut)
			}
			if code, _, errOut := tools(t, "call", url, "users.get_user", `{"id":"`+created.Result.ID+`"}`, "-era", era.flag); code != 1 || !strings.Contains(errOut, "not_found") {
				t.Errorf("the user is still there after delete -yes: %d %q", code, errOut)
			}
			if strings.Contains(errOut, "\r") {
				t.Errorf("a spinner on a stderr that is no terminal: %q", errOut)
			}
		})
	}
	// An unknown tool is a protocol error: exit 1, named.
	if code, _, errOut := tools(t, "call", url, "users.nope"); code != 1 || !strings.Contains(errOut, `unknown tool "users.nope"`) {
		t.Errorf("unknown tool: exit %d, %q", code, errOut)
	}
}

// TestToolsWithOAuth lists and calls the users example's tools with a
// token from examples/devissuer: the client-credentials grant, and a token
// in an environment variable.
func TestToolsWithOAuth(t *testing.T) {
	issuer := proctest.Start(t, proctest.Build(t, "../../examples/devissuer"), "-addr", "127.0.0.1:0")
	url := startUsers(t, "-issuer", issuer)
	tokenURL := issuer + "/token"
	t.Setenv("AGNARA_CLIENT_SECRET", "demo-secret")
	t.Setenv("AGNARA_TOKEN", "")

	code, _, errOut := tools(t, "list", url)
	if code != 1 || !strings.Contains(errOut, "HTTP 401 Unauthorized") || !strings.Contains(errOut, "-token-url with -client-id") {
		t.Errorf("list without a token: exit %d, %q", code, errOut)
	}
	for _, era := range []string{"modern", "legacy"} {
		code, out, errOut := tools(t, "list", url, "-era", era, "-token-url", tokenURL, "-client-id", "demo", "-scope", "users:read")
		if code != 0 || !strings.Contains(out, ": 2 tools\n") || !strings.Contains(out, "users.list_users") || strings.Contains(out, "users.delete_user") {
			t.Errorf("%s list with users:read: exit %d, %q %q", era, code, out, errOut)
		}
		code, out, errOut = tools(t, "call", url, "users.list_users", "-era", era, "-token-url", tokenURL, "-client-id", "demo", "-scope", "users:read")
		if code != 0 || !strings.Contains(out, `"result": []`) {
			t.Errorf("%s call with users:read: exit %d, %q %q", era, code, out, errOut)
		}
		code, _, errOut = tools(t, "call", url, "users.delete_user", `{"id":"1"}`, "-era", era, "-token-url", tokenURL, "-client-id", "demo", "-scope", "users:read")
		if code != 1 || !strings.Contains(errOut, `HTTP 403 Forbidden; WWW-Authenticate: Bearer error="insufficient_scope", scope="users:admin"`) || !strings.Contains(errOut, "with -scope") {
			t.Errorf("%s call beyond the token's scopes: exit %d, %q", era, code, errOut)
		}
	}

	t.Setenv("AGNARA_CLIENT_SECRET", "wrong")
	code, _, errOut = tools(t, "list", url, "-token-url", tokenURL, "-client-id", "demo")
	if code != 1 || !strings.Contains(errOut, "invalid_client") || !strings.Contains(errOut, "check -client-id") {
		t.Errorf("a wrong secret: exit %d, %q", code, errOut)
	}

	// A token from the environment, as a script that got one elsewhere.
	token := devToken(t, tokenURL, url)
	t.Setenv("USERS_TOKEN", token)
	code, out, errOut := tools(t, "call", url, "users.list_users", "-token-env", "USERS_TOKEN", "-era", "legacy")
	if code != 0 || !strings.Contains(out, `"result": []`) {
		t.Errorf("call with -token-env: exit %d, %q %q", code, out, errOut)
	}
	t.Setenv("AGNARA_TOKEN", token)
	if code, out, errOut := tools(t, "list", url); code != 0 || !strings.Contains(out, "users.get_user") {
		t.Errorf("list with AGNARA_TOKEN: exit %d, %q %q", code, out, errOut)
	}
}

// devToken gets an access token for resource from devissuer by hand.
func devToken(t *testing.T, tokenURL, resource string) string {
	t.Helper()
	t.Setenv("AGNARA_CLIENT_SECRET", "demo-secret")
	cc := toolsFlags{tokenURL: tokenURL, clientID: "demo", secret: "AGNARA_CLIENT_SECRET", scope: "users:read"}
	tc := &toolsCLI{getenv: os.Getenv}
	hc, err := tc.httpClient(t.Context(), &cc, resource, &challengeRecorder{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := hc.Transport.(*oauth2.Transport).Source.Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// TestToolsThroughGateway lists and calls, through `agnara gateway`, the
// users example's read tools imported over HTTP.
func TestToolsThroughGateway(t *testing.T) {
	users := startUsers(t)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	os.WriteFile(cfg, []byte(`listen: 127.0.0.1:0
auth:
  development: {scopes: [directory:read]}
upstreams:
  - name: directory
    http: {url: `+users+`}
    tools:
      - {remote: users.get_user, name: get_user, title: Get a user, scopes: [directory:read]}
      - {remote: users.list_users, name: list_users, title: List the users, scopes: [directory:read]}
`), 0o644)
	if code, out, errOut := agnara(time.Time{}, "gateway", "accept", "-config", cfg); code != 0 {
		t.Fatalf("accept: exit %d, %q %q", code, out, errOut)
	}
	gw := proctest.StartCmd(t, proctest.Build(t, "."), "gateway", "-config", cfg).URL
	for _, era := range []string{"modern", "legacy"} {
		code, out, errOut := tools(t, "list", gw, "-era", era)
		if code != 0 || !strings.Contains(out, ": 2 tools\n") || !strings.Contains(out, "gateway.get_user ") || !strings.Contains(out, "List the users") {
			t.Errorf("%s list through the gateway: exit %d, %q %q", era, code, out, errOut)
		}
		code, out, errOut = tools(t, "call", gw, "gateway.list_users", "-era", era)
		if code != 0 || !strings.Contains(out, `"result": []`) {
			t.Errorf("%s call through the gateway: exit %d, %q %q", era, code, out, errOut)
		}
		// The gateway answers a remote tool's failure with its own
		// canonical one, reason and all.
		code, _, errOut = tools(t, "call", gw, "gateway.get_user", `{"id":"nobody"}`, "-era", era)
		if code != 1 || !strings.Contains(errOut, "gateway.get_user failed: unavailable (mcp_tool_error): the remote tool reported an error\n") {
			t.Errorf("%s failure through the gateway: exit %d, %q", era, code, errOut)
		}
	}
}
