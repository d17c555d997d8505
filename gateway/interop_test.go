package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/policy"
)

// conformance is the folder whose lockfile pins the npm peers.
var conformance = filepath.Join("..", "conformance")

// npmServer returns the entry point of a public MCP server installed from
// npm (pinned in conformance/package-lock.json).
func npmServer(t *testing.T, pkg string) string {
	t.Helper()
	return peers.NPM(t, "@modelcontextprotocol/"+pkg+"/dist/index.js")
}

func node(t *testing.T) string {
	t.Helper()
	return peers.Node(t) // the npm MCP servers and the TypeScript SDK client run on it
}

// everythingServer builds the Go SDK's everything example server (from the
// SDK module this one requires) and serves it over Streamable HTTP on a
// free loopback port until the test ends. It returns its MCP URL.
func everythingServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/examples/server/everything").CombinedOutput(); err != nil {
		t.Fatalf("building the SDK's everything server: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-http", addr)
	cmd.Stderr = &mcptest.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the everything server did not listen on %s: %s", addr, cmd.Stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "http://" + addr + "/"
}

func standard(remote, name, title string, scopes ...string) gateway.Tool {
	return gateway.Tool{Remote: remote, Name: name, Title: title, Scopes: scopes, Profile: "standard", ConcurrencySafe: true}
}

// TestGatewayServesPublicServers is the gateway's interoperability floor:
// two widely used public MCP servers from npm (filesystem and memory),
// launched over stdio, and the Go SDK's everything server over HTTP, all
// imported with the standard schema profile and served again as one
// gateway; clients at both eras, raw 2026-07-28 requests and the
// TypeScript SDK client call through it; a write waits for an approval and
// then runs once.
func TestGatewayServesPublicServers(t *testing.T) {
	nodeBin := node(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the filesystem server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg := gateway.Config{Upstreams: []gateway.Upstream{
		{
			Name: "files", Prefix: "files_",
			Stdio: &gateway.StdioUpstream{Command: nodeBin, Args: []string{npmServer(t, "server-filesystem"), root}},
			Tools: []gateway.Tool{
				standard("read_text_file", "", "Read a text file", "files:read"),
				standard("list_directory", "", "List a directory", "files:read"),
			},
		},
		{
			Name: "notes", Prefix: "notes_",
			Stdio: &gateway.StdioUpstream{Command: nodeBin, Args: []string{npmServer(t, "server-memory")}, Env: map[string]string{"MEMORY_FILE_PATH": notes}},
			Tools: []gateway.Tool{
				standard("read_graph", "", "Read the notes", "notes:read"),
				{Remote: "create_entities", Name: "notes_create", Title: "Create notes", Write: "write", Scopes: []string{"notes:write"}, Profile: "standard"},
			},
		},
		{
			Name: "everything", Prefix: "every_",
			HTTP: &gateway.HTTPUpstream{URL: everythingServer(t)},
			Tools: []gateway.Tool{
				standard("greet", "", "Greet", "every:read"),
				standard("greet (structured)", "every_greet_structured", "Greet, structured", "every:read"),
			},
		},
	}}
	g, url, log := started(t, cfg, &gateway.Options{Approvals: store})
	for _, s := range g.Status() {
		if s.State != gateway.StateUp || len(s.Absent) > 0 {
			t.Fatalf("upstream %+v\n%s", s, log)
		}
	}
	want := []string{"gateway.every_greet", "gateway.every_greet_structured", "gateway.files_list_directory",
		"gateway.files_read_text_file", "gateway.notes_create", "gateway.notes_read_graph"}

	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("Go SDK client "+protocol, func(t *testing.T) {
			cs := connect(t, url, protocol)
			if got := listed(t, cs); !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
			text, isErr := callStructured(t, cs, "gateway.files_read_text_file", map[string]any{"path": filepath.Join(root, "hello.txt")})
			if isErr || !strings.Contains(text, "hello from the filesystem server") {
				t.Errorf("read_text_file: %s", text)
			}
			text, isErr = call(t, cs, "gateway.files_list_directory", map[string]any{"path": root})
			if isErr || !strings.Contains(text, "[FILE] hello.txt") {
				t.Errorf("list_directory: %s", text)
			}
			text, isErr = call(t, cs, "gateway.every_greet", map[string]any{"name": "Ada"})
			if isErr || text != "Hi Ada" {
				t.Errorf("greet: %s", text)
			}
			text, isErr = callStructured(t, cs, "gateway.every_greet_structured", map[string]any{"name": "Ada"})
			if isErr || text != `{"message":"Hi Ada"}` {
				t.Errorf("greet (structured): %s", text)
			}
			// Arguments are validated against the remote's own schema.
			text, isErr = call(t, cs, "gateway.files_read_text_file", map[string]any{"path": 7})
			if !isErr || !strings.Contains(text, `"invalid_input"`) {
				t.Errorf("invalid arguments: %s", text)
			}
		})
	}

	t.Run("raw 2026-07-28 requests", func(t *testing.T) {
		res, _, body := mcptest.Do(t, mcptest.Request(t, url, "tools/list", map[string]any{"_meta": mcptest.Meta(nil)}, ""))
		if res.StatusCode != 200 || body["result"] == nil {
			t.Fatalf("tools/list: %d %v", res.StatusCode, body)
		}
		var list struct {
			Tools []struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		}
		b, _ := json.Marshal(body["result"])
		json.Unmarshal(b, &list)
		for _, tool := range list.Tools {
			// The everything server's structured greeting has no
			// description; its binding's title stands in.
			if tool.Name == "gateway.every_greet_structured" && tool.Description != "Greet, structured" {
				t.Errorf("%s: description %q, want the binding's title", tool.Name, tool.Description)
			}
			// Nothing is stripped or rewritten: a draft-07 schema stays one.
			if strings.HasPrefix(tool.Name, "gateway.files_") || strings.HasPrefix(tool.Name, "gateway.notes_") {
				if tool.InputSchema["$schema"] != "http://json-schema.org/draft-07/schema#" {
					t.Errorf("%s: published input schema %v, want the upstream's draft-07 schema", tool.Name, tool.InputSchema)
				}
			}
		}
		res, _, body = mcptest.Do(t, mcptest.Request(t, url, "tools/call", map[string]any{
			"_meta": mcptest.Meta(nil), "name": "gateway.every_greet", "arguments": map[string]any{"name": "Grace"},
		}, ""))
		if b, _ := json.Marshal(body); res.StatusCode != 200 || !strings.Contains(string(b), "Hi Grace") || strings.Contains(string(b), `"isError":true`) {
			t.Errorf("tools/call: %d %s", res.StatusCode, b)
		}
		// A hidden or unknown tool: -32602, as for any agnara server.
		res, _, body = mcptest.Do(t, mcptest.Request(t, url, "tools/call", map[string]any{
			"_meta": mcptest.Meta(nil), "name": "gateway.every_ping", "arguments": map[string]any{},
		}, ""))
		if e, _ := body["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
			t.Errorf("unbound tool: %d %v", res.StatusCode, body)
		}
	})

	t.Run("TypeScript SDK client", func(t *testing.T) {
		for _, tc := range []struct{ tool, args, want string }{
			{"gateway.files_read_text_file", `{"path":"` + filepath.Join(root, "hello.txt") + `"}`, "hello from the filesystem server"},
			{"gateway.notes_read_graph", `{}`, `entities`},
			{"gateway.every_greet_structured", `{"name":"Lin"}`, "Hi Lin"},
		} {
			got := typeScript(t, nodeBin, url, tc.tool, tc.args)
			if !slices.Equal(got.Tools, want) {
				t.Errorf("%s: the TypeScript client lists %v", tc.tool, got.Tools)
			}
			if c := got.InputCheck; !c.Compiled || !c.Valid {
				t.Errorf("%s: strict Ajv compiled the listed input schema %v (%s), arguments valid %v", tc.tool, c.Compiled, c.Error, c.Valid)
			}
			if got.Result.IsError || len(got.Result.Content) == 0 || !strings.Contains(got.Result.Content[0].Text, tc.want) {
				t.Errorf("%s: %+v", tc.tool, got.Result)
			}
		}
	})

	t.Run("a write waits for an approval, then runs once", func(t *testing.T) {
		cs := connect(t, url, "")
		args := map[string]any{"entities": []map[string]any{{"name": "Ada Lovelace", "entityType": "person", "observations": []string{"wrote the first program"}}}}
		text, isErr := call(t, cs, "gateway.notes_create", args)
		var pending struct {
			Code, Reason string
			Details      struct {
				ApprovalID string `json:"approval_id"`
			}
		}
		json.Unmarshal([]byte(text), &pending)
		if !isErr || pending.Reason != string(approval.ReasonPending) || pending.Details.ApprovalID == "" {
			t.Fatalf("first call: %s", text)
		}
		if _, err := os.Stat(notes); !os.IsNotExist(err) {
			t.Fatalf("the memory server wrote its file before the approval (%v)", err)
		}
		alice := policy.NewPrincipal("alice", []string{approval.DefaultApproverScope})
		if _, err := store.Approve(context.Background(), pending.Details.ApprovalID, alice, "looks right"); err != nil {
			t.Fatal(err)
		}
		first, isErr := call(t, cs, "gateway.notes_create", args)
		if isErr || !strings.Contains(first, "Ada Lovelace") {
			t.Fatalf("after the approval: %s", first)
		}
		written, err := os.Stat(notes)
		if err != nil {
			t.Fatalf("the memory server did not store the entity: %v", err)
		}
		again, isErr := call(t, cs, "gateway.notes_create", args)
		if isErr || again != first {
			t.Errorf("the repeat returned %s, want the recorded %s", again, first)
		}
		if now, err := os.Stat(notes); err != nil || !now.ModTime().Equal(written.ModTime()) {
			t.Errorf("the repeat reached the memory server again (its file changed)")
		}
		graph, _ := callStructured(t, cs, "gateway.notes_read_graph", map[string]any{})
		if n := strings.Count(graph, `"name":"Ada Lovelace"`); n != 1 {
			t.Errorf("read_graph lists the entity %d times: %s", n, graph)
		}
		a, err := store.Get(context.Background(), pending.Details.ApprovalID)
		if err != nil || a.State != approval.StateCompleted || a.Receipt == nil || a.Receipt.Effect != approval.EffectCommitted {
			t.Errorf("approval after the call: %+v (%v)", a, err)
		}
	})
}

// tsResult is what conformance/ts-client.mjs prints.
type tsResult struct {
	Tools      []string `json:"tools"`
	InputCheck struct {
		Compiled bool   `json:"compiled"`
		Valid    bool   `json:"valid"`
		Error    string `json:"error"`
	} `json:"inputCheck"`
	Result struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	} `json:"result"`
}

func typeScript(t *testing.T, nodeBin, url, tool, args string) tsResult {
	t.Helper()
	peers.NPM(t, "@modelcontextprotocol/sdk")
	out, err := exec.Command(nodeBin, filepath.Join(conformance, "ts-client.mjs"), url, tool, args).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v (%s)", err, out)
	}
	var got tsResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("TypeScript client printed %q", out)
	}
	slices.Sort(got.Tools)
	return got
}
