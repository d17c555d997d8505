package mcpimport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The remote side of these tests is a real SDK server ("docs"): in process
// over the SDK's in-memory transports, or this test binary re-executed as a
// separate stdio server process (see TestMain).

const stdioEnv = "AGNARA_MCPIMPORT_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioEnv) == "1" {
		srv := newDocs(nil)
		if err := srv.server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "stdio server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	searchInput  = `{"type":"object","properties":{"q":{"type":"string","minLength":1,"description":"What to look for"},"mode":{"type":"string"},"n":{"type":"integer","minimum":0}},"required":["q"],"additionalProperties":false}`
	searchOutput = `{"type":"object","properties":{"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["count","tags"],"additionalProperties":false}`
	echoInput    = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`
)

// docs is the fixture server: "search" (with an output schema; its "mode"
// argument picks a behaviour), "echo" (no output schema) and "delete" (never
// bound by the tests: unbound tools must stay out of every catalog).
type docs struct {
	server *mcp.Server

	calls    atomic.Int64 // tools/call requests that reached a handler
	inflight atomic.Int64
	maxIn    atomic.Int64
	lastArgs atomic.Value // json.RawMessage

	mu      sync.Mutex
	release chan struct{} // "wait" mode blocks until it is closed
	started chan struct{} // "wait" mode signals here when it starts
}

type docsOptions struct {
	pageSize    int
	description string // of "search"
	searchIn    string // input schema of "search"
	searchOut   string // output schema of "search"
	reverse     bool   // add tools in reverse order
}

func newDocs(o *docsOptions) *docs {
	if o == nil {
		o = &docsOptions{}
	}
	if o.description == "" {
		o.description = "Search the documents."
	}
	if o.searchIn == "" {
		o.searchIn = searchInput
	}
	if o.searchOut == "" {
		o.searchOut = searchOutput
	}
	d := &docs{release: make(chan struct{}), started: make(chan struct{}, 16)}
	d.server = mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: o.pageSize})
	add := []func(){
		func() {
			d.server.AddTool(&mcp.Tool{Name: "search", Description: o.description, InputSchema: json.RawMessage(o.searchIn), OutputSchema: json.RawMessage(o.searchOut)}, d.search)
		},
		func() {
			d.server.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back.", InputSchema: json.RawMessage(echoInput)}, d.echo)
		},
		func() {
			d.server.AddTool(&mcp.Tool{Name: "delete", Description: "Delete everything.", InputSchema: json.RawMessage(`{"type":"object","$ref":"#/$defs/x","$defs":{"x":{}}}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				panic("delete must never be called")
			})
		},
	}
	if o.reverse {
		for i := len(add) - 1; i >= 0; i-- {
			add[i]()
		}
	} else {
		for _, f := range add {
			f()
		}
	}
	return d
}

func (d *docs) enter(args json.RawMessage) func() {
	d.calls.Add(1)
	d.lastArgs.Store(args)
	n := d.inflight.Add(1)
	for {
		m := d.maxIn.Load()
		if n <= m || d.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { d.inflight.Add(-1) }
}

func text(s ...string) []mcp.Content {
	out := make([]mcp.Content, len(s))
	for i, t := range s {
		out[i] = &mcp.TextContent{Text: t}
	}
	return out
}

func (d *docs) search(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer d.enter(req.Params.Arguments)()
	var in struct {
		Q    string `json:"q"`
		Mode string `json:"mode"`
		N    int    `json:"n"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	ok := map[string]any{"count": len(in.Q), "tags": []string{"go", in.Q}}
	switch in.Mode {
	case "":
		return &mcp.CallToolResult{Content: text(fmt.Sprintf("%d results for %s", len(in.Q), in.Q)), StructuredContent: ok}, nil
	case "error":
		return &mcp.CallToolResult{IsError: true, Content: text("remote secret: db password is hunter2")}, nil
	case "protocol":
		return nil, fmt.Errorf("remote secret: internal stack trace")
	case "image":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}, StructuredContent: ok}, nil
	case "link":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///etc/passwd", Name: "passwd"}}, StructuredContent: ok}, nil
	case "nostruct":
		return &mcp.CallToolResult{Content: text(`{"count":1,"tags":[]}`)}, nil
	case "badstruct":
		return &mcp.CallToolResult{Content: text("x"), StructuredContent: map[string]any{"count": "many", "tags": []string{}}}, nil
	case "blocks":
		blocks := make([]string, in.N)
		for i := range blocks {
			blocks[i] = "b"
		}
		return &mcp.CallToolResult{Content: text(blocks...), StructuredContent: ok}, nil
	case "bigtext":
		return &mcp.CallToolResult{Content: text(strings.Repeat("x", in.N)), StructuredContent: ok}, nil
	case "wait":
		d.started <- struct{}{}
		d.mu.Lock()
		release := d.release
		d.mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: text("released"), StructuredContent: ok}, nil
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "exit":
		os.Exit(3)
	}
	return nil, fmt.Errorf("unknown mode %q", in.Mode)
}

func (d *docs) echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer d.enter(req.Params.Arguments)()
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	// Structured content without an advertised output schema is not passed on.
	return &mcp.CallToolResult{Content: text(in.Text), StructuredContent: map[string]any{"unvalidated": true}}, nil
}

// connect connects an SDK client to srv in memory at version and returns the
// session and its monitor, which has accepted the negotiated version. Both
// are closed when the test ends.
func connect(t testing.TB, srv *mcp.Server, version string) (*mcp.ClientSession, *mcpimport.Monitor) {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return connectTransport(t, ct, version)
}

func connectTransport(t testing.TB, transport mcp.Transport, version string) (*mcp.ClientSession, *mcpimport.Monitor) {
	t.Helper()
	mon := mcpimport.NewMonitor()
	client := mcp.NewClient(&mcp.Implementation{Name: "importer", Version: "1"}, &mcp.ClientOptions{ToolListChangedHandler: mon.ToolListChanged})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close(); cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	if err := mon.AcceptProtocolVersion(cs.InitializeResult().ProtocolVersion); err != nil {
		t.Fatal(err)
	}
	return cs, mon
}

// stdioSession starts this test binary as a separate stdio server process
// and connects to it at version. It returns the session and the process; the
// test checks that the process has exited after closing the session.
func stdioSession(t *testing.T, version string) (*mcp.ClientSession, *mcpimport.Monitor, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=1")
	cmd.Stderr = os.Stderr
	cs, mon := connectTransport(t, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, version)
	t.Cleanup(func() {
		if cmd.ProcessState == nil && cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cs, mon, cmd
}

// readBindings binds search and echo, not delete.
func readBindings() map[string]mcpimport.Binding {
	return map[string]mcpimport.Binding{
		"search": {Name: "search_docs", Title: "Search documents", Scopes: []string{"docs:read"}, NoScopeValidator: true, ConcurrencySafe: true},
		"echo":   {Name: "echo_text", Title: "Echo text", NoScopeValidator: true},
	}
}

var versions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// newSession pairs cs and mon as the session of serverID; a server id
// NewSession refuses yields nil, which discovery refuses in turn.
func newSession(t testing.TB, cs *mcp.ClientSession, mon *mcpimport.Monitor, serverID string) *mcpimport.Session {
	t.Helper()
	s, err := mcpimport.NewSession(serverID, cs, mon)
	if err != nil {
		return nil
	}
	return s
}
