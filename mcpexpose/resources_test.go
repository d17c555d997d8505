package mcpexpose_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type PageIn struct {
	ID string `json:"id" jsonschema:"minLength=1"`
}

type Page struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type SummarizeIn struct {
	Topic string `json:"topic" jsonschema:"description=What to summarize"`
	Words int    `json:"words,omitempty"`
}

// docsSnapshot has a public resource, a template, a prompt with a
// completer, and a resource and a prompt only "writer" (ledger:write) may
// see.
func docsSnapshot(t testing.TB) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("docs", nil)
	readme := app.Capability(func() (string, error) { return "read me", nil },
		&agnara.CapabilityOptions{Name: "readme", Description: "The readme."})
	secret := app.Capability(func() ([]byte, error) { return []byte{1, 2, 3}, nil },
		&agnara.CapabilityOptions{Name: "secret", Description: "Admins only.", Scopes: []string{"ledger:write"}})
	page := app.Capability(func(in PageIn) (Page, error) {
		if in.ID == "missing" {
			return Page{}, execution.Fail(execution.NotFound, "no such page", nil)
		}
		if in.ID == "locked" {
			return Page{}, execution.Fail(execution.Conflict, "page is locked", map[string]any{"by": "ann"})
		}
		return Page{ID: in.ID, Title: "Page " + in.ID}, nil
	}, &agnara.CapabilityOptions{Name: "page", Description: "One page by id."})
	summarize := app.Capability(func(in SummarizeIn) ([]execution.Message, error) {
		return []execution.Message{
			{Role: execution.User, Content: execution.Text{Text: fmt.Sprintf("Summarize %s in %d words.", in.Topic, in.Words)}},
			{Role: execution.Assistant, Content: execution.Text{Text: "Sure."}},
		}, nil
	}, &agnara.CapabilityOptions{Name: "summarize", Description: "Summarize a topic."})
	audit := app.Capability(func() (string, error) { return "audit everything", nil },
		&agnara.CapabilityOptions{Name: "audit", Description: "Admins only.", Scopes: []string{"ledger:write"}})
	exp := mcpexpose.New(app)
	exp.Resource(readme, &mcpexpose.ResourceOptions{URI: "docs://readme"})
	exp.Resource(secret, &mcpexpose.ResourceOptions{URI: "docs://secret"})
	exp.ResourceTemplate(page, &mcpexpose.ResourceTemplateOptions{URITemplate: "docs://pages/{id}", Complete: map[string]mcpexpose.Completer{
		"id": func(context.Context, mcpexpose.CompletionRequest) ([]string, error) { return []string{"p1", "p2"}, nil },
	}})
	exp.Prompt(summarize, &mcpexpose.PromptOptions{Complete: map[string]mcpexpose.Completer{
		"topic": func(_ context.Context, req mcpexpose.CompletionRequest) ([]string, error) {
			var out []string
			for _, v := range []string{"go", "gophers", "rust"} {
				if strings.HasPrefix(v, req.Value) {
					out = append(out, v)
				}
			}
			return out, nil
		},
	}})
	exp.Prompt(audit, &mcpexpose.PromptOptions{Name: "audit"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// rpcError returns err's JSON-RPC code and data, with the target's name
// replaced by X in the message, for comparing two refusals.
func rpcError(t testing.TB, err error, target string) string {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	data := strings.ReplaceAll(string(je.Data), target, "X")
	return fmt.Sprintf("%d %s %s", je.Code, strings.ReplaceAll(je.Message, target, "X"), data)
}

// Both eras, over HTTP, with the Go SDK client: lists filtered by scope,
// reads of a resource and a template, a prompt, a completion, and a hidden
// resource or prompt refused exactly like a missing one.
func TestResourcesAndPromptsBothEras(t *testing.T) {
	srv := serve(t, &fixture{snap: docsSnapshot(t)}, &mcpexpose.HandlerOptions{Tokens: tokens})
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version="+version, func(t *testing.T) {
			ctx := context.Background()
			reader := connect(t, srv.URL+"/mcp", "reader", version, nil)
			writer := connect(t, srv.URL+"/mcp", "writer", version, nil)
			caps := reader.InitializeResult().Capabilities
			if caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions == nil {
				t.Errorf("capabilities = %+v, want resources (subscribe), prompts, completions", caps)
			}

			for _, c := range []struct {
				cs   *mcp.ClientSession
				want string
			}{{reader, "docs://readme"}, {writer, "docs://readme,docs://secret"}} {
				res, err := c.cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var uris []string
				for _, r := range res.Resources {
					uris = append(uris, r.URI)
				}
				if got := strings.Join(uris, ","); got != c.want {
					t.Errorf("resources/list = %s, want %s", got, c.want)
				}
			}
			tmpls, err := reader.ListResourceTemplates(ctx, nil)
			if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != "docs://pages/{id}" {
				t.Fatalf("resources/templates/list = %+v, %v", tmpls, err)
			}

			reads := []struct {
				uri, want string
			}{
				{"docs://readme", `[{"uri":"docs://readme","mimeType":"text/plain","text":"read me"}]`},
				{"docs://pages/p1", `[{"uri":"docs://pages/p1","mimeType":"application/json","text":"{\"id\":\"p1\",\"title\":\"Page p1\"}"}]`},
			}
			for _, r := range reads {
				res, err := reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.uri})
				if err != nil {
					t.Fatalf("read %s: %v", r.uri, err)
				}
				got, _ := json.Marshal(res.Contents)
				if diff := cmp.Diff(r.want, string(got)); diff != "" {
					t.Errorf("read %s (-want +got):\n%s", r.uri, diff)
				}
			}
			res, err := writer.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://secret"})
			if err != nil || len(res.Contents) != 1 || string(res.Contents[0].Blob) != "\x01\x02\x03" || res.Contents[0].MIMEType != "application/octet-stream" {
				t.Errorf("writer reads docs://secret = %+v, %v", res, err)
			}

			// Hidden, missing, and "not found" from the handler: one answer.
			_, errHidden := reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://secret"})
			_, errMissing := reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://nothing"})
			_, errNotFound := reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://pages/missing"})
			want := `-32602 Resource not found {"uri":"X"}`
			for name, c := range map[string]struct {
				err    error
				target string
			}{"hidden": {errHidden, "docs://secret"}, "missing": {errMissing, "docs://nothing"}, "not_found": {errNotFound, "docs://pages/missing"}} {
				if got := rpcError(t, c.err, c.target); got != want {
					t.Errorf("%s resource: %s, want %s", name, got, want)
				}
			}
			_, errLocked := reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://pages/locked"})
			if got := rpcError(t, errLocked, "docs://pages/locked"); got != `-32602 page is locked {"code":"conflict","details":{"by":"ann"},"message":"page is locked","uri":"X"}` {
				t.Errorf("failed read: %s", got)
			}

			prompts, err := reader.ListPrompts(ctx, nil)
			if err != nil || len(prompts.Prompts) != 1 {
				t.Fatalf("prompts/list = %+v, %v", prompts, err)
			}
			got, _ := json.Marshal(prompts.Prompts[0])
			if want := `{"arguments":[{"name":"topic","description":"What to summarize","required":true},{"name":"words"}],"description":"Summarize a topic.","name":"docs.summarize"}`; string(got) != want {
				t.Errorf("prompt = %s, want %s", got, want)
			}
			gp, err := reader.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs.summarize", Arguments: map[string]string{"topic": "go", "words": "12"}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ = json.Marshal(gp.Messages)
			if want := `[{"content":{"type":"text","text":"Summarize go in 12 words."},"role":"user"},{"content":{"type":"text","text":"Sure."},"role":"assistant"}]`; string(got) != want {
				t.Errorf("messages = %s, want %s", got, want)
			}
			_, errHidden = reader.GetPrompt(ctx, &mcp.GetPromptParams{Name: "audit"})
			_, errMissing = reader.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nothing"})
			if h, m := rpcError(t, errHidden, "audit"), rpcError(t, errMissing, "nothing"); h != m {
				t.Errorf("hidden prompt: %s; missing prompt: %s", h, m)
			}
			if _, err := writer.GetPrompt(ctx, &mcp.GetPromptParams{Name: "audit"}); err != nil {
				t.Errorf("writer gets audit: %v", err)
			}
			_, errBad := reader.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs.summarize", Arguments: map[string]string{"topic": "go", "words": "many"}})
			if got := rpcError(t, errBad, "docs.summarize"); !strings.HasPrefix(got, "-32602 ") || !strings.Contains(got, `"code":"invalid_input"`) || !strings.Contains(got, "/words") {
				t.Errorf("bad argument: %s", got)
			}

			cr, err := reader.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "docs.summarize"}, Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "go"}})
			if err != nil || strings.Join(cr.Completion.Values, ",") != "go,gophers" {
				t.Errorf("complete topic = %+v, %v", cr, err)
			}
			cr, err = reader.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "docs://pages/{id}"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "p"}})
			if err != nil || strings.Join(cr.Completion.Values, ",") != "p1,p2" {
				t.Errorf("complete id = %+v, %v", cr, err)
			}
			_, errHidden = reader.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "audit"}, Argument: mcp.CompleteParamsArgument{Name: "x"}})
			_, errMissing = reader.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "nothing"}, Argument: mcp.CompleteParamsArgument{Name: "x"}})
			if h, m := rpcError(t, errHidden, "audit"), rpcError(t, errMissing, "nothing"); h != m {
				t.Errorf("completing a hidden prompt: %s; a missing one: %s", h, m)
			}
		})
	}
}

// A subscription is guarded like a read: a hidden resource cannot be
// subscribed to, and is refused as a missing one.
func TestSubscribeGuarded(t *testing.T) {
	srv := serve(t, &fixture{snap: docsSnapshot(t)}, &mcpexpose.HandlerOptions{Tokens: tokens})
	reader := connect(t, srv.URL+"/mcp", "reader", "2025-11-25", nil)
	ctx := context.Background()
	if err := reader.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://readme"}); err != nil {
		t.Errorf("subscribe to docs://readme: %v", err)
	}
	errHidden := reader.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://secret"})
	errMissing := reader.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://nothing"})
	if h, m := rpcError(t, errHidden, "docs://secret"), rpcError(t, errMissing, "docs://nothing"); h != m {
		t.Errorf("hidden: %s; missing: %s", h, m)
	}
	if err := reader.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "docs://readme"}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}
}

// A tools-only snapshot advertises no resources, prompts or completions,
// and does not answer their methods.
func TestToolsOnlyOffersNoResources(t *testing.T) {
	app := agnara.New("calc", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(Add, &agnara.CapabilityOptions{Description: "Add."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	cs := inMemory(t, snap)
	caps := cs.InitializeResult().Capabilities
	if caps.Resources != nil || caps.Prompts != nil || caps.Completions != nil {
		t.Errorf("capabilities = %+v, want tools only", caps)
	}
	_, err = cs.ListPrompts(context.Background(), nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("prompts/list = %v, want -32601", err)
	}
}

// Registration mistakes are reported by Compile, each with its file:line.
func TestFeatureCompileErrors(t *testing.T) {
	type twoIn struct {
		A string `json:"a"`
		B string `json:"b,omitempty"`
	}
	type objIn struct {
		M map[string]string `json:"m"`
	}
	cases := []struct {
		name    string
		declare func(app *agnara.App, exp *mcpexpose.Exposure)
		want    string
	}{
		{"no options", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Resource(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"}), nil)
		}, "needs ResourceOptions.URI"},
		{"relative uri", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Resource(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"}), &mcpexpose.ResourceOptions{URI: "readme"})
		}, "is not absolute"},
		{"duplicate uri", func(app *agnara.App, exp *mcpexpose.Exposure) {
			c := app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"})
			exp.Resource(c, &mcpexpose.ResourceOptions{URI: "x://a"})
			exp.Resource(c, &mcpexpose.ResourceOptions{URI: "x://a"})
		}, "duplicate resource URI"},
		{"required input on a fixed uri", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Resource(app.Capability(func(twoIn) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"}), &mcpexpose.ResourceOptions{URI: "x://a"})
		}, `input field "a" is required`},
		{"bad template", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.ResourceTemplate(app.Capability(func(twoIn) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"}), &mcpexpose.ResourceTemplateOptions{URITemplate: "x://{a"})
		}, "invalid URI template"},
		{"variable not a field", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.ResourceTemplate(app.Capability(func(twoIn) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"}), &mcpexpose.ResourceTemplateOptions{URITemplate: "x://{a}/{c}"})
		}, "template variable {c} is not a field"},
		{"required field not a variable", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.ResourceTemplate(app.Capability(func(twoIn) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"}), &mcpexpose.ResourceTemplateOptions{URITemplate: "x://{b}"})
		}, `input field "a" is required but not a variable`},
		{"completer of no variable", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.ResourceTemplate(app.Capability(func(twoIn) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "r", Description: "d"}),
				&mcpexpose.ResourceTemplateOptions{URITemplate: "x://{a}", Complete: map[string]mcpexpose.Completer{"b": func(context.Context, mcpexpose.CompletionRequest) ([]string, error) { return nil, nil }}})
		}, `completer for "b" (in Complete)`},
		{"object argument", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Prompt(app.Capability(func(objIn) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "p", Description: "d"}), nil)
		}, `input field "m" is not a string`},
		{"prompt without a result", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Prompt(app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "p", Description: "d"}), nil)
		}, "must return its messages"},
		{"prompt name", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Prompt(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "p", Description: "d"}), &mcpexpose.PromptOptions{Name: "no spaces"})
		}, "invalid prompt name"},
		{"no description", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Prompt(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "p"}), nil)
		}, "needs a description"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			app := agnara.New("x", nil)
			exp := mcpexpose.New(app)
			c.declare(app, exp)
			_, err := exp.Compile()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "resources_test.go:") {
				t.Errorf("Compile = %v, want an error containing %q at resources_test.go", err, c.want)
			}
		})
	}
}

// The TypeScript SDK client (handshake era) reads a resource and a
// template, gets a prompt, completes an argument, and sees a hidden
// resource and a hidden prompt refused exactly like missing ones.
func TestResourcesTypeScriptClient(t *testing.T) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	srv := serve(t, &fixture{snap: docsSnapshot(t)}, &mcpexpose.HandlerOptions{Tokens: tokens})
	steps := `[{"read":"docs://readme"},{"read":"docs://pages/p7"},{"read":"docs://secret"},{"read":"docs://nothing"},` +
		`{"prompt":"docs.summarize","arguments":{"topic":"go","words":"3"}},{"prompt":"audit"},{"prompt":"nothing"},` +
		`{"complete":{"ref":{"type":"ref/prompt","name":"docs.summarize"},"argument":{"name":"topic","value":"g"}}}]`
	out, err := exec.Command(node, filepath.Join("..", "conformance", "ts-resources.mjs"), srv.URL+"/mcp", "reader", steps).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	var got struct {
		ProtocolVersion string            `json:"protocolVersion"`
		Resources       []string          `json:"resources"`
		Templates       []string          `json:"templates"`
		Prompts         []string          `json:"prompts"`
		Results         []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Results) != 8 {
		t.Fatalf("TypeScript client printed %q (%v)", out, err)
	}
	if got.ProtocolVersion != "2025-11-25" {
		t.Errorf("TypeScript client negotiated %q, want 2025-11-25", got.ProtocolVersion)
	}
	lists := fmt.Sprint(got.Resources, got.Templates, got.Prompts) // [a] [b] [c]
	if want := "[docs://readme] [docs://pages/{id}] [docs.summarize]"; lists != want {
		t.Errorf("lists = %s, want %s", lists, want)
	}
	field := func(i int, path ...string) string {
		var v any
		_ = json.Unmarshal(got.Results[i], &v)
		for _, p := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				var n int
				fmt.Sscan(p, &n)
				if n < len(x) {
					v = x[n]
				} else {
					v = nil
				}
			}
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	checks := []struct{ got, want string }{
		{field(0, "contents", "0", "text"), `"read me"`},
		{field(1, "contents", "0", "text"), `"{\"id\":\"p7\",\"title\":\"Page p7\"}"`},
		{field(4, "messages", "0", "content", "text"), `"Summarize go in 3 words."`},
		{field(4, "messages", "1", "role"), `"assistant"`},
		{field(7, "completion", "values"), `["go","gophers"]`},
		// hidden and missing: the same code and data (the URI aside)
		{field(2, "error", "code"), field(3, "error", "code")},
		{strings.ReplaceAll(field(2, "error", "data"), "docs://secret", "X"), strings.ReplaceAll(field(3, "error", "data"), "docs://nothing", "X")},
		{field(2, "error", "code"), "-32602"},
		{field(5, "error", "code"), field(6, "error", "code")},
		{strings.ReplaceAll(field(5, "error", "message"), "audit", "X"), strings.ReplaceAll(field(6, "error", "message"), "nothing", "X")},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %s, want %s", i, c.got, c.want)
		}
	}
}

// ResourceUpdated reaches a handshake-era session subscribed to the URI.
func TestResourceUpdatedReachesSubscriber(t *testing.T) {
	h, err := mcpexpose.NewHandler(docsSnapshot(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	updated := make(chan string, 1)
	cs := connect(t, url, "", "2025-11-25", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://readme"}); err != nil {
		t.Fatal(err)
	}
	if err := h.ResourceUpdated(ctx, "docs://readme"); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != "docs://readme" {
			t.Errorf("updated %q, want docs://readme", uri)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated arrived")
	}
}
