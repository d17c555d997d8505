package mcpimport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
)

// Each limit: one test at the limit (accepted) and one past it (refused with
// its code).

func discoverWith(t *testing.T, d *docs, limits mcpimport.Limits) error {
	t.Helper()
	cs, mon := connect(t, d.server, "2025-11-25")
	_, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), readBindings(), &mcpimport.Options{Limits: limits})
	return err
}

func TestDiscoveryLimits(t *testing.T) {
	// Measure the fixture's catalog the way the limits count it.
	d := newDocs(nil)
	cs, _ := connect(t, d.server, "2025-11-25")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	catalogBytes := 0
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool)
		catalogBytes += len(b)
	}
	if len(res.Tools) != 3 {
		t.Fatalf("fixture lists %d tools, want 3", len(res.Tools))
	}
	snap := digestOf(t, newDocs(nil), "2025-11-25", readBindings())
	schemaBytes := 0
	for _, e := range snap.Entries() {
		schemaBytes = max(schemaBytes, len(e.InputSchema), len(e.OutputSchema))
	}
	longDesc := strings.Repeat("d", 100)

	for _, tc := range []struct {
		name       string
		docs       *docsOptions
		at, past   mcpimport.Limits
		pastCode   execution.Reason
		pastReason string
	}{
		{"pages", &docsOptions{pageSize: 1}, mcpimport.Limits{Pages: 3}, mcpimport.Limits{Pages: 2}, mcpimport.CatalogTooLarge, "more than 2 pages"},
		{"tools", nil, mcpimport.Limits{Tools: 3}, mcpimport.Limits{Tools: 2}, mcpimport.CatalogTooLarge, "more than 2 tools"},
		{"catalog bytes", nil, mcpimport.Limits{CatalogBytes: catalogBytes}, mcpimport.Limits{CatalogBytes: catalogBytes - 1}, mcpimport.CatalogTooLarge, "larger than"},
		{"schema bytes", nil, mcpimport.Limits{SchemaBytes: schemaBytes}, mcpimport.Limits{SchemaBytes: schemaBytes - 1}, mcpimport.SchemaUnsupported, "over the limit"},
		{"description bytes", &docsOptions{description: longDesc}, mcpimport.Limits{DescriptionBytes: 100}, mcpimport.Limits{DescriptionBytes: 99}, mcpimport.DescriptionTooLarge, "larger than 99 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := discoverWith(t, newDocs(tc.docs), tc.at); err != nil {
				t.Fatalf("at the limit: %v", err)
			}
			err := discoverWith(t, newDocs(tc.docs), tc.past)
			if execution.ReasonOf(err) != tc.pastCode || !strings.Contains(err.Error(), tc.pastReason) {
				t.Fatalf("past the limit: %v, want %s (%s)", err, tc.pastCode, tc.pastReason)
			}
		})
	}
}

func TestCallLimits(t *testing.T) {
	// Arguments: padded with insignificant whitespace to an exact size.
	const argBytes = 1000
	args := func(n int) string {
		s := `{"text":"hi"}`
		return s[:len(s)-1] + strings.Repeat(" ", n-len(s)) + "}"
	}
	// Results: "bigtext" with 2000 characters of text, and the structured
	// content of a search for q.
	const textBytes = 2000
	q := strings.Repeat("q", 60)
	structuredBytes := len(fmt.Sprintf(`{"count":%d,"tags":["go",%q]}`, len(q), q))
	bigtext := `{"q":"q","mode":"bigtext","n":2000}`
	bigStructured := `{"q":"` + q + `"}`
	smallStructured := len(`{"count":1,"tags":["go","q"]}`)

	for _, tc := range []struct {
		name             string
		tool, args       string
		atLimit, overRun mcpimport.Limits
		code             execution.Reason
		sent             bool // whether the refused call reached the remote server
	}{
		{"argument bytes", "echo_text", args(argBytes), mcpimport.Limits{ObjectBytes: argBytes}, mcpimport.Limits{ObjectBytes: argBytes - 1}, mcpimport.ReasonInvalidArguments, false},
		{"block bytes", "search_docs", bigtext, mcpimport.Limits{BlockBytes: textBytes}, mcpimport.Limits{BlockBytes: textBytes - 1}, mcpimport.ReasonResultTooLarge, true},
		{"result bytes", "search_docs", bigtext, mcpimport.Limits{ResultBytes: textBytes + smallStructured}, mcpimport.Limits{ResultBytes: textBytes + smallStructured - 1}, mcpimport.ReasonResultTooLarge, true},
		{"structured bytes", "search_docs", bigStructured, mcpimport.Limits{ObjectBytes: structuredBytes}, mcpimport.Limits{ObjectBytes: structuredBytes - 1}, mcpimport.ReasonResultTooLarge, true},
		{"content blocks", "search_docs", `{"q":"q","mode":"blocks","n":5}`, mcpimport.Limits{ContentBlocks: 5}, mcpimport.Limits{ContentBlocks: 4}, mcpimport.ReasonResultTooLarge, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDocs(nil)
			cs, mon := connect(t, d.server, "2025-11-25")
			_, plans := imported(t, cs, mon, readBindings(), &mcpimport.Options{Limits: tc.atLimit})
			if _, err := call(t, plans, tc.tool, tc.args); err != nil {
				t.Fatalf("at the limit: %v", err)
			}
			_, plans = imported(t, cs, mon, readBindings(), &mcpimport.Options{Limits: tc.overRun})
			before := d.calls.Load()
			_, err := call(t, plans, tc.tool, tc.args)
			wantCode(t, err, tc.code)
			if sent := d.calls.Load() > before; sent != tc.sent {
				t.Errorf("the refused call reached the remote server: %v, want %v", sent, tc.sent)
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	want := mcpimport.Limits{Pages: 32, Tools: 256, CatalogBytes: 1 << 20, SchemaBytes: 64 << 10, DescriptionBytes: 8 << 10, ObjectBytes: 64 << 10, ContentBlocks: 128, BlockBytes: 1 << 20, ResultBytes: 4 << 20, CallTimeout: 30e9, Resources: 256, Prompts: 256, UIBytes: 1 << 20}
	got := mcpimport.DefaultLimits()
	if got != want {
		t.Errorf("DefaultLimits() = %v", got)
	}
	// A caller's copy is its own: changing it raises no ceiling.
	got.ObjectBytes *= 2
	if mcpimport.DefaultLimits() != want {
		t.Error("changing a returned Limits changed the defaults")
	}
	// Every limit can be lowered and none raised.
	for _, raise := range []mcpimport.Limits{
		{Pages: 33}, {Tools: 257}, {CatalogBytes: 1<<20 + 1}, {SchemaBytes: 64<<10 + 1},
		{DescriptionBytes: 8<<10 + 1}, {ObjectBytes: 64<<10 + 1}, {ContentBlocks: 129},
		{BlockBytes: 1<<20 + 1}, {ResultBytes: 4<<20 + 1},
		{Resources: 257}, {Prompts: 257}, {UIBytes: 1<<20 + 1},
	} {
		err := discoverWith(t, newDocs(nil), raise)
		if execution.ReasonOf(err) != mcpimport.BindingInvalid {
			t.Errorf("%v: err = %v, want %s", raise, err, mcpimport.BindingInvalid)
		}
	}
}

func TestSupportedProtocolVersions(t *testing.T) {
	want := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	got := mcpimport.SupportedProtocolVersions()
	if !slices.Equal(got, want) {
		t.Fatalf("SupportedProtocolVersions() = %v, want %v", got, want)
	}
	// Changing the returned slice widens nothing.
	got[0] = "1999-01-01"
	if m := mcpimport.NewMonitor(); m.AcceptProtocolVersion("1999-01-01") == nil {
		t.Error("a version added to a returned slice was accepted")
	}
	if !slices.Equal(mcpimport.SupportedProtocolVersions(), want) {
		t.Error("changing the returned slice changed the supported versions")
	}
}
