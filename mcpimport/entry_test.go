package mcpimport_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/canonjson"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// discoverDocs imports search and echo from a fresh docs server, search
// annotated as ann.
func discoverDocs(t *testing.T, ann *mcp.ToolAnnotations) *mcpimport.Snapshot {
	t.Helper()
	d := newDocs(nil)
	if ann != nil {
		d.server.AddTool(&mcp.Tool{Name: "search", Description: "Search the documents.", InputSchema: json.RawMessage(searchInput),
			OutputSchema: json.RawMessage(searchOutput), Annotations: ann}, d.search)
	}
	cs, mon := connect(t, d.server, "2025-11-25")
	cat, err := mcpimport.Discover(context.Background(), newSession(t, cs, mon, "docs"), readBindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cat.Snapshot()
}

// TestEntryIdentityIsItsSnapshotMember: an entry's document is its member
// of the snapshot document the digest covers, and its identity the digest
// of that member; annotations are kept beside it, outside both.
func TestEntryIdentityIsItsSnapshotMember(t *testing.T) {
	snap := discoverDocs(t, &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "<search>"})
	doc, err := snap.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var whole struct{ Entries []json.RawMessage }
	if err := json.Unmarshal(doc, &whole); err != nil {
		t.Fatal(err)
	}
	entries := snap.Entries()
	if len(entries) != len(whole.Entries) || len(entries) != 2 {
		t.Fatalf("%d entries, %d members", len(entries), len(whole.Entries))
	}
	for i, e := range entries {
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(whole.Entries[i]) {
			t.Errorf("%s: document\n%s\nwant the snapshot's member\n%s", e.Name, b, whole.Entries[i])
		}
		want, _ := canonjson.Digest(whole.Entries[i])
		if id, err := e.Identity(); err != nil || id != want {
			t.Errorf("%s: identity %s (%v), want %s", e.Name, id, err, want)
		}
		if strings.Contains(string(b), "readOnlyHint") {
			t.Errorf("%s: annotations in the entry's document: %s", e.Name, b)
		}
	}
	search := entries[1]
	if search.Name != "search_docs" || string(search.Annotations) != `{"idempotentHint":false,"readOnlyHint":true,"title":"<search>"}` {
		t.Errorf("search: annotations %s, want the remote's in canonical JSON", search.Annotations)
	}
	if entries[0].Annotations != nil {
		t.Errorf("echo lists no annotations, entry has %s", entries[0].Annotations)
	}
}

// TestEntryAnnotationsOutsideTheDigest: a change of annotations alone
// changes neither the digest nor an identity; the entries show it.
func TestEntryAnnotationsOutsideTheDigest(t *testing.T) {
	a := discoverDocs(t, &mcp.ToolAnnotations{ReadOnlyHint: true})
	b := discoverDocs(t, &mcp.ToolAnnotations{DestructiveHint: boolPtr(true)})
	if a.Digest() != b.Digest() {
		t.Errorf("digests %s and %s differ for a change of annotations", a.Digest(), b.Digest())
	}
	ea, eb := a.Entries()[1], b.Entries()[1]
	ia, _ := ea.Identity()
	ib, _ := eb.Identity()
	if ia != ib || string(ea.Annotations) == string(eb.Annotations) {
		t.Errorf("identities %s, %s; annotations %s, %s: want one identity, two annotations", ia, ib, ea.Annotations, eb.Annotations)
	}
}

func boolPtr(b bool) *bool { return &b }

func TestEntryRoundTrip(t *testing.T) {
	for _, e := range discoverDocs(t, nil).Entries() {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back mcpimport.Entry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e, back); diff != "" {
			t.Errorf("%s: round trip (-want +got):\n%s", e.Name, diff)
		}
	}
	// Whitespace in schemas read back is canonicalized away.
	var spaced mcpimport.Entry
	if err := json.Unmarshal([]byte(`{"concurrencySafe":false,"description":"d","inputSchema":{ "type" : "object" },"localName":"a","outputSchema":null,"policy":{"mode":"read","title":"A"},"remoteName":"a"}`), &spaced); err != nil {
		t.Fatal(err)
	}
	if string(spaced.InputSchema) != `{"type":"object"}` || spaced.OutputSchema != nil {
		t.Errorf("schemas %s, %s", spaced.InputSchema, spaced.OutputSchema)
	}
}

func TestEntryUnmarshalRefuses(t *testing.T) {
	const valid = `{"concurrencySafe":false,"description":"d","inputSchema":{"type":"object"},"localName":"a","outputSchema":null,"policy":{"mode":"read","title":"A"},"remoteName":"a"}`
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown member", strings.Replace(valid, `"remoteName"`, `"extra":1,"remoteName"`, 1), `unknown field "extra"`},
		{"no local name", strings.Replace(valid, `"localName":"a"`, `"localName":""`, 1), "localName and remoteName are required"},
		{"another mode", strings.Replace(valid, `"mode":"read"`, `"mode":"admin"`, 1), `policy mode "admin"`},
		{"no input schema", strings.Replace(valid, `"inputSchema":{"type":"object"}`, `"inputSchema":null`, 1), "inputSchema is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e mcpimport.Entry
			if err := json.Unmarshal([]byte(tc.doc), &e); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
	var e mcpimport.Entry
	if err := json.Unmarshal([]byte(valid), &e); err != nil {
		t.Errorf("valid: %v", err)
	}
}
