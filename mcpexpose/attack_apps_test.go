package mcpexpose_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Attacks on MCP Apps views (ADR 84): each test is an attempt to make a
// view reach further, or be read by more callers, than its declaration
// and its tools allow.

// A view's CSP origins reach the host verbatim, which joins them into a
// Content-Security-Policy header: what Compile lets through must be an
// origin and nothing more, so that no spelling injects a directive or a
// source, or carries a query, fragment or port that is no origin's.
// (A wildcard over a top-level domain, "https://*.com", and an empty
// port, "https://a.test:", are still let through, as mcpimport lets them
// through for imported views: refusing them here alone would make a
// gateway's accepted view fail its compile.)
func TestAttackUICSPOrigins(t *testing.T) {
	cases := []struct {
		origin string
		ok     bool
	}{
		// Injections into the header the host builds.
		{"https://a.test; script-src *", false},
		{"https://a.test;script-src", false},
		{"https://a.test 'unsafe-inline'", false},
		{"https://a.test'", false},
		{"https://a.test,https://b.test", false},
		{"https://a.test\n", false},
		{"https://a.test\t", false},
		{" https://a.test", false},
		// Not origins at all.
		{"'self'", false},
		{"*", false},
		{"https:", false},
		{"https://*", false},
		{"https://*.", false},
		{"javascript:alert(1)", false},
		{"data:text/html,x", false},
		{"blob:https://a.test", false},
		{"//a.test", false},
		{"https:a.test", false},
		// Credentials and confusable authorities.
		{`https://evil.test\@good.test`, false},
		{"https://evil.test@good.test", false},
		{"https://good.test:443@evil.test", false},
		{"https://@a.test", false},
		// Hosts that are no DNS name.
		{"https://exämple.test", false},
		{"https://%C3%A4.test", false},
		{"https://%65vil.test", false},
		{"https://ex\u200bample.test", false},
		{"https://a..test", false},
		// Plain http off localhost, however spelled.
		{"http://LOCALHOST", false},
		{"http://localhost.", false},
		{"http://localhost.evil.test", false},
		{"http://127.0.0.1.nip.io", false},
		{"http://127.1", false},
		{"http://2130706433", false},
		// Query, fragment and port that are no origin's.
		{"https://a.test?", false},
		{"https://a.test#", false},
		{"https://a.test?x", false},
		{"https://a.test#x", false},
		{"https://a.test:0", false},
		{"https://a.test:65536", false},
		{"https://a.test:99999", false},
		// What must stay allowed.
		{"https://a.test", true},
		{"https://a.test:8443", true},
		{"https://a.test:65535", true},
		{"HTTPS://A.test", true},
		{"https://*.cdn.test", true},
		{"wss://*.rt.test:443", true},
		{"http://localhost", true},
		{"http://localhost:8080", true},
		{"ws://127.0.0.1:9000", true},
		{"https://[2001:db8::1]", true},
		{"https://xn--exmple-cua.test", true},
	}
	for _, c := range cases {
		t.Run(c.origin, func(t *testing.T) {
			app := agnara.New("csp", nil)
			exp := mcpexpose.New(app)
			exp.Tool(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "view", Description: "d"}),
				&mcpexpose.ToolOptions{UI: &mcpexpose.UI{HTML: "<p>x</p>", CSP: mcpexpose.UICSP{ConnectDomains: []string{c.origin}}}})
			_, err := exp.Compile()
			switch {
			case c.ok && err != nil:
				t.Errorf("refused: %v", err)
			case !c.ok && err == nil:
				t.Errorf("accepted %q", c.origin)
			case !c.ok && !strings.Contains(err.Error(), "apps.CSP.ConnectDomains") && !strings.Contains(err.Error(), "CSP.ConnectDomains"):
				t.Errorf("refused for another reason: %v", err)
			}
		})
	}
}

// A caller who may see no tool linking a view learns nothing of it by any
// route to a resource: read, subscribe (handshake era), listen
// (2026-07-28) or complete, under the view's URI or any other spelling
// of it (case, trailing slash, query, fragment, percent-encoding): each
// answers, byte for byte but the URI, what the same request answers for a
// URI nothing serves. A caller who may see the tool reads it.
func TestAttackHiddenViewIsNoResource(t *testing.T) {
	srv := serve(t, &fixture{snap: shopSnapshot(t, cartView)}, &mcpexpose.HandlerOptions{Tokens: tokens})
	url := srv.URL + "/mcp"
	ctx := context.Background()
	const absent = "ui://shop/absent"
	hidden := []string{"ui://shop/ledger", "ui://SHOP/ledger", "UI://shop/ledger", "ui://shop/ledger/", "ui://shop/Ledger", "ui://shop/ledger?x=1",
		"ui://shop/ledger#x", "ui://shop/%6cedger", "ui://shop%2Fledger", "ui://shop/ledger%00", "ui://shop/./ledger", "ui://shop/ledger\u200b"}
	modern := connect(t, url, "reader", "", nil)
	legacy := connect(t, url, "reader", "2025-11-25", nil)
	client := &http.Client{}
	answers := func(uri string) []string {
		var out []string
		add := func(err error) {
			if err == nil {
				out = append(out, "no error")
				return
			}
			out = append(out, strings.ReplaceAll(err.Error(), uri, "URI"))
		}
		_, err := modern.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		add(err)
		if err == nil {
			return out // readable: a listen on it would be held, not answered
		}
		_, err = legacy.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		add(err)
		add(legacy.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
		_, err = modern.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: uri}, Argument: mcp.CompleteParamsArgument{Name: "x", Value: "y"}})
		add(err)
		quoted, _ := json.Marshal(uri)
		ex := send(t, client, url, "Bearer reader", wireRequest{name: "listen", header: baseHeader("subscriptions/listen", ""), body: listenBody("1", `{"resourceSubscriptions":[`+string(quoted)+`]}`)})
		body := strings.ReplaceAll(ex.body, strings.Trim(string(quoted), `"`), "URI")
		body = strings.ReplaceAll(body, strings.Trim(strconv.QuoteToASCII(uri), `"`), "URI") // as the server escapes it
		out = append(out, fmt.Sprintf("listen %d %s", ex.status, body))
		return out
	}
	want := answers(absent)
	for _, w := range want[:4] {
		if w == "no error" {
			t.Fatalf("a URI nothing serves was answered: %v", want)
		}
	}
	for _, uri := range hidden {
		if diff := cmp.Diff(want, answers(uri)); diff != "" {
			t.Errorf("%q to a caller who may not see its tool (-absent +hidden):\n%s", uri, diff)
		}
	}
	writer := connect(t, url, "writer", "", nil)
	if _, err := writer.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://shop/ledger"}); err != nil {
		t.Errorf("the writer cannot read the ledger's view: %v", err)
	}
}

// A Render that takes its time is bounded by the read's context: a client
// that gives up (at 2026-07-28, by going away; in the handshake era, by
// cancelling the request) ends it, so slow views do not pile up.
func TestAttackSlowRenderEndsWithTheRead(t *testing.T) {
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	app := agnara.New("slow", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "view", Description: "A view."}),
		&mcpexpose.ToolOptions{UI: &mcpexpose.UI{Render: func(ctx context.Context) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			ended <- ctx.Err()
			return "", ctx.Err()
		}}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, &fixture{snap: snap}, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Logger: slog.New(slog.DiscardHandler)}})
	for _, era := range eras[:2] {
		cs := connect(t, srv.URL+"/mcp", "", era.version, nil)
		ctx, cancel := context.WithCancel(context.Background())
		read := make(chan error, 1)
		go func() {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://slow.view"})
			read <- err
		}()
		<-started
		cancel()
		if err := <-read; err == nil {
			t.Errorf("%s: a cancelled read answered", era.name)
		}
		select {
		case err := <-ended:
			if err == nil {
				t.Errorf("%s: Render ended without its context done", era.name)
			}
		case <-time.After(20 * time.Second): // a guard against a hang, not a measure
			t.Fatalf("%s: Render still runs after the read was given up", era.name)
		}
	}
}
