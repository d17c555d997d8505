package inbox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
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
