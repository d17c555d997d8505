package mcpimport_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
)

// A draft-07 tool as a zod-to-json-schema or pydantic based server
// publishes it: an open object, "definitions" and "$ref", a "default".
const (
	filesInput = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",` +
		`"properties":{"path":{"$ref":"#/definitions/path"},"limit":{"type":"integer","minimum":1,"default":10},` +
		`"filter":{"$ref":"#/definitions/filter"}},"required":["path"],` +
		`"definitions":{"path":{"type":"string","minLength":1},"filter":{"type":"object","properties":{"ext":{"type":"string"}},"required":["ext"]}}}`
	filesOutput = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",` +
		`"properties":{"entries":{"type":"array","items":{"$ref":"#/definitions/entry"}}},"required":["entries"],` +
		`"definitions":{"entry":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
)

// files is a remote server with one draft-07 tool, "list_files". It records
// the arguments it receives, exactly as sent.
type files struct {
	server *mcp.Server
	mu     sync.Mutex
	args   []string
	out    any // structured content to answer with
}

func newFiles(input, output string) *files {
	f := &files{out: map[string]any{"entries": []any{map[string]any{"name": "a.txt"}}}}
	f.server = mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	tool := &mcp.Tool{Name: "list_files", Description: "List files.", InputSchema: json.RawMessage(input)}
	if output != "" {
		tool.OutputSchema = json.RawMessage(output)
	}
	f.server.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.mu.Lock()
		f.args = append(f.args, string(req.Params.Arguments))
		out := f.out
		f.mu.Unlock()
		return &mcp.CallToolResult{Content: text("listed"), StructuredContent: out}, nil
	})
	return f
}

func (f *files) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.args...)
}

func standardBinding() map[string]mcpimport.Binding {
	return map[string]mcpimport.Binding{
		"list_files": {Name: "list_files", Title: "List files", NoScopeValidator: true, ConcurrencySafe: true, Profile: mcpimport.ProfileStandard},
	}
}

func discoverFiles(t *testing.T, f *files, bindings map[string]mcpimport.Binding) (*mcpimport.Catalog, error) {
	t.Helper()
	cs, mon := connect(t, f.server, "2025-11-25")
	return mcpimport.Discover(context.Background(), newSession(t, cs, mon, "files"), bindings, nil)
}

// canonical re-encodes a JSON document with sorted keys, for comparison.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStandardProfileDiscovery(t *testing.T) {
	f := newFiles(filesInput, filesOutput)
	strict := standardBinding()
	b := strict["list_files"]
	b.Profile = mcpimport.ProfileStrict
	strict["list_files"] = b
	if _, err := discoverFiles(t, f, strict); execution.ReasonOf(err) != mcpimport.SchemaUnsupported {
		t.Fatalf("strict profile: got %v, want %s", err, mcpimport.SchemaUnsupported)
	}

	cat, err := discoverFiles(t, f, standardBinding())
	if err != nil {
		t.Fatalf("standard profile: %v", err)
	}
	e := cat.Snapshot().Entries()[0]
	if e.Profile != mcpimport.ProfileStandard {
		t.Errorf("entry profile %q", e.Profile)
	}
	// Published unchanged: the remote's schema, "$schema", "$ref",
	// "definitions" and "default" included, in canonical form.
	if diff := cmp.Diff(canonical(t, filesInput), string(e.InputSchema)); diff != "" {
		t.Errorf("input schema (-remote +snapshot):\n%s", diff)
	}
	if diff := cmp.Diff(canonical(t, filesOutput), string(e.OutputSchema)); diff != "" {
		t.Errorf("output schema (-remote +snapshot):\n%s", diff)
	}
	doc, _ := json.Marshal(cat.Snapshot())
	if !strings.Contains(string(doc), `"schemaProfile":"standard"`) {
		t.Errorf("snapshot document %s does not name the profile", doc)
	}
}

func TestStandardProfileRefusedAtDiscovery(t *testing.T) {
	for _, tc := range []struct{ name, input, output, want string }{
		{"http $ref", `{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/schema.json"}}}`, "", "external reference"},
		{"file $ref", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "", "external reference"},
		{"external $ref in the output schema", filesInput, `{"type":"object","properties":{"a":{"$ref":"https://example.com/x.json"}}}`, "output schema (standard profile): at /properties/a: external reference"},
		{"unknown $schema", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, "", `"$schema" must name draft-07, 2019-09 or 2020-12`},
		{"over the size limit", `{"type":"object","description":"` + strings.Repeat("x", 70<<10) + `"}`, "", "over the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := discoverFiles(t, newFiles(tc.input, tc.output), standardBinding())
			if execution.ReasonOf(err) != mcpimport.SchemaUnsupported || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %s with %q", err, mcpimport.SchemaUnsupported, tc.want)
			}
		})
	}
}

func TestProfileMustBeKnown(t *testing.T) {
	bs := standardBinding()
	b := bs["list_files"]
	b.Profile = "loose"
	bs["list_files"] = b
	if _, err := discoverFiles(t, newFiles(filesInput, ""), bs); execution.ReasonOf(err) != mcpimport.BindingInvalid {
		t.Fatalf("got %v, want %s", err, mcpimport.BindingInvalid)
	}
}

func TestStandardProfileCalls(t *testing.T) {
	f := newFiles(filesInput, filesOutput)
	cs, mon := connect(t, f.server, "2025-11-25")
	_, plans := imported(t, cs, mon, standardBinding(), nil)

	// Every violation, with its path; nothing is sent.
	_, err := call(t, plans, "list_files", `{"limit":0,"filter":{"ext":1}}`)
	var fail *execution.Failure
	if !errors.As(err, &fail) || fail.Code != execution.InvalidInput {
		t.Fatalf("got %v, want invalid_input", err)
	}
	var paths []string
	for _, v := range fail.Details["violations"].([]execution.Violation) {
		paths = append(paths, v.Path)
	}
	if diff := cmp.Diff([]string{"/filter/ext", "/limit", "/path"}, paths); diff != "" {
		t.Errorf("violation paths (-want +got):\n%s", diff)
	}
	if n := len(f.received()); n != 0 {
		t.Fatalf("invalid arguments reached the remote %d times", n)
	}

	// Defaults are never applied, and open objects stay open: the remote
	// receives exactly the arguments sent.
	for _, args := range []string{`{"path":"/tmp"}`, `{"path":"/tmp","extra":[1,2],"filter":{"ext":"go","more":true}}`} {
		env, err := call(t, plans, "list_files", args)
		if err != nil {
			t.Fatalf("call %s: %v", args, err)
		}
		if got := f.received(); got[len(got)-1] != args {
			t.Errorf("remote received %s, want %s", got[len(got)-1], args)
		}
		if string(env.Structured) != `{"entries":[{"name":"a.txt"}]}` {
			t.Errorf("structured %s", env.Structured)
		}
	}

	// Results are still validated against the remote output schema,
	// "$ref"s resolved within it.
	f.mu.Lock()
	f.out = map[string]any{"entries": []any{map[string]any{"size": 1}}}
	f.mu.Unlock()
	_, err = call(t, plans, "list_files", `{"path":"/tmp"}`)
	wantCode(t, err, mcpimport.ReasonResultInvalid)
}

func TestStandardProfileDigest(t *testing.T) {
	digest := func(input string, profile mcpimport.Profile) string {
		bs := standardBinding()
		b := bs["list_files"]
		b.Profile = profile
		bs["list_files"] = b
		cat, err := discoverFiles(t, newFiles(input, ""), bs)
		if err != nil {
			t.Fatal(err)
		}
		return cat.Snapshot().Digest()
	}
	base := digest(filesInput, mcpimport.ProfileStandard)
	if again := digest(filesInput, mcpimport.ProfileStandard); again != base {
		t.Fatalf("digest not stable: %s, then %s", base, again)
	}
	for name, input := range map[string]string{
		"default":     strings.Replace(filesInput, `"default":10`, `"default":20`, 1),
		"$ref target": strings.Replace(filesInput, `"minLength":1`, `"minLength":2`, 1),
		"$schema":     strings.Replace(filesInput, `draft-07/schema#`, `draft-07/schema`, 1),
	} {
		if d := digest(input, mcpimport.ProfileStandard); d == base {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	// The profile itself is part of the identity.
	closed := `{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`
	if digest(closed, mcpimport.ProfileStrict) == digest(closed, mcpimport.ProfileStandard) {
		t.Error("the same schema under two profiles has one digest")
	}
}

// A draft-07 tool imported with ProfileStandard, re-exposed by mcpexpose
// over loopback HTTP, listed and called by the Go SDK client: the schema it
// lists is the remote's.
func TestStandardProfileReexposed(t *testing.T) {
	f := newFiles(filesInput, filesOutput)
	cat, err := discoverFiles(t, f, standardBinding())
	if err != nil {
		t.Fatal(err)
	}
	app := agnara.New("gw", nil)
	exp := mcpexpose.New(app)
	for _, c := range cat.Register(app) {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "gw.list_files" {
		t.Fatalf("listed %v", list.Tools)
	}
	got, _ := json.Marshal(list.Tools[0].InputSchema)
	if diff := cmp.Diff(canonical(t, filesInput), canonical(t, string(got))); diff != "" {
		t.Errorf("published input schema (-remote +listed):\n%s", diff)
	}

	calls := 1 // what the remote receives: the Go call below, and the TypeScript client's when it runs (it skips without its peers)
	t.Run("TypeScript client", func(t *testing.T) { typeScriptLists(t, srv.URL, canonical(t, filesInput)); calls++ })

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gw.list_files", Arguments: map[string]any{"path": "/tmp"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	if got := f.received(); len(got) != calls || got[calls-1] != `{"path":"/tmp"}` {
		t.Errorf("remote received %v", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "gw.list_files", Arguments: map[string]any{"limit": 0}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"invalid_input"`) {
		t.Fatalf("invalid call: %v %+v", err, res)
	}
}

// typeScriptLists lists and calls gw.list_files with the TypeScript SDK
// client (conformance/ts-client.mjs), which compiles the output schemas it
// lists and validates structured content against them; the script also
// compiles the listed input schema with a strict Ajv.
func typeScriptLists(t *testing.T, url, wantInput string) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	out, err := exec.Command(node, filepath.Join("..", "conformance", "ts-client.mjs"), url, "gw.list_files", `{"path":"/tmp"}`).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v (%s)", err, out)
	}
	var got struct {
		InputSchemas map[string]json.RawMessage `json:"inputSchemas"`
		InputCheck   struct {
			Compiled bool   `json:"compiled"`
			Valid    bool   `json:"valid"`
			Error    string `json:"error"`
		} `json:"inputCheck"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Result.Content) == 0 || got.Result.IsError {
		t.Fatalf("TypeScript client printed %q", out)
	}
	if diff := cmp.Diff(wantInput, canonical(t, string(got.InputSchemas["gw.list_files"]))); diff != "" {
		t.Errorf("input schema the TypeScript client lists (-remote +listed):\n%s", diff)
	}
	// A strict validating client (Ajv, strict mode, the schema's draft)
	// compiles the schema as listed, its "$ref"s resolving within it, and
	// accepts the arguments agnara accepted.
	if c := got.InputCheck; !c.Compiled || !c.Valid {
		t.Errorf("strict Ajv: compiled %v (%s), arguments valid %v", c.Compiled, c.Error, c.Valid)
	}
}

func TestStandardProfileWrites(t *testing.T) {
	f := newFiles(filesInput, "")
	bindings := func(p mcpimport.Profile) map[string]mcpimport.WriteBinding {
		return map[string]mcpimport.WriteBinding{"list_files": {
			Name: "write_files", Title: "Write files", Effect: approval.EffectWrite,
			ScopeValidator: func(context.Context, policy.Principal, json.RawMessage) error { return nil },
			BindingID:      "files", BindingRevision: "1", ScopeID: "sandbox", ScopeRevision: "1",
			Profile: p,
		}}
	}
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	t.Cleanup(func() { store.Close() })
	cs, mon := connect(t, f.server, "2025-11-25")
	sess := newSession(t, cs, mon, "files")
	if _, err := mcpimport.DiscoverWrites(context.Background(), sess, bindings(mcpimport.ProfileStrict), &mcpimport.WriteOptions{Approvals: store}); execution.ReasonOf(err) != mcpimport.SchemaUnsupported {
		t.Fatalf("strict profile: got %v, want %s", err, mcpimport.SchemaUnsupported)
	}
	cat, err := mcpimport.DiscoverWrites(context.Background(), sess, bindings(mcpimport.ProfileStandard), &mcpimport.WriteOptions{Approvals: store})
	if err != nil {
		t.Fatalf("standard profile: %v", err)
	}
	if e := cat.Snapshot().Entries()[0]; e.Profile != mcpimport.ProfileStandard || string(e.InputSchema) != canonical(t, filesInput) {
		t.Fatalf("entry %+v", e)
	}
}
