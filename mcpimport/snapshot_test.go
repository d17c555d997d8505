package mcpimport_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func digestOf(t *testing.T, d *docs, version string, bindings map[string]mcpimport.Binding) *mcpimport.Snapshot {
	t.Helper()
	cs, mon := connect(t, d.server, version)
	cat, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), bindings, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cat.Snapshot()
}

func TestDigestIsStable(t *testing.T) {
	base := digestOf(t, newDocs(nil), "2025-11-25", readBindings())
	if again := digestOf(t, newDocs(nil), "2025-11-25", readBindings()); again.Digest() != base.Digest() {
		t.Errorf("the same catalog discovered twice: %s, then %s", base.Digest(), again.Digest())
	}
	// The same catalog listed in another order, one tool per page, with its
	// schema's keys in another order and numbers spelled differently.
	reordered := newDocs(&docsOptions{
		pageSize: 1,
		reverse:  true,
		searchIn: `{"additionalProperties":false,"required":["q"],"properties":{"n":{"minimum":0.0,"type":"integer"},"mode":{"type":"string"},"q":{"minLength":1e0,"description":"What to look for","type":"string"}},"type":"object"}`,
	})
	if got := digestOf(t, reordered, "2025-11-25", readBindings()); got.Digest() != base.Digest() {
		t.Errorf("the same catalog in another order: %s, want %s", got.Digest(), base.Digest())
	}
}

func TestDigestChangesWithTheCatalog(t *testing.T) {
	base := digestOf(t, newDocs(nil), "2025-11-25", readBindings()).Digest()
	rebind := func(f func(*mcpimport.Binding)) map[string]mcpimport.Binding {
		bs := readBindings()
		b := bs["search"]
		f(&b)
		bs["search"] = b
		return bs
	}
	for _, tc := range []struct {
		name     string
		docs     *docsOptions
		version  string
		bindings map[string]mcpimport.Binding
	}{
		{"description", &docsOptions{description: "Search the documents!"}, "", nil},
		{"input schema", &docsOptions{searchIn: strings.Replace(searchInput, `"minLength":1`, `"minLength":2`, 1)}, "", nil},
		{"output schema", &docsOptions{searchOut: strings.Replace(searchOutput, `"required":["count","tags"]`, `"required":["count"]`, 1)}, "", nil},
		{"root $schema", &docsOptions{searchIn: `{"$schema":"https://json-schema.org/draft/2020-12/schema",` + searchInput[1:]}, "", nil},
		{"protocol version", nil, "2026-07-28", nil},
		{"local name", nil, "", rebind(func(b *mcpimport.Binding) { b.Name = "find_docs" })},
		{"policy title", nil, "", rebind(func(b *mcpimport.Binding) { b.Title = "Find documents" })},
		{"concurrency", nil, "", rebind(func(b *mcpimport.Binding) { b.ConcurrencySafe = false })},
		{"selection", nil, "", map[string]mcpimport.Binding{"search": readBindings()["search"]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version := tc.version
			if version == "" {
				version = "2025-11-25"
			}
			bindings := tc.bindings
			if bindings == nil {
				bindings = readBindings()
			}
			if got := digestOf(t, newDocs(tc.docs), version, bindings).Digest(); got == base {
				t.Errorf("a changed %s left the digest at %s", tc.name, got)
			}
		})
	}
	// Host-only settings that are not part of the catalog's identity.
	same := rebind(func(b *mcpimport.Binding) { b.Scopes = []string{"other"}; b.Description = "Local words." })
	if got := digestOf(t, newDocs(nil), "2025-11-25", same).Digest(); got != base {
		t.Errorf("local scopes or description changed the digest")
	}
}

func TestRootSchemaDeclarationIsKept(t *testing.T) {
	in := `{"$schema":"https://json-schema.org/draft/2020-12/schema",` + searchInput[1:]
	snap := digestOf(t, newDocs(&docsOptions{searchIn: in}), "2025-11-25", readBindings())
	for _, e := range snap.Entries() {
		if e.RemoteName == "search" && !strings.HasPrefix(string(e.InputSchema), `{"$schema":"https://json-schema.org/draft/2020-12/schema",`) {
			t.Errorf("input schema in the snapshot: %s", e.InputSchema)
		}
	}
}

// TestSnapshotGolden pins the canonical document and its digest, so that a
// change to the identity is deliberate; and recomputes the digest with
// encoding/json alone (sorted keys, compact), which agrees with RFC 8785 for
// this document.
func TestSnapshotGolden(t *testing.T) {
	snap := digestOf(t, newDocs(nil), "2025-11-25", readBindings())
	got, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/snapshot-v1.golden.json"
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.TrimSpace(string(want)), string(got)); diff != "" {
		t.Errorf("snapshot document changed (-golden +got):\n%s", diff)
	}

	var doc map[string]any
	if err := json.Unmarshal(want, &doc); err != nil {
		t.Fatal(err)
	}
	digest := doc["revisionDigest"]
	delete(doc, "revisionDigest")
	b, _ := json.Marshal(doc)
	sum := sha256.Sum256(b)
	if independent := "sha256:" + hex.EncodeToString(sum[:]); independent != digest || digest != snap.Digest() {
		t.Errorf("digest %s, golden %s, recomputed %s", snap.Digest(), digest, independent)
	}
}

func TestSnapshotIsDetached(t *testing.T) {
	snap := digestOf(t, newDocs(nil), "2025-11-25", readBindings())
	es := snap.Entries()
	es[0].InputSchema[0] = 'X'
	es[0].Name = "changed"
	if again := snap.Entries(); again[0].InputSchema[0] != '{' || again[0].Name == "changed" {
		t.Error("changing what Entries returned changed the snapshot")
	}
}

// TestEntriesSortedByLocalName: entries (and registrations) are in local
// name order, even when that differs from the remote names' order.
func TestEntriesSortedByLocalName(t *testing.T) {
	bindings := map[string]mcpimport.Binding{
		"echo":   {Name: "z_echo", Title: "Echo text", NoScopeValidator: true},
		"search": {Name: "a_search", Title: "Search documents", NoScopeValidator: true},
	}
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	cat, _ := imported(t, cs, mon, bindings, nil)
	var names []string
	for _, e := range cat.Snapshot().Entries() {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"a_search", "z_echo"}, names); diff != "" {
		t.Errorf("entries not sorted by local name (-want +got):\n%s", diff)
	}
	var registered []string
	for _, c := range cat.Register(agnara.New("gw2", nil)) {
		registered = append(registered, c.Name())
	}
	if diff := cmp.Diff([]string{"a_search", "z_echo"}, registered); diff != "" {
		t.Errorf("registration order (-want +got):\n%s", diff)
	}
}
