package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/google/go-cmp/cmp"
)

func testPin(upstream, name, description string) gateway.Pin {
	return gateway.Pin{Upstream: upstream, Entry: mcpimport.Entry{
		Name: name, RemoteName: "remote_" + name, Title: "The " + name + " tool", Mode: mcpimport.ModeRead,
		Description: description, InputSchema: json.RawMessage(`{"properties":{"q":{"type":"string"}},"type":"object"}`),
		Annotations: json.RawMessage(`{"readOnlyHint":true}`),
	}}
}

func mustLock(t *testing.T, pins ...gateway.Pin) *gateway.Lock {
	t.Helper()
	l, err := gateway.NewLock(pins)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLockFileRoundTrip: the lock file reads back as written, sorted by
// upstream and name, the upstream's words unescaped, and is replaced whole.
func TestLockFileRoundTrip(t *testing.T) {
	lock := mustLock(t, testPin("wiki", "search", "Search the wiki."), testPin("docs", "find", "Find <b>documents</b> & more."))
	b, err := lock.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, `"description": "Find <b>documents</b> & more."`) {
		t.Errorf("the description is escaped or missing:\n%s", text)
	}
	if strings.Index(text, `"upstream": "docs"`) > strings.Index(text, `"upstream": "wiki"`) {
		t.Errorf("pins not sorted by upstream:\n%s", text)
	}
	back, err := gateway.ParseLock("gateway.lock", b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lock.Pins(), back.Pins()); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "gateway.lock")
	os.WriteFile(path, []byte("an older lock"), 0o644)
	if err := lock.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(path)
	if err != nil || string(onDisk) != text {
		t.Errorf("the file holds %q (%v), want the document", onDisk, err)
	}
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("files left beside the lock: %v", files)
	}
	if _, err := gateway.ReadLock(path); err != nil {
		t.Errorf("ReadLock: %v", err)
	}
	if p, ok := back.Pin("search"); !ok || p.Upstream != "wiki" || p.Entry.Description != "Search the wiki." {
		t.Errorf("Pin(search) = %+v, %v", p, ok)
	}
}

// TestParseLockRefuses: a lock file that is not exactly what accept wrote
// is refused, with what is wrong.
func TestParseLockRefuses(t *testing.T) {
	good, err := mustLock(t, testPin("docs", "find", "Find documents.")).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := mustLock(t, testPin("wiki", "find", "Find pages.")).MarshalJSON()
	var a, b map[string]any
	json.Unmarshal(good, &a)
	json.Unmarshal(other, &b)
	a["pins"] = append(a["pins"].([]any), b["pins"].([]any)...)
	twice, _ := json.Marshal(a)

	for _, tc := range []struct{ name, doc, want string }{
		{"not JSON", "pins: []", "invalid character"},
		{"unknown key", strings.Replace(string(good), `"lockVersion"`, `"comment": "hi", "lockVersion"`, 1), `unknown field "comment"`},
		{"another version", strings.Replace(string(good), `"lockVersion": 1`, `"lockVersion": 2`, 1), "lockVersion 2: this gateway reads version 1"},
		{"an entry edited by hand", strings.Replace(string(good), "Find documents.", "Find and delete documents.", 1), "the identity is not the entry's"},
		{"a name pinned twice", string(twice), `pin "find": the local name is pinned twice`},
		{"text after the document", string(good) + "{}", "text after the lock document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := gateway.ParseLock("gateway.lock", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gateway.lock: ") {
				t.Errorf("got %v, want gateway.lock: ...%s...", err, tc.want)
			}
		})
	}
	if _, err := gateway.ParseLock("gateway.lock", good); err != nil {
		t.Errorf("the good lock: %v", err)
	}
}

// TestReviewOfWhatCannotBeRead: a review names, per bound tool, why a
// definition could not be read (a strict binding's schema, an upstream's
// protocol revision) and refuses to accept it; accepting everything pins
// what could be read, and drops the pins of tools no longer bound.
func TestReviewOfWhatCannotBeRead(t *testing.T) {
	old := selfUpstream(t, "old", readTool("pid"))
	old.Stdio.Env[serveEnv] = serveOld
	cfg := gateway.Config{Lock: filepath.Join(t.TempDir(), "gateway.lock"),
		Upstreams: []gateway.Upstream{selfUpstream(t, "self", readTool("pid"), readTool("env")), old}}
	cfg.Auth.Development = &gateway.Development{Scopes: devScopes}
	accept(t, cfg, nil, "self_env")

	cfg.Upstreams[0].Tools[1] = readTool("loose") // env unbound; loose is strict, its schema outside the profile
	review, err := gateway.Inspect(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []gateway.Change{
		{Upstream: "self", Name: "self_pid", Remote: "pid", Reason: gateway.ReasonDefinitionUnaccepted},
		{Upstream: "self", Name: "self_loose", Remote: "loose", Reason: mcpimport.SchemaUnsupported},
		{Upstream: "old", Name: "old_pid", Remote: "pid", Reason: mcpimport.ProtocolUnsupported},
	}
	if diff := cmp.Diff(want, review.Changes()); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	for _, name := range []string{"self_loose", "old_pid"} {
		if review.Problem(name) == nil {
			t.Errorf("no problem named for %s", name)
		}
		if _, ok := review.Live(name); ok {
			t.Errorf("%s has a live definition", name)
		}
	}
	if u := review.Unbound(); len(u) != 1 || u[0].Entry.Name != "self_env" {
		t.Errorf("unbound %+v, want self_env", u)
	}
	for _, names := range [][]string{{"self_loose"}, {"old_pid", "self_pid"}, {"nosuch"}} {
		if _, err := review.Accept(names...); err == nil {
			t.Errorf("Accept(%v) succeeded", names)
		}
	}
	lock, err := review.Accept()
	if err != nil {
		t.Fatal(err)
	}
	var pinned []string
	for _, p := range lock.Pins() {
		pinned = append(pinned, p.Entry.Name)
	}
	if !slices.Equal(pinned, []string{"self_pid"}) {
		t.Errorf("pinned %v, want only self_pid", pinned)
	}
}
