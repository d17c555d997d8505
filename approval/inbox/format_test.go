package inbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`{}`, ``},
		{`{"id":42,"title":"Q3 plan"}`, `id=42, title="Q3 plan"`},
		{`{"a\u202eb":1}`, `"a\u202eb"=1`},
		{`{"":true," x":null}`, `""=true, " x"=null`},
		{`{"text":"` + strings.Repeat("x", 40) + `"}`, `text="xxxxxxxxxxxxxxxxxxxxxx…`},
		{`[1,2]`, `[1,2]`},
		{`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13}`, `k1=1, k2=2, k3=3, k4=4, k5=5, k6=6, k7=7, k8=8, k9=9, k10=10, k11=11,…`},
	} {
		if got := summarize(json.RawMessage(tc.args), 70); got != tc.want {
			t.Errorf("summarize(%s) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestSentences: every kind of audit entry the stores write reads as a
// sentence, never as JSON.
func TestSentences(t *testing.T) {
	deadline, _ := json.Marshal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		kind, actor, detail, want, quote string
	}{
		{"prepared", "bob", `{"tool":"gw.update"}`, "bob's agent asked to run gw.update.", ""},
		{"approved", "alice", `{"note":"ok"}`, "alice approved it, to run once when bob's agent made the same call again.", "ok"},
		{"rejected", "alice", `{"note":"no"}`, "alice rejected it. It will not run.", "no"},
		{"canceled", "alice", `{"from":"approved"}`, "alice canceled it after it was approved. It will not run.", ""},
		{"canceled", "bob", `{"from":"pending"}`, "bob canceled it before anyone decided. It will not run.", ""},
		{"expired", "", `{"from":"pending","deadline":` + string(deadline) + `}`, "It expired: nobody decided it before 2026-12-01 10:00 UTC.", ""},
		{"expired", "", `{"from":"approved","deadline":` + string(deadline) + `}`, "It expired: bob's agent did not call again before 2026-12-01 10:00 UTC, so it never ran.", ""},
		{"claimed", "", `{}`, "bob's agent called again, and the gateway took it to run (once).", ""},
		{"claim_refused", "", `{"changed":["scope revision"]}`, "The gateway refused to run it: scope revision changed since it was approved. It stays approved until its deadline; a new approval is needed for the tool as it is now.", ""},
		{"completed", "", `{"effect":"committed"}`, "It ran, and the server confirmed it (committed).", ""},
		{"completed", "", `{"effect":"not_started","code":"mcp_catalog_stale"}`, "It did not run: it was stopped before anything was sent (mcp_catalog_stale).", ""},
		{"completed", "", `{"effect":"unknown","code":"mcp_timeout"}`, "It was sent, but whether it took effect is unknown (mcp_timeout). Someone should check and record the effect.", ""},
		{"reconciled", "dave", `{"effect":"not_started","evidence":"read back"}`, "dave recorded that it did not take effect.", "read back"},
		{"something_new", "dave", `not json`, "something_new, by dave.", ""},
	} {
		text, quote := sentence(approval.Event{Kind: tc.kind, Actor: tc.actor, Detail: json.RawMessage(tc.detail)}, "bob")
		if text != tc.want || quote != tc.quote {
			t.Errorf("%s %s: %q (%q), want %q (%q)", tc.kind, tc.detail, text, quote, tc.want, tc.quote)
		}
	}
}

// TestReadResult: a receipt's result reads as the arguments do, indented,
// with a text block that holds JSON decoded rather than shown as a string
// of \" escapes; every part is bounded, and characters that would hide or
// reorder text are shown as escapes.
func TestReadResult(t *testing.T) {
	entities := `[{"name":"Ada Lovelace","observations":["wrote \"the first program\""]}]`
	indented := "[\n  {\n    \"name\": \"Ada Lovelace\",\n    \"observations\": [\n      \"wrote \\\"the first program\\\"\"\n    ]\n  }\n]"
	quoted, _ := json.Marshal(entities)
	many := `{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"x"},`, maxParts+5), ",") + `]}`
	var shown []resultPart
	for i := range maxParts {
		shown = append(shown, resultPart{fmt.Sprintf("Text %d of %d", i+1, maxParts+5), "x"})
	}
	for _, tc := range []struct {
		name, raw string
		want      []resultPart
	}{{
		name: "a text block holding JSON",
		raw:  `{"content":[{"type":"text","text":` + string(quoted) + `}]}`,
		want: []resultPart{{"Text, JSON indented", indented}},
	}, {
		name: "text, another block, structured content and other members",
		raw:  `{"content":[{"type":"text","text":"done\nline 2"},{"type":"image","mimeType":"image/png","data":"iVBO"}],"structuredContent":{"ok":true},"isError":false,"_meta":{"k":1}}`,
		want: []resultPart{
			{"Text 1 of 2", "done\nline 2"},
			{"Block 2 of 2 (image)", "{\n  \"type\": \"image\",\n  \"mimeType\": \"image/png\",\n  \"data\": \"iVBO\"\n}"},
			{"Structured content", "{\n  \"ok\": true\n}"},
			{"Other members", "{\n  \"_meta\": {\n    \"k\": 1\n  },\n  \"isError\": false\n}"},
		},
	}, {
		name: "the envelope of older receipts",
		raw:  `{"text":[` + string(quoted) + `,"plain"],"structured":null}`,
		want: []resultPart{{"Text 1 of 2, JSON indented", indented}, {"Text 2 of 2", "plain"}},
	}, {
		name: "text that looks like JSON and is not",
		raw:  `{"content":[{"type":"text","text":"[draft] {not json"}]}`,
		want: []resultPart{{"Text", "[draft] {not json"}},
	}, {
		name: "any other JSON",
		raw:  `{"id":7,"tags":["a"]}`,
		want: []resultPart{{"", "{\n  \"id\": 7,\n  \"tags\": [\n    \"a\"\n  ]\n}"}},
	}, {
		name: "control and reordering characters",
		raw:  `{"content":[{"type":"text","text":"ok\u001b[2J\r\u202eevil\tend"}]}`,
		want: []resultPart{{"Text", `ok\x1b[2J\r\u202eevil` + "\tend"}},
	}, {
		name: "more blocks than are shown",
		raw:  many,
		want: append(shown, resultPart{Label: "and 5 more blocks, not shown"}),
	}, {
		name: "a text longer than is shown",
		raw:  `{"content":[{"type":"text","text":"` + strings.Repeat("é", partRunes+10) + `"}]}`,
		want: []resultPart{{"Text", strings.Repeat("é", partRunes) + "\n… (20 more bytes not shown)"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := readResult(json.RawMessage(tc.raw))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("readResult(%.80s) (-want +got):\n%s", tc.raw, d)
			}
		})
	}
}
