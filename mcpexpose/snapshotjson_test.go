package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
)

type noteInput struct {
	ID string `json:"id"`
}

func zeta(ctx context.Context, in noteInput) (string, error)  { return in.ID, nil }
func alpha(ctx context.Context, in noteInput) (string, error) { return in.ID, nil }
func stats(ctx context.Context, _ struct{}) (string, error)   { return "ok", nil }

type topicInput struct {
	Topic string `json:"topic" jsonschema_description:"What to write about."`
}

func draft(ctx context.Context, in topicInput) (string, error) { return in.Topic, nil }

// reviewSnapshot compiles the same application with its declarations in
// the given order.
func reviewSnapshot(t *testing.T, reversed bool) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("notes", &agnara.Options{Version: "2.0.0"})
	z := app.Capability(zeta, &agnara.CapabilityOptions{
		Name: "zeta", Description: "Delete </script> & more.", Scopes: []string{"notes:write", "notes:admin"},
		Confirm: "Really?", Annotations: agnara.Destructive | agnara.OpenWorld, Timeout: 5 * time.Second,
		RateLimit: agnara.RateLimit{Rate: 0.5, Burst: 2},
	})
	a := app.Capability(alpha, &agnara.CapabilityOptions{Name: "alpha", Title: "Alpha", Description: "Read one.", Scopes: []string{"notes:read"}, Annotations: agnara.ReadOnly | agnara.Idempotent})
	s := app.Capability(stats, &agnara.CapabilityOptions{Name: "stats", Description: "Statistics."})
	d := app.Capability(draft, &agnara.CapabilityOptions{Name: "draft", Description: "Draft a note.", Scopes: []string{"notes:read"}})
	exp := mcpexpose.New(app)
	moved := func() {
		exp.Withdrawn("notes.moved", execution.Fail(execution.Unavailable, "moved <elsewhere> for now", nil).WithReason("notes_moved"),
			&mcpexpose.WithdrawnOptions{Scopes: []string{"notes:write", "notes:legacy"}})
	}
	archived := func() { exp.Withdrawn("notes.archived", execution.Fail(execution.NotFound, "archived", nil), nil) }
	if reversed {
		exp.Prompt(d, nil)
		exp.Resource(s, &mcpexpose.ResourceOptions{URI: "notes://stats"})
		archived()
		moved()
		exp.Tool(a, nil)
		exp.Tool(z, nil)
	} else {
		exp.Tool(z, nil)
		exp.Tool(a, nil)
		moved()
		archived()
		exp.Resource(s, &mcpexpose.ResourceOptions{URI: "notes://stats"})
		exp.Prompt(d, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestSnapshotJSONIsDeterministic(t *testing.T) {
	first, err := reviewSnapshot(t, false).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		again, err := reviewSnapshot(t, i%2 == 1).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("compile %d gave other bytes:\n%s\n%s", i, first, again)
		}
	}
	// The canonical form: no insignificant whitespace, members sorted, and
	// HTML-sensitive characters as themselves (RFC 8785), not \u003c.
	if bytes.ContainsAny(first, "\n\t") || !strings.HasPrefix(string(first), `{"app":{"name":"notes","version":"2.0.0"},"format":"agnara.snapshot/v1",`) {
		t.Errorf("not canonical: %s", first)
	}
	if !bytes.Contains(first, []byte(`"description":"Delete </script> & more."`)) {
		t.Errorf("description not as declared: %s", first)
	}
	// An encoder uses the same form (json.Marshal escapes <, > and & as
	// it always does).
	var via bytes.Buffer
	enc := json.NewEncoder(&via)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(reviewSnapshot(t, false)); err != nil || !bytes.Equal(bytes.TrimSuffix(via.Bytes(), []byte("\n")), first) {
		t.Errorf("json.Encoder: %v\n%s", err, via.Bytes())
	}
}

func TestSnapshotJSONContents(t *testing.T) {
	snap := reviewSnapshot(t, false)
	var buf bytes.Buffer
	if err := snap.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasSuffix(out, "}\n") || !strings.Contains(out, "\n  \"format\": \"agnara.snapshot/v1\",\n") {
		t.Errorf("WriteJSON is not indented JSON ending in a newline:\n%s", out)
	}
	var doc struct {
		Format string   `json:"format"`
		Scopes []string `json:"scopes"`
		Tools  []struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Scopes      []string        `json:"scopes"`
			Annotations []string        `json:"annotations"`
			Confirm     string          `json:"confirm"`
			Timeout     string          `json:"timeout"`
			RateLimit   map[string]any  `json:"rateLimit"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Output      json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
		Withdrawn []struct {
			Name    string          `json:"name"`
			Scopes  []string        `json:"scopes"`
			Failure json.RawMessage `json:"failure"`
		} `json:"withdrawn"`
		Resources []map[string]any `json:"resources"`
		Templates []map[string]any `json:"resourceTemplates"`
		Prompts   []map[string]any `json:"prompts"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != mcpexpose.SnapshotFormat {
		t.Errorf("format %q", doc.Format)
	}
	if diff := cmp.Diff([]string{"notes:admin", "notes:legacy", "notes:read", "notes:write"}, doc.Scopes); diff != "" {
		t.Errorf("scopes (-want +got):\n%s", diff)
	}
	if len(doc.Tools) != 2 || doc.Tools[0].Name != "notes.alpha" || doc.Tools[1].Name != "notes.zeta" {
		t.Fatalf("tools not sorted by name: %+v", doc.Tools)
	}
	a, z := doc.Tools[0], doc.Tools[1]
	if a.Title != "Alpha" || a.Confirm != "" || a.RateLimit != nil {
		t.Errorf("alpha %+v", a)
	}
	if strings.Contains(out, `"unlisted"`) {
		t.Errorf("a tool is marked unlisted:\n%s", out)
	}
	if len(doc.Withdrawn) != 2 || doc.Withdrawn[0].Name != "notes.archived" || doc.Withdrawn[1].Name != "notes.moved" {
		t.Fatalf("withdrawn not sorted by name: %+v", doc.Withdrawn)
	}
	compact := func(b []byte) string {
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatal(err)
		}
		return c.String()
	}
	if w := doc.Withdrawn[0]; w.Scopes != nil || compact(w.Failure) != `{"code":"not_found","message":"archived"}` {
		t.Errorf("notes.archived: scopes %v, failure %s", w.Scopes, w.Failure)
	}
	if w := doc.Withdrawn[1]; !cmp.Equal(w.Scopes, []string{"notes:legacy", "notes:write"}) ||
		compact(w.Failure) != `{"code":"unavailable","message":"moved <elsewhere> for now","reason":"notes_moved"}` {
		t.Errorf("notes.moved: scopes %v, failure %s", w.Scopes, w.Failure)
	}
	if diff := cmp.Diff([]string{"idempotent", "read-only"}, a.Annotations); diff != "" {
		t.Errorf("alpha annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"notes:admin", "notes:write"}, z.Scopes); diff != "" {
		t.Errorf("zeta scopes, sorted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"destructive", "open-world"}, z.Annotations); diff != "" {
		t.Errorf("zeta annotations (-want +got):\n%s", diff)
	}
	if z.Confirm != "Really?" || z.Timeout != "5s" || z.RateLimit["rate"] != 0.5 || z.RateLimit["burst"] != 2.0 {
		t.Errorf("zeta governance: %+v", z)
	}
	var in, output bytes.Buffer
	json.Compact(&in, z.InputSchema)
	json.Compact(&output, z.Output)
	if in.String() != `{"additionalProperties":false,"properties":{"id":{"type":"string"}},"required":["id"],"type":"object"}` ||
		output.String() != `{"additionalProperties":false,"properties":{"result":{"type":"string"}},"required":["result"],"type":"object"}` {
		t.Errorf("zeta schemas: %s %s", &in, &output)
	}
	if len(doc.Resources) != 1 || doc.Resources[0]["uri"] != "notes://stats" || doc.Resources[0]["scopes"] != nil {
		t.Errorf("resources: %v", doc.Resources)
	}
	if doc.Templates == nil || len(doc.Templates) != 0 {
		t.Errorf("resourceTemplates: %v, want []", doc.Templates)
	}
	if len(doc.Prompts) != 1 || doc.Prompts[0]["name"] != "notes.draft" {
		t.Fatalf("prompts: %v", doc.Prompts)
	}
	args, _ := json.Marshal(doc.Prompts[0]["arguments"])
	if string(args) != `[{"description":"What to write about.","name":"topic","required":true}]` {
		t.Errorf("prompt arguments: %s", args)
	}
}
