package inbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/google/go-cmp/cmp"
)

// call is a pending call of tool on server with args, as a list holds it.
func call(tool, server, args string) approval.Approval {
	return approval.Approval{ID: "apv_" + args, Intent: approval.Intent{Binding: approval.Binding{Tool: tool}, Server: server, Arguments: json.RawMessage(args)}}
}

// TestRowsTellCallsApart: a row's preview shows what tells its call from
// the other calls of its tool in the list, not the first members, which
// read alike; a call alone of its tool shows its first members.
func TestRowsTellCallsApart(t *testing.T) {
	person := func(name string) string {
		return `{"entities":[{"entityType":"person","name":"` + name + `","observations":["wrote programs"]}]}`
	}
	long := strings.Repeat("é", 60)
	for _, tc := range []struct {
		name  string
		calls []approval.Approval
		want  []string // each row's preview
		diff  []bool   // whether it shows the leaves that differ
	}{{
		name:  "a nested difference",
		calls: []approval.Approval{call("t", "s", person("Ada")), call("t", "s", person("Grace")), call("t", "s", person("Linus"))},
		want:  []string{`entities[0].name="Ada"`, `entities[0].name="Grace"`, `entities[0].name="Linus"`},
		diff:  []bool{true, true, true},
	}, {
		name: "an array difference",
		calls: []approval.Approval{
			call("t", "", `{"entityNames":["Alan Turing","Edsger Dijkstra"],"force":false}`),
			call("t", "", `{"entityNames":["Alan Turing","Barbara Liskov","Ken Thompson"],"force":false}`),
		},
		want: []string{`entityNames[1]="Edsger Dijkstra"`, `entityNames[1]="Barbara Liskov", entityNames[2]="Ken Thompson"`},
		diff: []bool{true, true},
	}, {
		name: "a member only some calls have, and an empty value",
		calls: []approval.Approval{
			call("t", "", `{"a":1,"b":{}}`),
			call("t", "", `{"a":1,"b":[]}`),
			call("t", "", `{"a":1}`),
		},
		want: []string{`b={}`, `b=[]`, `a=1`},
		diff: []bool{true, true, false},
	}, {
		name:  "a call alone of its tool",
		calls: []approval.Approval{call("t", "s", person("Ada"))},
		want:  []string{`entities=[{"entityType":"person"…`},
		diff:  []bool{false},
	}, {
		name:  "calls of different tools, or of one tool on different servers",
		calls: []approval.Approval{call("t", "s", person("Ada")), call("u", "s", person("Grace")), call("t", "r", person("Linus"))},
		want:  []string{`entities=[{"entityType":"person"…`, `entities=[{"entityType":"person"…`, `entities=[{"entityType":"person"…`},
		diff:  []bool{false, false, false},
	}, {
		name:  "identical calls",
		calls: []approval.Approval{call("t", "", `{"n":1}`), call("t", "", `{"n":1}`)},
		want:  []string{`n=1`, `n=1`},
		diff:  []bool{false, false},
	}, {
		name:  "a long value, cut at a character",
		calls: []approval.Approval{call("t", "", `{"x":{"text":"`+long+`"}}`), call("t", "", `{"x":{"text":"short"}}`)},
		want:  []string{`x.text="` + strings.Repeat("é", 38) + `…`, `x.text="short"`},
		diff:  []bool{true, true},
	}, {
		name: "characters special to HTML, or that hide and reorder text",
		calls: []approval.Approval{
			call("t", "", `{"note":"<script>alert(1)</script>","a.b\u202e":1}`),
			call("t", "", `{"note":"\"quoted\" & 'more'","a.b\u202e":2}`),
		},
		want: []string{`note="<script>alert(1)</script>", "a.b\u202e"=1`, `note="\"quoted\" & 'more'", "a.b\u202e"=2`},
		diff: []bool{true, true},
	}, {
		name: "many differences, cut to the row",
		calls: []approval.Approval{
			call("t", "", `{"a":"`+strings.Repeat("a", 30)+`","b":"`+strings.Repeat("b", 30)+`","c":"`+strings.Repeat("c", 30)+`"}`),
			call("t", "", `{"a":"x","b":"y","c":"z"}`),
		},
		want: []string{`a="` + strings.Repeat("a", 30) + `", b="` + strings.Repeat("b", 30) + `", c="` + strings.Repeat("c", 14) + `…`, `a="x", b="y", c="z"`},
		diff: []bool{true, true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var diff []bool
			for _, r := range rows(tc.calls, 90) {
				got, diff = append(got, r.Preview), append(diff, r.Differs)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("previews (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.diff, diff); d != "" {
				t.Errorf("differs (-want +got):\n%s", d)
			}
		})
	}
}

// TestLeavesAreBounded: however large or deep the arguments, a call is
// read to maxLeaves leaves and maxDepth levels, and the deeper values are
// compared whole.
func TestLeavesAreBounded(t *testing.T) {
	var wide strings.Builder
	wide.WriteString(`{"items":[`)
	for i := range 3 * maxLeaves {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `{"n":%d}`, i)
	}
	wide.WriteString(`]}`)
	got := leaves(json.RawMessage(wide.String()))
	if len(got) != maxLeaves || got[maxLeaves-1].path != fmt.Sprintf("items[%d].n", maxLeaves-1) {
		t.Errorf("a call of %d leaves is read to %d, the last %v; want %d", 3*maxLeaves, len(got), got[len(got)-1], maxLeaves)
	}

	deep := strings.Repeat(`{"d":`, maxDepth+3) + `"bottom"` + strings.Repeat(`}`, maxDepth+3)
	want := []leaf{{strings.TrimSuffix(strings.Repeat("d.", maxDepth), "."), `{"d":{"d":{"d":"bottom"}}}`}}
	if d := cmp.Diff(want, leaves(json.RawMessage(deep)), cmp.AllowUnexported(leaf{})); d != "" {
		t.Errorf("deep arguments (-want +got):\n%s", d)
	}
	a, b := call("t", "", strings.Replace(deep, "bottom", "Ada", 1)), call("t", "", strings.Replace(deep, "bottom", "Grace", 1))
	r := rows([]approval.Approval{a, b}, 200)
	if !strings.Contains(r[0].Preview, `"Ada"`) || !strings.Contains(r[1].Preview, `"Grace"`) {
		t.Errorf("a difference below maxDepth: %q, %q", r[0].Preview, r[1].Preview)
	}
}
