//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them, so its test client answers them.
package agnaratest_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type Note struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type NoteID struct {
	ID string `json:"id" jsonschema:"minLength=1"`
}

type AddInput struct {
	Text string `json:"text" jsonschema:"minLength=1"`
}

type Topic struct {
	Topic string `json:"topic" jsonschema:"minLength=1"`
}

var topicForm = execution.NewForm[Topic]("What about?")

// notes is a small store of notes, with a capability of every kind the
// client must handle: a value, a domain failure, a confirmation, a form,
// sampling, roots, content blocks.
type notes struct {
	mu   sync.Mutex
	byID map[string]Note
}

func compile(t testing.TB, store *notes) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("notes", nil)
	t.Cleanup(func() { app.Close() })
	get := app.Capability(func(ctx context.Context, in NoteID) (Note, error) {
		store.mu.Lock()
		defer store.mu.Unlock()
		n, ok := store.byID[in.ID]
		if !ok {
			return Note{}, execution.Fail(execution.NotFound, "no such note", map[string]any{"id": in.ID})
		}
		return n, nil
	}, &agnara.CapabilityOptions{Name: "get", Description: "Get a note.", Scopes: []string{"notes:read"}})
	add := app.Capability(func(ctx context.Context, in AddInput) (Note, error) {
		store.mu.Lock()
		defer store.mu.Unlock()
		n := Note{ID: "n1", Text: in.Text}
		store.byID[n.ID] = n
		return n, nil
	}, &agnara.CapabilityOptions{Name: "add", Description: "Add a note.", Scopes: []string{"notes:write"}})
	purge := app.Capability(func(ctx context.Context) (int, error) {
		store.mu.Lock()
		defer store.mu.Unlock()
		n := len(store.byID)
		clear(store.byID)
		return n, nil
	}, &agnara.CapabilityOptions{Name: "purge", Description: "Delete every note.", Scopes: []string{"notes:admin"},
		Confirm: "Delete every note?", Annotations: agnara.Destructive})
	suggest := app.Capability(func(ec *execution.Context) (string, error) {
		topic, err := execution.Ask(ec, "topic", topicForm)
		if err != nil {
			return "", err
		}
		r, err := ec.Sample("draft", execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "A note on " + topic.Topic}}, MaxTokens: 50})
		if err != nil {
			return "", err
		}
		roots, err := ec.Roots("roots")
		if err != nil {
			return "", err
		}
		return r.Text + " in " + roots[0].URI, nil
	}, &agnara.CapabilityOptions{Name: "suggest", Description: "Suggest a note.", Forms: []agnara.Form{topicForm}})
	banner := app.Capability(func(context.Context) ([]execution.Content, error) {
		return []execution.Content{execution.Text{Text: "notes"}, execution.Image{Data: []byte{1, 2}, MIMEType: "image/png"}}, nil
	}, &agnara.CapabilityOptions{Name: "banner", Description: "The banner."})
	exp := mcpexpose.New(app)
	for _, c := range []*agnara.Capability{get, add, purge, suggest, banner} {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func newNotes() *notes { return &notes{byID: map[string]Note{"n0": {ID: "n0", Text: "first"}}} }

var (
	reader = policy.NewPrincipal("reader", []string{"notes:read"})
	admin  = policy.NewPrincipal("admin", []string{"notes:read", "notes:write", "notes:admin"})
	eras   = []string{agnaratest.Modern, agnaratest.Handshake}
)

func TestPrincipalSeesItsTools(t *testing.T) {
	snap := compile(t, newNotes())
	for _, era := range eras {
		for _, tc := range []struct {
			who  policy.Principal
			want []string
		}{
			{policy.Anonymous(), []string{"notes.suggest", "notes.banner"}},
			{reader, []string{"notes.get", "notes.suggest", "notes.banner"}},
			{admin, []string{"notes.get", "notes.add", "notes.purge", "notes.suggest", "notes.banner"}},
		} {
			c := agnaratest.NewClient(t, snap, &agnaratest.Options{Principal: tc.who, ProtocolVersion: era})
			if c.ProtocolVersion() != era {
				t.Errorf("%s: negotiated %s", era, c.ProtocolVersion())
			}
			if got := c.ToolNames(t); !slices.Equal(got, tc.want) {
				t.Errorf("%s, %q sees %v, want %v", era, tc.who.ID(), got, tc.want)
			}
		}
	}
}

func TestOutcomes(t *testing.T) {
	snap := compile(t, newNotes())
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := agnaratest.NewClient(t, snap, &agnaratest.Options{Principal: admin, ProtocolVersion: era})
			var n Note
			c.CallValue(t, "notes.get", map[string]any{"id": "n0"}, &n)
			if n != (Note{ID: "n0", Text: "first"}) {
				t.Errorf("get n0 = %+v", n)
			}
			f := c.CallFailure(t, "notes.get", map[string]any{"id": "zz"})
			want := &execution.Failure{Code: execution.NotFound, Message: "no such note", Details: map[string]any{"id": "zz"}}
			if diff := cmp.Diff(want, f); diff != "" {
				t.Errorf("get zz (-want +got):\n%s", diff)
			}
			f = c.CallFailure(t, "notes.add", map[string]any{"text": "", "extra": 1})
			if details, _ := json.Marshal(f.Details); f.Code != execution.InvalidInput || !strings.Contains(string(details), `"/text"`) || !strings.Contains(string(details), `"/extra"`) {
				t.Errorf("add with bad input = %+v", f)
			}
			out := c.Call(t, "notes.banner", nil)
			wantBanner := execution.Success{Content: []execution.Content{execution.Text{Text: "notes"}, execution.Image{Data: []byte{1, 2}, MIMEType: "image/png"}}}
			if diff := cmp.Diff(wantBanner, out); diff != "" {
				t.Errorf("banner (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfirmation(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				answer agnaratest.Answerer
				purged bool
			}{
				{"confirm", agnaratest.Confirm(), true},
				{"refuse", agnaratest.Accept(map[string]any{"confirm": false}), false},
				{"decline", agnaratest.Decline(), false},
				{"cancel", agnaratest.Cancel(), false},
			} {
				store := newNotes()
				c := agnaratest.NewClient(t, compile(t, store), &agnaratest.Options{Principal: admin, ProtocolVersion: era, Answer: tc.answer})
				out := c.Call(t, "notes.purge", nil)
				if _, ok := out.(execution.Success); ok != tc.purged || (len(store.byID) == 0) != tc.purged {
					t.Errorf("%s: outcome %+v, %d notes left", tc.name, out, len(store.byID))
				}
				if q := c.Questions(); len(q) != 1 || q[0].Message != "Delete every note?" {
					t.Errorf("%s: asked %+v, want the declared confirmation once", tc.name, q)
				}
			}
		})
	}
}

// TestNoAnswerer: a client without an Answerer declares no elicitation
// capability, and the server refuses the call (a JSON-RPC error naming the
// capability) instead of purging, at both eras.
func TestNoAnswerer(t *testing.T) {
	for _, era := range eras {
		store := newNotes()
		c := agnaratest.NewClient(t, compile(t, store), &agnaratest.Options{Principal: admin, ProtocolVersion: era})
		out, err := c.CallTool(t.Context(), "notes.purge", nil)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || !strings.Contains(je.Message, "elicitation") {
			t.Errorf("%s: purge without an answerer = %v, %v; want a JSON-RPC error naming elicitation", era, out, err)
		}
		if len(store.byID) != 1 {
			t.Errorf("%s: purged without a confirmation", era)
		}
	}
}

func TestFormSamplingRoots(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := agnaratest.NewClient(t, compile(t, newNotes()), &agnaratest.Options{
				ProtocolVersion: era,
				Answer:          agnaratest.Accept(map[string]any{"topic": "tea"}),
				Sample: func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "drafted: " + p.Messages[0].Content.(*mcp.TextContent).Text}}, nil
				},
				Roots: []*mcp.Root{{URI: "file:///notes", Name: "notes"}},
			})
			var got string
			c.CallValue(t, "notes.suggest", nil, &got)
			if got != "drafted: A note on tea in file:///notes" {
				t.Errorf("suggest = %q", got)
			}
		})
	}
}

// TestForbidden: over OAuth a call the principal's scopes do not allow is
// refused with a JSON-RPC error (the handler's 403 step-up), or with the
// canonical forbidden failure under ForbiddenResult.
func TestForbidden(t *testing.T) {
	snap := compile(t, newNotes())
	c := agnaratest.NewClient(t, snap, &agnaratest.Options{Principal: reader})
	var je *jsonrpc.Error
	if _, err := c.CallTool(t.Context(), "notes.add", map[string]any{"text": "x"}); !errors.As(err, &je) {
		t.Errorf("reader adds: %v, want a JSON-RPC error", err)
	}
	c = agnaratest.NewClient(t, snap, &agnaratest.Options{Principal: reader, Server: &mcpexpose.ServerOptions{ForbiddenResult: true}})
	if f := c.CallFailure(t, "notes.add", map[string]any{"text": "x"}); f.Code != execution.Forbidden {
		t.Errorf("reader adds with ForbiddenResult = %+v", f)
	}
}

func TestConnectRefuses(t *testing.T) {
	snap := compile(t, newNotes())
	if _, err := agnaratest.Connect(t.Context(), snap, &agnaratest.Options{ProtocolVersion: "2024-11-05"}); err == nil || !strings.Contains(err.Error(), "2024-11-05") {
		t.Errorf("an unserved version: %v", err)
	}
	if _, err := agnaratest.Connect(t.Context(), nil, nil); err == nil {
		t.Error("a nil snapshot connected")
	}
}

// TestOutcomeOfRefusesOtherShapes: results mcpexpose never projects are
// errors, not outcomes.
func TestOutcomeOfRefusesOtherShapes(t *testing.T) {
	for _, res := range []*mcp.CallToolResult{
		nil,
		{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}},
		{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `{"code":"not_found","message":"x","stack":"..."}`}}},
		{StructuredContent: map[string]any{"value": 1}},
	} {
		if out, err := agnaratest.OutcomeOf(res); err == nil {
			t.Errorf("OutcomeOf(%+v) = %v, want an error", res, out)
		}
	}
}

// ToolUI reads a tool's view as the client's principal may: the page and
// its CSP for a caller who sees the tool, at both eras.
func TestToolUI(t *testing.T) {
	app := agnara.New("shop", nil)
	ledger := app.Capability(func() (string, error) { return "", nil },
		&agnara.CapabilityOptions{Name: "ledger", Description: "The ledger.", Scopes: []string{"ledger:read"}})
	exp := mcpexpose.New(app)
	exp.Tool(ledger, &mcpexpose.ToolOptions{UI: &mcpexpose.UI{HTML: "<p>ledger</p>", CSP: mcpexpose.UICSP{ResourceDomains: []string{"https://cdn.shop.test"}}}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{agnaratest.Modern, agnaratest.Handshake} {
		c := agnaratest.NewClient(t, snap, &agnaratest.Options{ProtocolVersion: version, Principal: policy.NewPrincipal("ann", []string{"ledger:read"})})
		view := c.ToolUI(t, "shop.ledger")
		csp, _ := json.Marshal(view.Meta["ui"])
		if view.URI != "ui://shop.ledger" || view.Text != "<p>ledger</p>" || string(csp) != `{"csp":{"resourceDomains":["https://cdn.shop.test"]}}` {
			t.Errorf("%s: view = %+v, csp %s", version, view, csp)
		}
		// Without the scope, there is no tool and no view.
		anon := agnaratest.NewClient(t, snap, &agnaratest.Options{ProtocolVersion: version})
		if names := anon.ToolNames(t); len(names) != 0 {
			t.Errorf("%s: anonymous sees %v", version, names)
		}
		if _, err := anon.Session().ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://shop.ledger"}); err == nil {
			t.Errorf("%s: anonymous read the scoped view", version)
		}
	}
}
