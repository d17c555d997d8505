package mcpimport_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitStale waits until cat goes stale.
func waitStale(t *testing.T, cat *mcpimport.Catalog) {
	t.Helper()
	select {
	case <-cat.Stale():
	case <-time.After(10 * time.Second):
		t.Fatal("tools/list_changed did not make the catalog stale")
	}
}

func compiled(t *testing.T, cat *mcpimport.Catalog) *execution.Plans {
	t.Helper()
	app := agnara.New("gw", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// TestAllowAbsent: with AllowAbsent, a bound tool the remote server does not
// list, or lists with a schema or description the profile refuses, is left
// out alone (never imported in a weakened form) and reported; catalog-wide
// problems and unbound tools are treated exactly as without it.
func TestAllowAbsent(t *testing.T) {
	allow := &mcpimport.Options{AllowAbsent: true}
	open := `{"type":"object","properties":{"q":{"type":"string"}}}` // additionalProperties absent: wider than the profile allows
	for _, tc := range []struct {
		name    string
		docs    *docsOptions
		remove  string
		want    []string // imported local names
		absent  string   // local name of the absent tool
		code    execution.Reason
		strictC execution.Reason
	}{
		{"complete", nil, "", []string{"echo_text", "search_docs"}, "", "", ""},
		{"missing", nil, "search", []string{"echo_text"}, "search_docs", mcpimport.ToolMissing, mcpimport.ToolMissing},
		{"open schema", &docsOptions{searchIn: open}, "", []string{"echo_text"}, "search_docs", mcpimport.SchemaUnsupported, mcpimport.SchemaUnsupported},
		{"description", &docsOptions{description: string(make([]byte, 9000))}, "", []string{"echo_text"}, "search_docs", mcpimport.DescriptionTooLarge, mcpimport.DescriptionTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDocs(tc.docs)
			if tc.remove != "" {
				d.server.RemoveTools(tc.remove)
			}
			cs, mon := connect(t, d.server, "2025-11-25")
			sess := newSession(t, cs, mon, "docs")

			_, err := mcpimport.Discover(context.Background(), sess, readBindings(), nil)
			if got := execution.ReasonOf(err); got != tc.strictC {
				t.Errorf("without AllowAbsent: %v, want code %q", err, tc.strictC)
			}

			cat, err := mcpimport.Discover(context.Background(), sess, readBindings(), allow)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range cat.Snapshot().Entries() {
				names = append(names, e.Name)
			}
			if len(names) != len(tc.want) || (len(names) > 0 && names[0] != tc.want[0]) || len(names) > 1 && names[1] != tc.want[1] {
				t.Errorf("imported %v, want %v", names, tc.want)
			}
			abs := cat.Absent()
			switch {
			case tc.absent == "" && len(abs) != 0:
				t.Errorf("absent %+v, want none", abs)
			case tc.absent != "" && (len(abs) != 1 || abs[0].Name != tc.absent || abs[0].RemoteName != "search" || abs[0].Reason != tc.code || execution.ReasonOf(abs[0].Err) != tc.code):
				t.Errorf("absent %+v, want %s (%s)", abs, tc.absent, tc.code)
			}
			plans := compiled(t, cat)
			if _, ok := plans.Lookup("gw.search_docs"); ok != (tc.absent == "") {
				t.Errorf("search_docs registered = %v", ok)
			}
			if _, ok := plans.Lookup("gw.delete"); ok {
				t.Error("an unbound tool was registered")
			}
			if _, err := call(t, plans, "echo_text", `{"text":"hi"}`); err != nil {
				t.Errorf("the present tool: %v", err)
			}
		})
	}

	t.Run("catalog-wide problems still fail", func(t *testing.T) {
		d := newDocs(nil)
		cs, mon := connect(t, d.server, "2025-11-25")
		_, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), readBindings(),
			&mcpimport.Options{AllowAbsent: true, Limits: mcpimport.Limits{Tools: 2}})
		if execution.ReasonOf(err) != mcpimport.CatalogTooLarge {
			t.Errorf("err = %v, want %s", err, mcpimport.CatalogTooLarge)
		}
	})

	t.Run("every tool absent", func(t *testing.T) {
		d := newDocs(nil)
		d.server.RemoveTools("search", "echo")
		cs, mon := connect(t, d.server, "2025-11-25")
		cat, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), readBindings(), allow)
		if err != nil {
			t.Fatal(err)
		}
		if len(cat.Snapshot().Entries()) != 0 || len(cat.Absent()) != 2 {
			t.Errorf("entries %v, absent %v: want none and both", cat.Snapshot().Entries(), cat.Absent())
		}
	})
}

// TestAbsentToolComesBack: a bound tool removed upstream is absent from the
// next discovery, the rest still import, and it is imported again once the
// server lists it again.
func TestAbsentToolComesBack(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	sess := newSession(t, cs, mon, "docs")
	allow := &mcpimport.Options{AllowAbsent: true}
	first, err := mcpimport.Discover(context.Background(), sess, readBindings(), allow)
	if err != nil {
		t.Fatal(err)
	}

	d.server.RemoveTools("search")
	waitStale(t, first)
	second, err := mcpimport.Discover(context.Background(), sess, readBindings(), allow)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Absent()) != 1 || second.Snapshot().Digest() == first.Snapshot().Digest() {
		t.Fatalf("after removal: absent %v, digest changed %v", second.Absent(), second.Snapshot().Digest() != first.Snapshot().Digest())
	}
	if _, err := call(t, compiled(t, second), "echo_text", `{"text":"hi"}`); err != nil {
		t.Errorf("the remaining tool: %v", err)
	}
	_, err = call(t, compiled(t, first), "search_docs", `{"q":"x"}`)
	wantCode(t, err, mcpimport.ReasonCatalogStale) // the old catalog's capability of the removed tool

	d.server.AddTool(&mcp.Tool{Name: "search", Description: "Search the documents.", InputSchema: json.RawMessage(searchInput), OutputSchema: json.RawMessage(searchOutput)}, d.search)
	waitStale(t, second)
	third, err := mcpimport.Discover(context.Background(), sess, readBindings(), allow)
	if err != nil {
		t.Fatal(err)
	}
	if len(third.Absent()) != 0 || third.Snapshot().Digest() != first.Snapshot().Digest() {
		t.Fatalf("after restoring: absent %v, digest %s, want none and %s", third.Absent(), third.Snapshot().Digest(), first.Snapshot().Digest())
	}
	if _, err := call(t, compiled(t, third), "search_docs", `{"q":"x"}`); err != nil {
		t.Errorf("the restored tool: %v", err)
	}
}

// TestRenew: a change that leaves the imported catalog as it was (an unbound
// tool added) lets the host keep its catalog, with the same registered
// capabilities, instead of swapping; a change to a bound tool does not.
func TestRenew(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	sess := newSession(t, cs, mon, "docs")
	cat, plans := imported(t, cs, mon, readBindings(), nil)
	stale := cat.Stale()

	d.server.AddTool(&mcp.Tool{Name: "fetch", Description: "Fetch.", InputSchema: json.RawMessage(echoInput)}, d.echo)
	waitStale(t, cat)
	_, err := call(t, plans, "search_docs", `{"q":"x"}`)
	wantCode(t, err, mcpimport.ReasonCatalogStale)

	same, err := mcpimport.Discover(context.Background(), sess, readBindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cat.Renew(same) {
		t.Fatal("Renew refused an identical catalog")
	}
	if cat.Stale() == stale {
		t.Error("Stale() is still the closed channel after Renew")
	}
	select {
	case <-cat.Stale():
		t.Error("the renewed catalog is stale")
	default:
	}
	if _, err := call(t, plans, "search_docs", `{"q":"x"}`); err != nil {
		t.Errorf("a call of the renewed catalog: %v", err)
	}
	if !cat.Renew(same) {
		t.Error("Renew with the same catalog twice")
	}

	// A bound tool's description changes: the digest does, and the host
	// must swap.
	d.server.AddTool(&mcp.Tool{Name: "echo", Description: "Echo, differently.", InputSchema: json.RawMessage(echoInput)}, d.echo)
	waitStale(t, cat)
	changed, err := mcpimport.Discover(context.Background(), sess, readBindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Renew(changed) {
		t.Error("Renew accepted a catalog with a changed bound tool")
	}
	_, err = call(t, plans, "search_docs", `{"q":"x"}`)
	wantCode(t, err, mcpimport.ReasonCatalogStale)

	// Another session's catalog, or none, never renews.
	cs2, mon2 := connect(t, d.server, "2025-11-25")
	other, _ := imported(t, cs2, mon2, readBindings(), nil)
	if changed.Renew(other) || cat.Renew(nil) {
		t.Error("Renew accepted a catalog of another session, or nil")
	}
}
