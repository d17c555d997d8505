package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	framework "github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

type PageInput struct {
	ID string `json:"id" jsonschema:"minLength=1"`
}

type BriefInput struct {
	Topic string `json:"topic" jsonschema:"description=What to brief on"`
	Words int    `json:"words,omitempty"`
}

// startDocs serves resources (one fixed, one binary, a template whose
// variable completes), a prompt whose argument completes from what was
// typed and the other argument, and a prompt that asks a confirmation.
func startDocs(t *testing.T) string {
	t.Helper()
	app := framework.New("docs", nil)
	readme := app.Capability(func() (string, error) { return "read me\nline \x1b[2J two", nil },
		&framework.CapabilityOptions{Name: "readme", Description: "The readme."})
	logo := app.Capability(func() ([]byte, error) { return []byte{1, 2, 3}, nil },
		&framework.CapabilityOptions{Name: "logo", Description: "The logo."})
	page := app.Capability(func(in PageInput) (string, error) {
		if in.ID == "missing" {
			return "", execution.Fail(execution.NotFound, "no such page", nil)
		}
		return "page " + in.ID, nil
	}, &framework.CapabilityOptions{Name: "page", Description: "One page by id."})
	brief := app.Capability(func(in BriefInput) ([]execution.Message, error) {
		return []execution.Message{
			{Role: execution.User, Content: execution.Text{Text: fmt.Sprintf("Brief me on %s in %d words.", in.Topic, in.Words)}},
			{Role: execution.Assistant, Content: execution.Text{Text: "Sure."}},
		}, nil
	}, &framework.CapabilityOptions{Name: "brief", Description: "Brief on a topic."})
	wipe := app.Capability(func() (string, error) { return "wipe it all", nil },
		&framework.CapabilityOptions{Name: "wipe", Description: "Needs a yes.", Confirm: "Show the wipe prompt?"})
	exp := mcpexpose.New(app)
	exp.Resource(readme, &mcpexpose.ResourceOptions{URI: "docs://readme"})
	exp.Resource(logo, &mcpexpose.ResourceOptions{URI: "docs://logo", MIMEType: "image/png"})
	exp.ResourceTemplate(page, &mcpexpose.ResourceTemplateOptions{URITemplate: "docs://pages/{id}", Complete: map[string]mcpexpose.Completer{
		"id": func(context.Context, mcpexpose.CompletionRequest) ([]string, error) { return []string{"p1", "p2"}, nil },
	}})
	exp.Prompt(brief, &mcpexpose.PromptOptions{Name: "brief", Complete: map[string]mcpexpose.Completer{
		"topic": func(_ context.Context, req mcpexpose.CompletionRequest) ([]string, error) {
			var out []string
			for _, v := range []string{"go", "gophers", "rust"} {
				if strings.HasPrefix(v, req.Value) {
					out = append(out, v+req.Arguments["words"])
				}
			}
			return out, nil
		},
	}})
	exp.Prompt(wipe, &mcpexpose.PromptOptions{Name: "wipe"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestResourcesPromptsComplete lists and reads resources, lists and gets
// prompts and completes arguments, at both eras.
func TestResourcesPromptsComplete(t *testing.T) {
	url := startDocs(t)
	for _, era := range []struct{ flag, version string }{{"modern", "2026-07-28"}, {"legacy", "2025-11-25"}} {
		t.Run(era.flag, func(t *testing.T) {
			run := func(args ...string) (int, string, string) {
				return agnara(time.Time{}, append(args, "-era", era.flag)...)
			}
			for _, tc := range []struct {
				args   []string
				code   int
				stdout []string // each in stdout
				stderr string   // in stderr
			}{
				{[]string{"resources", "list", url}, 0, []string{
					"docs 0.0.0, protocol " + era.version + ": 2 resources, 1 templates\n", "URI ", "docs://readme ", "docs://logo ", "image/png", "The readme.",
					"TEMPLATE ", "docs://pages/{id} ", "One page by id.",
				}, ""},
				{[]string{"resources", "read", url, "docs://readme"}, 0, []string{"read me\n\"line \\x1b[2J two\"\n"}, ""},
				{[]string{"resources", "read", url, "docs://logo"}, 0, []string{"[docs://logo image/png, 3 bytes]\n"}, ""},
				{[]string{"resources", "read", url, "docs://pages/7"}, 0, []string{"page 7\n"}, ""},
				{[]string{"resources", "read", url, "docs://nothing"}, 1, nil, "agnara resources read: resources/read: Resource not found (JSON-RPC error -32602)\n"},
				{[]string{"prompts", "list", url}, 0, []string{": 2 prompts\n", "NAME ", "ARGUMENTS ", "brief ", "topic* words", "Brief on a topic.", "wipe "}, ""},
				{[]string{"prompts", "get", url, "brief", "topic=go", "words=5"}, 0, []string{"user:\n  Brief me on go in 5 words.\nassistant:\n  Sure.\n"}, ""},
				{[]string{"prompts", "get", url, "wipe", "-yes"}, 0, []string{"user:\n  wipe it all\n"}, "Confirmed (-yes): Show the wipe prompt?"},
				{[]string{"prompts", "get", url, "wipe"}, 1, nil, "Declined the server's confirmation (not a terminal; pass -yes to confirm): Show the wipe prompt?"},
				{[]string{"prompts", "get", url, "nope"}, 1, nil, `agnara prompts get: prompts/get: unknown prompt "nope" (JSON-RPC error -32602)` + "\n"},
				{[]string{"complete", url, "prompt", "brief", "topic=go", "words=5"}, 0, []string{"go5\ngophers5\n"}, ""},
				{[]string{"complete", url, "resource", "docs://pages/{id}", "id"}, 0, []string{"p1\np2\n"}, ""},
			} {
				code, out, errOut := run(tc.args...)
				ok := code == tc.code && strings.Contains(errOut, tc.stderr)
				for _, want := range tc.stdout {
					ok = ok && strings.Contains(out, want)
				}
				if !ok {
					t.Errorf("%q: exit %d, want %d\nstdout %q, want %q\nstderr %q, want %q", tc.args, code, tc.code, out, tc.stdout, errOut, tc.stderr)
				}
			}
			code, out, _ := run("complete", url, "prompt", "brief", "topic=gop", "-json")
			var res struct {
				Completion struct{ Values []string } `json:"completion"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Completion.Values) != 1 || res.Completion.Values[0] != "gophers" {
				t.Errorf("complete -json: exit %d, %q", code, out)
			}
		})
	}
}

func TestCatalogUsageMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"resources"}, "agnara resources: missing command: list or read"},
		{[]string{"prompts", "lsit"}, "agnara prompts: unknown command lsit: want list or get"},
		{[]string{"resources", "read", "http://a/mcp"}, "agnara resources read: missing the resource's URI (run 'agnara resources list http://a/mcp' to see them)"},
		{[]string{"prompts", "get", "http://a/mcp"}, "agnara prompts get: missing the prompt's NAME"},
		{[]string{"prompts", "get", "http://a/mcp", "brief", "topic"}, "agnara prompts get: topic is not ARG=VALUE, such as topic=go"},
		{[]string{"prompts", "list", "http://a/mcp", "-task"}, "flag provided but not defined: -task"},
		{[]string{"complete", "http://a/mcp", "tool", "x", "y"}, "agnara complete: want URL prompt|resource NAME ARG[=TYPED] [ARG=VALUE...], such as: agnara complete http://a/mcp prompt greet name=Ad"},
		{[]string{"complete", "http://a/mcp", "prompt", "x", "=v"}, "agnara complete: =v: name the argument to complete"},
		{[]string{"resources", "list", "ftp://a"}, "ftp://a is not an http(s) URL"},
	} {
		code, out, errOut := agnara(time.Time{}, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	for _, args := range [][]string{{"resources", "help"}, {"prompts", "-h"}, {"complete", "help"}, {"prompts", "get", "-h"}} {
		if code, out, _ := agnara(time.Time{}, args...); code != 0 || out != catalogUsage {
			t.Errorf("%q: exit %d, %q", args, code, out)
		}
	}
}

// tools list names each tool's MCP App view; resources read shows a view's
// CSP, then its page.
func TestViews(t *testing.T) {
	app := framework.New("shop", nil)
	cart := app.Capability(func() (string, error) { return "2 items", nil },
		&framework.CapabilityOptions{Name: "cart", Description: "The cart."})
	plain := app.Capability(func() (string, error) { return "", nil },
		&framework.CapabilityOptions{Name: "plain", Description: "No view."})
	exp := mcpexpose.New(app)
	exp.Tool(cart, &mcpexpose.ToolOptions{UI: &mcpexpose.UI{HTML: "<!doctype html>\n<p>cart</p>\n",
		CSP: mcpexpose.UICSP{ConnectDomains: []string{"https://api.shop.test", "wss://rt.shop.test"}, FrameDomains: []string{"https://*.video.test"}}, PrefersBorder: true}})
	exp.Tool(plain, &mcpexpose.ToolOptions{UI: nil})
	exp.Tool(app.Capability(func() (string, error) { return "", nil }, &framework.CapabilityOptions{Name: "bare", Description: "Bare view."}),
		&mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://shop/bare", HTML: "<p>bare</p>"}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, era := range []string{"modern", "legacy"} {
		for _, tc := range []struct {
			args   []string
			stdout []string
		}{
			{[]string{"tools", "list", srv.URL}, []string{"NAME        TITLE  HINTS  VIEW            DESCRIPTION\n", "shop.cart   -      -      ui://shop.cart  The cart.\n", "shop.plain  -      -      -               No view.\n", "shop.bare   -      -      ui://shop/bare  Bare view.\n"}},
			{[]string{"resources", "list", srv.URL}, []string{"ui://shop.cart  shop.cart  text/html;profile=mcp-app"}},
			{[]string{"resources", "read", srv.URL, "ui://shop.cart"}, []string{"[MCP App view ui://shop.cart]\n[csp connectDomains: https://api.shop.test wss://rt.shop.test]\n[csp frameDomains: https://*.video.test]\n[prefers a border]\n<!doctype html>\n<p>cart</p>\n"}},
			{[]string{"resources", "read", srv.URL, "ui://shop/bare"}, []string{"[MCP App view ui://shop/bare]\n[csp: none, the page may reach no other origin]\n<p>bare</p>\n"}},
		} {
			code, out, errOut := agnara(time.Time{}, append(tc.args, "-era", era)...)
			ok := code == 0 && errOut == ""
			for _, want := range tc.stdout {
				ok = ok && strings.Contains(out, want)
			}
			if !ok {
				t.Errorf("%s %q: exit %d, stderr %q\nstdout:\n%s\nwant each of %q", era, tc.args, code, errOut, out, tc.stdout)
			}
		}
	}
}
