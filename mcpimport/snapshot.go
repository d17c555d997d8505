package mcpimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/canonjson"
)

// Snapshot schema versions: read catalogs ([Discover]) have version 1, write
// catalogs ([DiscoverWrites]) version 2, which adds each entry's effect and
// host authorization, and catalogs of resources and prompts
// ([DiscoverFeatures]) version 3, whose entries are in lists of their own
// ("resources", "resourceTemplates", "prompts") beside an empty "entries".
const (
	SnapshotSchemaVersion        = 1
	WriteSnapshotSchemaVersion   = 2
	FeatureSnapshotSchemaVersion = 3
)

// Mode is the policy mode of a snapshot entry. It follows from the entry
// point: [Discover] imports reads, [DiscoverWrites] writes.
type Mode string

// The policy modes.
const (
	// ModeRead: the host declared the remote tool read-only.
	ModeRead Mode = "read"
	// ModeConfirm: the remote tool writes; every call needs a durable
	// approval.
	ModeConfirm Mode = "confirm"
)

// Snapshot is the detached, immutable record of one discovery: which remote
// tools were imported, under which declarations, with which schemas. Its
// revision digest identifies all of it, so that two hosts (or one host at
// two times) can tell whether they import the same thing.
//
// A Snapshot is safe for concurrent use; its accessors return copies.
type Snapshot struct {
	schemaVersion   int
	serverID        string
	protocolVersion string
	entries         []Entry // sorted by Name
	digest          string
	// Resources, resource templates and prompts (features.go), each sorted
	// by Name: version 3 only.
	resources, templates []ResourceEntry
	prompts              []PromptEntry
}

// Entry is one imported tool in a [Snapshot].
type Entry struct {
	// Name is the local capability name.
	Name string
	// RemoteName is the tool's name on the remote server.
	RemoteName string
	// Title is the policy's title.
	Title string
	// Mode is the policy's mode: [ModeRead] or [ModeConfirm].
	Mode Mode
	// Effect is a write's declared effect, [approval.EffectWrite] or
	// [approval.EffectDestructive], or "" for reads.
	Effect approval.Effect
	// Authorization is the host's authorization of a write, or nil for
	// reads.
	Authorization *Authorization
	// Description is the remote tool's description, as listed.
	Description string
	// InputSchema is the remote input schema in canonical JSON (RFC 8785),
	// a root "$schema" included.
	InputSchema json.RawMessage
	// OutputSchema is the remote output schema in canonical JSON, or nil
	// when the tool advertises none.
	OutputSchema json.RawMessage
	// ConcurrencySafe is the host's concurrency declaration.
	ConcurrencySafe bool
	// Profile is the schema profile the tool was imported under. It is
	// part of the digest (as "schemaProfile", omitted for [ProfileStrict],
	// so that strict snapshots keep their documents and digests).
	Profile Profile
	// Annotations are the remote tool's annotations as listed, in
	// canonical JSON, or nil when it lists none. They are hints: they
	// grant nothing, are never published by [Catalog.Register], and are
	// part of neither the digest nor the entry's [Entry.Identity] (the
	// entry identity is the contract's: names, policy, description,
	// schemas and the host's declarations). A host that wants to notice a
	// change of them, as the gateway's lock file does, compares them
	// itself.
	Annotations json.RawMessage
	// UI is the MCP App view the remote tool links, as discovery read it
	// ([UI]), or nil when it links none. Unlike the annotations it is part
	// of the entry's document, its identity and the digest (as "ui",
	// omitted when nil, so that entries without one keep their documents
	// and identities): the page is code a host runs.
	UI *UI
}

// Identity returns the entry's identity: "sha256:" and the hex SHA-256 of
// its canonical document ([Entry.MarshalJSON]), the member of the snapshot
// document that the revision digest covers for this tool. Two entries with
// the same identity import the same remote definition under the same host
// declaration. It fails only for an entry whose schemas are not JSON.
func (e Entry) Identity() (string, error) {
	b, err := e.MarshalJSON()
	if err != nil {
		return "", err
	}
	return canonjson.Digest(b)
}

// MarshalJSON returns the entry's canonical document, as it appears among
// the entries of the snapshot document ([Snapshot.MarshalJSON]):
//
//	{"concurrencySafe":false,"description":"...","inputSchema":{...},
//	 "localName":"search","outputSchema":null,"policy":{"mode":"read","title":"..."},
//	 "remoteName":"remote.search"}
//
// An entry with a [UI] adds it as "ui" (the page split into lines, each
// but the last ending in "\n", so that a change shows as a line changed):
//
//	"ui":{"csp":{"connectDomains":["https://api.example.com"]},
//	      "html":["<!doctype html>\n","<p>hello</p>\n"],
//	      "mimeType":"text/html;profile=mcp-app","prefersBorder":false,"uri":"ui://viewer/index.html"}
//
// Annotations are not part of it.
func (e Entry) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(e.doc())
	if err != nil {
		return nil, err
	}
	return canonjson.Canonicalize(b)
}

// UnmarshalJSON reads an entry's document ([Entry.MarshalJSON]) back,
// strictly: an unknown member, a missing name or input schema, or a mode
// other than read and confirm is an error. Schemas are kept in canonical
// form; Annotations are left nil. A "ui" member is checked as discovery
// checks a view's URI, media type and policy (not its size).
func (e *Entry) UnmarshalJSON(b []byte) error {
	var d entryDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return fmt.Errorf("mcpimport: entry: %w", err)
	}
	switch {
	case d.LocalName == "" || d.RemoteName == "":
		return fmt.Errorf("mcpimport: entry: localName and remoteName are required")
	case d.Policy.Mode != ModeRead && d.Policy.Mode != ModeConfirm:
		return fmt.Errorf("mcpimport: entry %q: policy mode %q: want %q or %q", d.LocalName, d.Policy.Mode, ModeRead, ModeConfirm)
	case len(d.InputSchema) == 0 || string(d.InputSchema) == "null":
		return fmt.Errorf("mcpimport: entry %q: inputSchema is required", d.LocalName)
	}
	in, err := canonjson.Canonicalize(d.InputSchema)
	if err != nil {
		return fmt.Errorf("mcpimport: entry %q: inputSchema: %w", d.LocalName, err)
	}
	var out json.RawMessage
	if len(d.OutputSchema) > 0 && string(d.OutputSchema) != "null" {
		if out, err = canonjson.Canonicalize(d.OutputSchema); err != nil {
			return fmt.Errorf("mcpimport: entry %q: outputSchema: %w", d.LocalName, err)
		}
	}
	ui, err := d.UI.ui()
	if err != nil {
		return fmt.Errorf("mcpimport: entry %q: ui: %w", d.LocalName, err)
	}
	*e = Entry{
		Name: d.LocalName, RemoteName: d.RemoteName, Title: d.Policy.Title, Mode: d.Policy.Mode, Effect: d.Policy.Effect,
		Authorization: d.Authorization, Description: d.Description, InputSchema: in, OutputSchema: out,
		ConcurrencySafe: d.ConcurrencySafe, Profile: d.SchemaProfile, UI: ui,
	}
	return nil
}

// doc is the entry's member of the snapshot document.
func (e Entry) doc() entryDoc {
	out := e.OutputSchema
	if out == nil {
		out = json.RawMessage("null")
	}
	return entryDoc{
		Authorization:   e.Authorization,
		ConcurrencySafe: e.ConcurrencySafe,
		Description:     e.Description,
		InputSchema:     e.InputSchema,
		LocalName:       e.Name,
		OutputSchema:    out,
		Policy:          policyDoc{Effect: e.Effect, Mode: e.Mode, Title: e.Title},
		RemoteName:      e.RemoteName,
		SchemaProfile:   e.Profile,
		UI:              newUIDoc(e.UI),
	}
}

// Authorization is the host's explicit authorization of a remote write tool:
// which host binding and which scope grant it, at which revisions.
type Authorization struct {
	BindingID       string `json:"bindingId"`
	BindingRevision string `json:"bindingRevision"`
	ScopeID         string `json:"scopeId"`
	ScopeRevision   string `json:"scopeRevision"`
}

// SchemaVersion returns the snapshot's schema version:
// [SnapshotSchemaVersion] for reads, [WriteSnapshotSchemaVersion] for writes.
func (s *Snapshot) SchemaVersion() int { return s.schemaVersion }

// ServerID returns the host's name for the remote server.
func (s *Snapshot) ServerID() string { return s.serverID }

// ProtocolVersion returns the protocol version the session negotiated.
func (s *Snapshot) ProtocolVersion() string { return s.protocolVersion }

// Digest returns the revision digest: "sha256:" and the hex SHA-256 of the
// snapshot's canonical document (see [Snapshot.MarshalJSON]) without the
// digest itself.
func (s *Snapshot) Digest() string { return s.digest }

// Entries returns the imported tools, sorted by local name.
func (s *Snapshot) Entries() []Entry {
	out := make([]Entry, len(s.entries))
	for i, e := range s.entries {
		e.InputSchema = slices.Clone(e.InputSchema)
		e.OutputSchema = slices.Clone(e.OutputSchema)
		e.Annotations = slices.Clone(e.Annotations)
		if e.Authorization != nil {
			a := *e.Authorization
			e.Authorization = &a
		}
		e.UI = e.UI.clone()
		out[i] = e
	}
	return out
}

// MarshalJSON returns the snapshot's canonical document (RFC 8785: sorted
// keys, no insignificant whitespace, numbers in ECMAScript form) with its
// revision digest:
//
//	{"entries":[{"concurrencySafe":false,"description":"...","inputSchema":{...},
//	  "localName":"search","outputSchema":null,"policy":{"mode":"read","title":"..."},
//	  "remoteName":"remote.search"}],
//	 "protocolVersion":"2025-11-25","revisionDigest":"sha256:...","schemaVersion":1,"serverId":"documents"}
//
// The digest is computed over the same document without "revisionDigest".
// Write snapshots (schema version 2) add "authorization" to each entry and
// "effect" to its policy (mode "confirm"). Snapshots of resources and
// prompts (schema version 3) add "resources", "resourceTemplates" and
// "prompts" (see [Snapshot.Resources], [Snapshot.Prompts]).
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	return s.document(true)
}

type entryDoc struct {
	Authorization   *Authorization  `json:"authorization,omitempty"`
	ConcurrencySafe bool            `json:"concurrencySafe"`
	Description     string          `json:"description"`
	InputSchema     json.RawMessage `json:"inputSchema"`
	LocalName       string          `json:"localName"`
	OutputSchema    json.RawMessage `json:"outputSchema"`
	Policy          policyDoc       `json:"policy"`
	RemoteName      string          `json:"remoteName"`
	SchemaProfile   Profile         `json:"schemaProfile,omitempty"`
	UI              *uiDoc          `json:"ui,omitempty"`
}

type policyDoc struct {
	Effect approval.Effect `json:"effect,omitempty"`
	Mode   Mode            `json:"mode"`
	Title  string          `json:"title"`
}

type snapshotDoc struct {
	Entries         []entryDoc `json:"entries"`
	ProtocolVersion string     `json:"protocolVersion"`
	RevisionDigest  string     `json:"revisionDigest,omitempty"`
	SchemaVersion   int        `json:"schemaVersion"`
	ServerID        string     `json:"serverId"`
	// Version 3 only (features.go); nil, and absent, in versions 1 and 2.
	Prompts           *[]promptDoc   `json:"prompts,omitempty"`
	ResourceTemplates *[]resourceDoc `json:"resourceTemplates,omitempty"`
	Resources         *[]resourceDoc `json:"resources,omitempty"`
}

func (s *Snapshot) document(withDigest bool) ([]byte, error) {
	doc := snapshotDoc{
		Entries:         make([]entryDoc, len(s.entries)),
		ProtocolVersion: s.protocolVersion,
		SchemaVersion:   s.schemaVersion,
		ServerID:        s.serverID,
	}
	if withDigest {
		doc.RevisionDigest = s.digest
	}
	for i, e := range s.entries {
		doc.Entries[i] = e.doc()
	}
	s.featureDocs(&doc)
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return canonjson.Canonicalize(b)
}

// seal computes the snapshot's digest.
func (s *Snapshot) seal() error {
	b, err := s.document(false)
	if err != nil {
		return err
	}
	s.digest, err = canonjson.Digest(b)
	return err
}
