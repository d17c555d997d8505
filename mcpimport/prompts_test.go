package mcpimport_test

import (
	"encoding/json"
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/google/go-cmp/cmp"
)

// TestGetPrompts: a get of an imported prompt is one prompts/get with the
// arguments given, validated first against the remote's argument list
// (required ones present, no others: a refused get never reaches the
// remote server), and its messages come back with their roles and every
// content kind.
func TestGetPrompts(t *testing.T) {
	l := newLibrary(nil)
	cat, err := discoverFeatures(t, l, featureBindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := featurePlans(t, cat)

	p, _ := plans.Lookup("gw.summarize")
	if got, want := string(p.InputSchema()), `{"type":"object","properties":{"topic":{"type":"string","description":"What to summarize"},"style":{"type":"string","description":"How"}},"required":["topic"],"additionalProperties":false}`; got != want {
		t.Errorf("input schema %s, want %s", got, want)
	}
	if o := p.Capability().Options(); o.Description != "Summarize a topic." || o.Title != "Summarize" {
		t.Errorf("published %q, %q", o.Title, o.Description)
	}
	if g, _ := plans.Lookup("gw.gallery"); g.Capability().Options().Description != "Local words." {
		t.Errorf("gallery's description %q, want the binding's", g.Capability().Options().Description)
	}

	out := invoke(t, plans, "summarize", `{"topic":"go","style":"briefly"}`, reader)
	s, ok := out.(execution.Success)
	if !ok {
		t.Fatalf("outcome %#v", out)
	}
	want := []execution.Message{
		{Role: execution.User, Content: execution.Text{Text: "Summarize go, briefly."}},
		{Role: execution.Assistant, Content: execution.Text{Text: "Sure."}},
	}
	if d := cmp.Diff(want, s.Value); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"topic": "go", "style": "briefly"}, l.last.Load()); d != "" {
		t.Errorf("arguments sent (-want +got):\n%s", d)
	}

	out = invoke(t, plans, "gallery", `{}`, reader)
	if s, ok = out.(execution.Success); !ok {
		t.Fatalf("gallery: %#v", out)
	}
	want = []execution.Message{
		{Role: execution.User, Content: execution.Image{Data: logoPNG, MIMEType: "image/png"}},
		{Role: execution.User, Content: execution.Audio{Data: []byte("RIFF"), MIMEType: "audio/wav"}},
		{Role: execution.User, Content: execution.Resource{URI: "lib://books/1", MIMEType: "text/plain", Text: "Book 1"}},
		{Role: execution.Assistant, Content: execution.ResourceLink{URI: "lib://books/2", Name: "book 2"}},
	}
	if d := cmp.Diff(want, s.Value); d != "" {
		t.Errorf("gallery (-want +got):\n%s", d)
	}

	gets := l.gets.Load()
	for _, args := range []string{`{}`, `{"topic":"go","extra":"x"}`, `{"topic":7}`} {
		if f, _ := invoke(t, plans, "summarize", args, reader).(*execution.Failure); f == nil || f.Code != execution.InvalidInput {
			t.Errorf("summarize %s: %v, want invalid_input", args, f)
		}
	}
	if l.gets.Load() != gets {
		t.Error("a get with invalid arguments reached the remote server")
	}
}

// TestPromptResultsFailClosed: messages with a role other than user or
// assistant, content that is not a prompt's (tool use), no messages,
// malformed images or embedded resources, too much, a refusal or an error
// of the remote server end in a canonical failure with a fixed message.
func TestPromptResultsFailClosed(t *testing.T) {
	cat, err := discoverFeatures(t, newLibrary(nil), featureBindings(), &mcpimport.Options{Limits: mcpimport.Limits{ObjectBytes: 1024, ContentBlocks: 4}})
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := featurePlans(t, cat)
	for _, tc := range []struct {
		mode string
		want execution.Reason
	}{
		{"role", mcpimport.ReasonResultInvalid},
		{"tooluse", mcpimport.ReasonResultUnsupported},
		{"none", mcpimport.ReasonResultInvalid},
		{"image", mcpimport.ReasonResultInvalid},
		{"embedded", mcpimport.ReasonResultInvalid},
		{"big", mcpimport.ReasonResultTooLarge},
		{"many", mcpimport.ReasonResultTooLarge},
		{"refuse", mcpimport.ReasonInvalidArguments},
		{"error", mcpimport.ReasonProtocolError},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"mode": tc.mode})
			wantReason(t, invoke(t, plans, "odd_prompt", string(args), reader), tc.want)
		})
	}
	if _, ok := invoke(t, plans, "odd_prompt", `{"mode":"ok"}`, reader).(execution.Success); !ok {
		t.Error("the well-behaved get failed")
	}
}
