//lint:file-ignore SA1019 sampling is deprecated at 2026-07-28 (SEP-2577) but remains in the protocol during the deprecation window; the test caller answers an upstream's sampling request on purpose.

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/agnara-go/agnara/policy"
)

// TestImportedWriteAsksThePersonCalling imports the users example's
// users.delete_user, whose server asks for a confirmation, through the
// gateway as a destructive write. Once approved, the upstream's question
// reaches the person calling — a Go SDK client at 2026-07-28, a TypeScript
// SDK client at 2025-11-25 — and their answer goes back upstream; a call
// that only asked leaves the approval claimed and unused; another caller
// who declines deletes nothing (recorded unknown: the call was sent in the
// round that asked); each user is deleted exactly once, and a repeat
// answers the recorded receipt. Both upstream eras.
func TestImportedWriteAsksThePersonCalling(t *testing.T) {
	users := proctest.Build(t, "../examples/users")
	for _, upstreamProtocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("upstream "+upstreamProtocol, func(t *testing.T) {
			usersURL := proctest.Start(t, users, "-addr", "127.0.0.1:0", "-dev-scopes", "users:read users:write users:admin")
			store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			cfg := gateway.Config{
				Auth: gateway.Auth{Development: &gateway.Development{Scopes: []string{"users:read", "users:admin"}}},
				Upstreams: []gateway.Upstream{{
					Name: "users", Prefix: "dir_",
					HTTP: &gateway.HTTPUpstream{URL: usersURL, Protocol: upstreamProtocol},
					Tools: []gateway.Tool{
						standard("users.get_user", "dir_get_user", "Get a user", "users:read"),
						{Remote: "users.delete_user", Name: "dir_delete_user", Title: "Delete a user", Write: "destructive", Scopes: []string{"users:admin"}, Profile: "standard"},
					},
				}},
			}
			g, url, log := started(t, cfg, &gateway.Options{Approvals: store})
			for _, s := range g.Status() {
				if s.State != gateway.StateUp || len(s.Absent) > 0 {
					t.Fatalf("upstream %+v\n%s", s, log)
				}
			}
			// The upstream, called directly: users to delete, and whether
			// they are still there.
			direct := connect(t, usersURL, "2025-11-25")
			for _, name := range []string{"Ada", "Grace", "Edsger", "Barbara"} {
				if _, isErr := call(t, direct, "users.create_user", map[string]any{"name": name, "email": strings.ToLower(name) + "@example.com"}); isErr {
					t.Fatalf("create %s upstream", name)
				}
			}
			exists := func(id string) bool {
				text, isErr := call(t, direct, "users.get_user", map[string]any{"id": id})
				if isErr && !strings.Contains(text, "not_found") {
					t.Fatalf("get_user %s: %s", id, text)
				}
				return !isErr
			}
			approve := func(id string) string {
				t.Helper()
				cs := connect(t, url, "2026-07-28")
				text, isErr := call(t, cs, "gateway.dir_delete_user", map[string]any{"id": id})
				var pending struct {
					Reason  string
					Details struct {
						ApprovalID string `json:"approval_id"`
					}
				}
				json.Unmarshal([]byte(text), &pending)
				if !isErr || pending.Reason != string(approval.ReasonPending) {
					t.Fatalf("delete %s before the approval: %s", id, text)
				}
				alice := policy.NewPrincipal("alice", []string{approval.DefaultApproverScope})
				if _, err := store.Approve(context.Background(), pending.Details.ApprovalID, alice, "ok"); err != nil {
					t.Fatal(err)
				}
				return pending.Details.ApprovalID
			}
			for _, id := range []string{"1", "2", "3"} {
				if !exists(id) {
					t.Fatalf("user %s is not there to begin with", id)
				}
			}

			t.Run("Go SDK client at 2026-07-28 confirms", func(t *testing.T) {
				id := approve("1")
				var mu sync.Mutex
				var asked []string
				client := mcp.NewClient(&mcp.Implementation{Name: "person", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						// While the person thinks: the approval is claimed,
						// nothing is recorded, the user is still there.
						a, err := store.Get(ctx, id)
						mu.Lock()
						asked = append(asked, req.Params.Message)
						mu.Unlock()
						if err != nil || a.State != approval.StateClaimed || a.Receipt != nil {
							t.Errorf("while asking: approval %+v (%v), want claimed without a receipt", a, err)
						}
						if !exists("1") {
							t.Errorf("user 1 deleted before the person answered")
						}
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
					},
				})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
					t.Fatalf("negotiated %s", got)
				}
				text, isErr := call(t, cs, "gateway.dir_delete_user", map[string]any{"id": "1"})
				if isErr {
					t.Fatalf("confirmed delete: %s\n%s", text, log)
				}
				if len(asked) != 1 || asked[0] != "Delete this user? This cannot be undone." {
					t.Errorf("the person was asked %q, want the upstream's question once", asked)
				}
				if exists("1") {
					t.Errorf("user 1 is still there")
				}
				a, err := store.Get(context.Background(), id)
				if err != nil || a.State != approval.StateCompleted || a.Receipt.Effect != approval.EffectCommitted {
					t.Errorf("approval after the delete: %+v (%v)", a, err)
				}
				// The repeat answers the receipt, asks nobody, deletes nothing.
				again, isErr := call(t, connect(t, url, "2026-07-28"), "gateway.dir_delete_user", map[string]any{"id": "1"})
				if isErr || again != text {
					t.Errorf("repeat: %s, want the recorded %s", again, text)
				}
			})

			t.Run("another caller declines", func(t *testing.T) {
				id := approve("3")
				client := mcp.NewClient(&mcp.Implementation{Name: "doubter", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						return &mcp.ElicitResult{Action: "decline"}, nil
					},
				})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				text, isErr := call(t, cs, "gateway.dir_delete_user", map[string]any{"id": "3"})
				if !isErr || !strings.Contains(text, "mcp_question_declined") {
					t.Errorf("declined delete: %s", text)
				}
				if !exists("3") {
					t.Errorf("user 3 was deleted though the caller declined")
				}
				// The call was sent in the round that asked: whether the
				// upstream did anything before asking is not the gateway's
				// to know (the user's being there is the upstream's own
				// evidence, for an approver to reconcile).
				a, err := store.Get(context.Background(), id)
				if err != nil || a.State != approval.StateCompleted || a.Receipt.Effect != approval.EffectUnknown {
					t.Errorf("approval after the decline: %+v (%v), want completed, unknown", a, err)
				}
			})

			t.Run("a caller that cannot answer", func(t *testing.T) {
				id := approve("4")
				text, isErr := call(t, connect(t, url, "2026-07-28"), "gateway.dir_delete_user", map[string]any{"id": "4"})
				if !isErr || !strings.Contains(text, "mcp_question_refused") {
					t.Errorf("delete by a caller without elicitation: %s", text)
				}
				if !exists("4") {
					t.Errorf("user 4 was deleted unconfirmed")
				}
				// At 2026-07-28 the upstream refuses the call (-32021), a
				// handshake-era upstream asked and was refused: either way
				// the call was sent, and its answer proves nothing about
				// what ran.
				a, err := store.Get(context.Background(), id)
				if err != nil || a.State != approval.StateCompleted || a.Receipt.Effect != approval.EffectUnknown {
					t.Errorf("approval: %+v (%v), want completed, unknown", a, err)
				}
			})

			t.Run("TypeScript SDK client at 2025-11-25 confirms", func(t *testing.T) {
				nodeBin := node(t)
				id := approve("2")
				got := typeScriptAnswering(t, nodeBin, url, "gateway.dir_delete_user", `{"id":"2"}`, `[{"confirm":true}]`)
				if got.ProtocolVersion != "2025-11-25" {
					t.Errorf("the TypeScript client negotiated %q", got.ProtocolVersion)
				}
				if got.Result.IsError || len(got.Elicited) != 1 || got.Elicited[0] != "Delete this user? This cannot be undone." {
					t.Errorf("TypeScript client: asked %q, result %+v\n%s", got.Elicited, got.Result, log)
				}
				if exists("2") {
					t.Errorf("user 2 is still there")
				}
				a, err := store.Get(context.Background(), id)
				if err != nil || a.State != approval.StateCompleted || a.Receipt.Effect != approval.EffectCommitted {
					t.Errorf("approval after the delete: %+v (%v)", a, err)
				}
			})
		})
	}
}

// tsAnswered is what conformance/ts-client.mjs prints when it answers
// elicitations.
type tsAnswered struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Elicited        []string `json:"elicited"`
	Result          struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	} `json:"result"`
}

func typeScriptAnswering(t *testing.T, nodeBin, url, tool, args, answers string) tsAnswered {
	t.Helper()
	out := runTypeScript(t, nodeBin, url, tool, args, answers)
	var got tsAnswered
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("TypeScript client printed %q", out)
	}
	return got
}

func runTypeScript(t *testing.T, nodeBin string, args ...string) []byte {
	t.Helper()
	peers.NPM(t, "@modelcontextprotocol/sdk")
	out, err := exec.Command(nodeBin, append([]string{filepath.Join(conformance, "ts-client.mjs")}, args...)...).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v (%s)", err, out)
	}
	return out
}

// TestEverythingQuestionsReachTheCaller: the npm server-everything's
// elicitation and sampling tools (over stdio, a handshake-era session)
// ask the gateway's caller — Go SDK clients at both eras — and get the
// caller's answers: its whole form, as the server put it, and the
// caller's model's text.
func TestEverythingQuestionsReachTheCaller(t *testing.T) {
	nodeBin := node(t)
	cfg := gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "everything", Prefix: "every_",
		Stdio: &gateway.StdioUpstream{Command: nodeBin, Args: []string{npmServer(t, "server-everything"), "stdio"}},
		Tools: []gateway.Tool{
			standard("trigger-elicitation-request", "every_elicit", "Ask for details", "every:read"),
			standard("trigger-sampling-request", "every_sample", "Ask the model", "every:read"),
		},
	}}}
	g, url, log := started(t, cfg, nil)
	for _, s := range g.Status() {
		if s.State != gateway.StateUp || len(s.Absent) > 0 {
			t.Fatalf("upstream %+v\n%s", s, log)
		}
	}
	// The server registers these tools once it has seen the client's
	// capabilities, and says so with tools/list_changed: until the gateway
	// has imported again, they answer mcp_catalog_stale and reach nobody.
	probe := connect(t, url, "2026-07-28")
	eventually(t, "the catalog settles", func() bool {
		text, _ := call(t, probe, "gateway.every_sample", map[string]any{"prompt": "x", "maxTokens": 1})
		return !strings.Contains(text, "mcp_catalog_stale")
	})
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			var mu sync.Mutex
			var forms []map[string]any
			var prompts []string
			client := mcp.NewClient(&mcp.Implementation{Name: "person", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					f, _ := req.Params.RequestedSchema.(map[string]any)
					forms = append(forms, f)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true}}, nil
				},
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					defer mu.Unlock()
					if text, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
						prompts = append(prompts, text.Text)
					}
					return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "teal"}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gateway.every_elicit", Arguments: map[string]any{}})
			all, _ := json.Marshal(res)
			if err != nil || res.IsError || !strings.Contains(string(all), "Name: Ada Lovelace") {
				t.Errorf("elicitation: %s, %v\n%s", all, err, log)
			}
			if len(forms) != 1 || forms[0]["properties"] == nil || len(forms[0]["properties"].(map[string]any)) != 13 {
				t.Errorf("the caller was shown %d forms: %v", len(forms), forms)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "gateway.every_sample", Arguments: map[string]any{"prompt": "a colour", "maxTokens": 20}})
			all, _ = json.Marshal(res)
			if err != nil || res.IsError || !strings.Contains(string(all), "teal") || !strings.Contains(string(all), "test-model") {
				t.Errorf("sampling: %s, %v", all, err)
			}
			if len(prompts) != 1 || !strings.Contains(prompts[0], "a colour") {
				t.Errorf("the caller's model was asked %q", prompts)
			}
		})
	}
}

// TestAnswerThatDoesNotFitTheUpstreamsForm: a gateway caller whose answer
// to the upstream's form does not fit it gets the same canonical
// invalid_input failure at every era (at 2025-11-25 it used to be a
// JSON-RPC error with code 0), and the answer never reaches the upstream.
func TestAnswerThatDoesNotFitTheUpstreamsForm(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	var answered atomic.Int32
	form := map[string]any{"type": "object", "properties": map[string]any{"go": map[string]any{"type": "boolean", "title": "Go ahead"}}, "required": []any{"go"}}
	up.AddTool(&mcp.Tool{Name: "proceed", Description: "Asks first.", InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, ok := req.Params.InputResponses["q"]; ok {
				answered.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "went ahead"}}}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "Proceed?", RequestedSchema: form}}}, nil
		})
	_, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "asker", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, up)},
		Tools: []gateway.Tool{standard("proceed", "proceed", "Proceed", "test:read")},
	}}}, nil)
	outcomes := map[string]string{}
	for _, version := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		client := mcp.NewClient(&mcp.Implementation{Name: "careless", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"go": true}}, nil
			},
		})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		hc := &http.Client{Transport: mcptest.Misanswering{From: `{"go":true}`, To: `{"go":"yes"}`}}
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gateway.proceed", Arguments: map[string]any{}})
		switch {
		case err != nil:
			outcomes[version] = "error " + err.Error()
		case len(res.Content) == 1:
			text, _ := res.Content[0].(*mcp.TextContent)
			outcomes[version] = fmt.Sprintf("isError=%v %s", res.IsError, text.Text)
		default:
			outcomes[version] = fmt.Sprintf("%+v", res)
		}
		cs.Close()
		cancel()
	}
	want := outcomes["2026-07-28"]
	if !strings.HasPrefix(want, `isError=true {"code":"invalid_input",`) || !strings.Contains(want, `"path":"/go"`) {
		t.Fatalf("at 2026-07-28: %s, want invalid_input naming /go\n%s", want, log)
	}
	for version, got := range outcomes {
		if got != want {
			t.Errorf("at %s: %s\nwant, as at 2026-07-28: %s", version, got, want)
		}
	}
	if n := answered.Load(); n != 0 {
		t.Errorf("the upstream got %d answers, want none", n)
	}
}
