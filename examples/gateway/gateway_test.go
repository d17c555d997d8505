package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

func connect(t *testing.T, url string, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func structured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// createUser creates a user on the upstream directly and returns its
// structured result ({"result": user}).
func createUser(t *testing.T, upstream *mcp.ClientSession, name string) (id, user string) {
	t.Helper()
	res := callTool(t, upstream, "users.create_user", `{"name":"`+name+`","email":"`+strings.ToLower(name)+`@example.com"}`)
	if res.IsError {
		t.Fatalf("create_user: %+v", res.Content)
	}
	var out struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(structured(t, res)), &out)
	return out.Result.ID, structured(t, res)
}

// TestGatewayServesTheUsersExample starts the users example and the gateway
// as a user would, and has the Go SDK client call the users example's tools
// through the gateway, with the gateway importing at each protocol era.
func TestGatewayServesTheUsersExample(t *testing.T) {
	usersURL := proctest.Start(t, proctest.Build(t, "../users"), "-addr", "127.0.0.1:0", "-dev-scopes", "users:read users:write")
	upstream := connect(t, usersURL, nil)
	id, user := createUser(t, upstream, "Ada")
	gatewayBin := proctest.Build(t, ".")

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			gwURL := proctest.Start(t, gatewayBin, "-addr", "127.0.0.1:0", "-upstream", usersURL, "-upstream-protocol", version)
			gw := connect(t, gwURL, nil)

			list, err := gw.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, []string{"directory.get_user", "directory.list_users"}) {
				t.Errorf("gateway tools = %v, want only the two bound read tools", names)
			}

			res := callTool(t, gw, "directory.get_user", `{"id":"`+id+`"}`)
			if res.IsError {
				t.Fatalf("get_user through the gateway: %+v", res.Content[0])
			}
			// {"result": {"text": [...], "structured": <the upstream's structured result>}}
			var env struct {
				Result struct {
					Text       []string        `json:"text"`
					Structured json.RawMessage `json:"structured"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(structured(t, res)), &env); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, string(env.Result.Structured), user) || len(env.Result.Text) != 1 {
				t.Errorf("through the gateway: %s, want the users example's %s", structured(t, res), user)
			}

			res = callTool(t, gw, "directory.list_users", `{"limit":5}`)
			if res.IsError || !strings.Contains(structured(t, res), `"name":"Ada"`) {
				t.Errorf("list_users through the gateway: %s", structured(t, res))
			}

			// The gateway's own argument-level check.
			res = callTool(t, gw, "directory.get_user", `{"id":"admin"}`)
			if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"reason":"mcp_scope_denied"`) {
				t.Errorf("admin lookup: %+v", res.Content[0])
			}
			// An upstream domain failure is not passed through in the upstream's words.
			res = callTool(t, gw, "directory.get_user", `{"id":"999"}`)
			if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, `"reason":"mcp_tool_error"`) || strings.Contains(text, "no user with this id") {
				t.Errorf("missing user: %s", text)
			}

			// The bound resource template and prompt, at their local URI and name.
			ctx := context.Background()
			tmpls, err := gw.ListResourceTemplates(ctx, nil)
			if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != "directory://users/{id}" {
				t.Errorf("resources/templates/list: %+v, %v", tmpls, err)
			}
			read, err := gw.ReadResource(ctx, &mcp.ReadResourceParams{URI: "directory://users/" + id})
			if err != nil || len(read.Contents) != 1 || read.Contents[0].URI != "directory://users/"+id ||
				read.Contents[0].MIMEType != "application/json" || !strings.Contains(read.Contents[0].Text, `"name":"Ada"`) {
				t.Errorf("read directory://users/%s: %+v, %v", id, read, err)
			}
			for _, uri := range []string{"directory://users/nobody", "users://" + id} {
				if _, err := gw.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "Resource not found") {
					t.Errorf("read %s: %v, want Resource not found", uri, err)
				}
			}
			prompt, err := gw.GetPrompt(ctx, &mcp.GetPromptParams{Name: "directory.welcome_user", Arguments: map[string]string{"id": id}})
			if err != nil || len(prompt.Messages) != 1 || !strings.Contains(prompt.Messages[0].Content.(*mcp.TextContent).Text, "Ada") {
				t.Errorf("directory.welcome_user: %+v, %v", prompt, err)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// TestGatewayUsesItsOwnCredentials puts the users example behind the
// development issuer and a recording proxy: the gateway reaches it with its
// own client-credentials token, never with the token its caller sent.
func TestGatewayUsesItsOwnCredentials(t *testing.T) {
	issuerURL := proctest.Start(t, proctest.Build(t, "../devissuer"), "-addr", "127.0.0.1:0")
	usersURL := proctest.Start(t, proctest.Build(t, "../users"), "-addr", "127.0.0.1:0", "-issuer", issuerURL)

	// The test's own writer token, to create a user upstream.
	writer := (&clientcredentials.Config{ClientID: "demo", ClientSecret: "demo-secret", TokenURL: issuerURL + "/token",
		Scopes: []string{"users:write"}, EndpointParams: url.Values{"resource": {usersURL}}}).Client(context.Background())
	id, user := createUser(t, connect(t, usersURL, writer), "Grace")

	// The proxy records the Authorization header of every upstream request.
	target, _ := url.Parse(usersURL)
	var (
		mu   sync.Mutex
		seen []string
	)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close) // after the gateway stops (cleanups run last-in first-out)

	t.Setenv("GATEWAY_UPSTREAM_CLIENT_SECRET", "demo-secret")
	gwURL := proctest.Start(t, proctest.Build(t, "."), "-addr", "127.0.0.1:0", "-upstream", rec.URL+"/mcp",
		"-upstream-resource", usersURL, "-upstream-token-url", issuerURL+"/token", "-upstream-client-id", "demo")

	const callerToken = "caller-token-that-must-stay-at-the-gateway"
	caller := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: callerToken}))
	res := callTool(t, connect(t, gwURL, caller), "directory.get_user", `{"id":"`+id+`"}`)
	if res.IsError || !strings.Contains(structured(t, res), `"name":"Grace"`) {
		t.Fatalf("get_user through the gateway: %s (want %s)", structured(t, res), user)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the proxy saw no upstream requests")
	}
	for _, h := range seen {
		if !strings.HasPrefix(h, "Bearer ey") || strings.Contains(h, callerToken) {
			t.Errorf("upstream request authorized with %q, want the gateway's own JWT", h)
		}
	}
}

// TestGatewayWritesNeedApproval imports the users example's create_user as
// an approval-gated write: the call is held until an approver decides it
// with the agnara command, then creates the user once; repeats return the
// recorded result.
func TestGatewayWritesNeedApproval(t *testing.T) {
	usersURL := proctest.Start(t, proctest.Build(t, "../users"), "-addr", "127.0.0.1:0", "-dev-scopes", "users:read users:write")
	db := filepath.Join(t.TempDir(), "approvals.db")
	gwURL := proctest.Start(t, proctest.Build(t, "."), "-addr", "127.0.0.1:0", "-upstream", usersURL, "-approvals-db", db)
	agnaraCLI := proctest.Build(t, "../../cmd/agnara")
	gw := connect(t, gwURL, nil)

	const args = `{"name":"Edsger","email":"edsger@example.com"}`
	res := callTool(t, gw, "directory.create_user", args)
	var body struct {
		Code    string `json:"code"`
		Reason  string `json:"reason"`
		Details struct {
			ApprovalID string `json:"approval_id"`
		} `json:"details"`
	}
	json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &body)
	if !res.IsError || body.Code != "interaction_required" || body.Reason != "approval_pending" || body.Details.ApprovalID == "" {
		t.Fatalf("first call: %s", res.Content[0].(*mcp.TextContent).Text)
	}
	if res := callTool(t, gw, "directory.list_users", `{}`); strings.Contains(structured(t, res), "Edsger") {
		t.Fatal("the user exists before approval")
	}

	out, err := exec.Command(agnaraCLI, "approvals", "approve", "-db", db, body.Details.ApprovalID, "-as", "alice").CombinedOutput()
	if err != nil {
		t.Fatalf("agnara approvals approve: %v\n%s", err, out)
	}
	var first string
	for i := range 2 {
		res = callTool(t, gw, "directory.create_user", args)
		if res.IsError || !strings.Contains(structured(t, res), `"name":"Edsger"`) {
			t.Fatalf("call %d after approval: %s", i+1, res.Content[0].(*mcp.TextContent).Text)
		}
		if i == 0 {
			first = structured(t, res)
		} else if structured(t, res) != first {
			t.Errorf("repeat returned %s, want the recorded %s", structured(t, res), first)
		}
	}
	var listed struct {
		Result struct {
			Structured struct {
				Result []struct {
					Email string `json:"email"`
				} `json:"result"`
			} `json:"structured"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(structured(t, callTool(t, gw, "directory.list_users", `{}`))), &listed)
	if users := listed.Result.Structured.Result; len(users) != 1 || users[0].Email != "edsger@example.com" {
		t.Errorf("the upstream's users: %+v, want the one created", users)
	}
	out, err = exec.Command(agnaraCLI, "approvals", "list", "-db", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "completed") || !strings.Contains(string(out), "committed") {
		t.Errorf("agnara approvals list: %v\n%s", err, out)
	}
}
