package mcpimport_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpimport"
)

// pinnedServer is an SDK server that speaks only version, with one tool,
// "echo", which answers its text as a text block.
func pinnedServer(version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "old", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{version}})
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(echoInput)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: text(in.Text)}, nil
	})
	return s
}

// importAndCall discovers bindings on sess, compiles them into "gw" and
// calls name with args: the result's text blocks and its structured
// content (null for none).
func importAndCall(t *testing.T, sess *mcpimport.Session, bindings map[string]mcpimport.Binding, name, args string) ([]string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cat, err := mcpimport.Discover(ctx, sess, bindings, nil)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if got := cat.Snapshot().ProtocolVersion(); got != sess.ProtocolVersion() {
		t.Errorf("snapshot protocol %s, session %s", got, sess.ProtocolVersion())
	}
	app := agnara.New("gw", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	env, err := callAs(t, ctx, plans, name, args, reader)
	return env.Text, string(env.Structured), err
}

// TestImportOlderRevisions: an upstream that speaks only 2025-03-26 or
// only 2024-11-05 (an SDK server pinned to it) is imported and called over
// every transport the SDK client has for it, without the host naming a
// version: the session negotiates the upstream's, and results are its text.
func TestImportOlderRevisions(t *testing.T) {
	bindings := map[string]mcpimport.Binding{"echo": {Name: "echo_text", Title: "Echo text", NoScopeValidator: true}}
	transports := map[string]func(t *testing.T, s *mcp.Server) mcp.Transport{
		"in memory": func(t *testing.T, s *mcp.Server) mcp.Transport {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := s.Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ss.Close() })
			return ct
		},
		"streamable http": func(t *testing.T, s *mcp.Server) mcp.Transport {
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
			t.Cleanup(srv.Close)
			return &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}
		},
		// 2024-11-05's own HTTP transport: an SSE stream for the server's
		// messages, a POST endpoint for the client's.
		"http+sse": func(t *testing.T, s *mcp.Server) mcp.Transport {
			srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
			t.Cleanup(srv.Close)
			return &mcp.SSEClientTransport{Endpoint: srv.URL}
		},
	}
	for _, version := range []string{"2025-03-26", "2024-11-05"} {
		for name, transport := range transports {
			t.Run(version+"/"+name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				sess, err := mcpimport.Connect(ctx, "old", transport(t, pinnedServer(version)), nil)
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer sess.Close()
				if got := sess.ProtocolVersion(); got != version {
					t.Fatalf("negotiated %s, want %s", got, version)
				}
				text, structured, err := importAndCall(t, sess, bindings, "echo_text", `{"text":"hé 😀"}`)
				if err != nil {
					t.Fatal(err)
				}
				if len(text) != 1 || text[0] != "hé 😀" || structured != "null" {
					t.Errorf("text %q, structured %s; want the text alone", text, structured)
				}
			})
		}
	}
}

// TestServerPostgres imports the query tool of the npm server-postgres
// 0.6.2 (stdio, TypeScript SDK 1.0.1, which speaks only 2024-11-05) over a
// real PostgreSQL, and reads rows of a table through it.
func TestServerPostgres(t *testing.T) {
	node := peers.Node(t)
	server := peers.NPM(t, "@modelcontextprotocol/server-postgres/dist/index.js")
	dsn := enginetest.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE books (id int PRIMARY KEY, title text NOT NULL)`,
		`INSERT INTO books VALUES (1, 'Dune'), (2, 'Солярис'), (3, '三体')`,
	} {
		if _, err := db.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close(ctx)

	cmd := exec.Command(node, server, dsn)
	sess, err := mcpimport.Connect(ctx, "pg", &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer sess.Close()
	if got := sess.ProtocolVersion(); got != "2024-11-05" {
		t.Errorf("negotiated %s, want 2024-11-05", got)
	}
	bindings := map[string]mcpimport.Binding{"query": {Name: "query", Title: "Query the database", NoScopeValidator: true, ConcurrencySafe: true, Profile: mcpimport.ProfileStandard}}
	text, _, err := importAndCall(t, sess, bindings, "query", `{"sql":"SELECT id, title FROM books ORDER BY id"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(text) != 1 {
		t.Fatalf("text %q, want one block", text)
	}
	var rows []struct {
		ID    int    `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(text[0]), &rows); err != nil {
		t.Fatalf("rows %q: %v", text[0], err)
	}
	if len(rows) != 3 || rows[0].Title != "Dune" || rows[1].Title != "Солярис" || rows[2].Title != "三体" {
		t.Errorf("rows %+v", rows)
	}
	// The server's transaction is read-only: a write fails as the remote's
	// error, and changes nothing.
	if _, _, err := importAndCall(t, sess, bindings, "query", `{"sql":"DELETE FROM books"}`); err == nil || !strings.Contains(string(execution.ReasonOf(err)), "mcp_") {
		t.Errorf("a write through the read-only query: %v", err)
	}
}

// TestStreamableClientAgainstSSEServer: a streamable HTTP transport does
// not reach a server that speaks only HTTP+SSE; the failure is the
// handshake's (what the gateway reports for such an HTTP upstream).
func TestStreamableClientAgainstSSEServer(t *testing.T) {
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return pinnedServer("2024-11-05") }, nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := mcpimport.Connect(ctx, "old", &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err == nil {
		sess.Close()
		t.Fatal("connected over streamable HTTP to an HTTP+SSE server")
	}
	if got := execution.ReasonOf(err); got != mcpimport.ConnectFailed {
		t.Errorf("reason %s, want %s (%v)", got, mcpimport.ConnectFailed, err)
	}
}
