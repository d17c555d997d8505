package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/internal/proctest"
)

// TestGatewayServesServerPostgres runs `agnara gateway` over the npm
// server-postgres 0.6.2 (stdio, 2024-11-05 only) against a real
// PostgreSQL, and reads rows through the gateway with a client at the
// newest revision: the upstream's old revision stays behind the gateway.
func TestGatewayServesServerPostgres(t *testing.T) {
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
		`CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, total numeric(8,2) NOT NULL)`,
		`INSERT INTO orders VALUES (1, 'Ada', 12.50), (2, 'Grace', 99.00), (3, 'Zoë', 7.25)`,
	} {
		if _, err := db.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close(ctx)

	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(cfg, []byte(`listen: 127.0.0.1:0
auth:
  development: {scopes: [db:read]}
upstreams:
  - name: pg
    prefix: pg_
    stdio:
      command: `+node+`
      args: [`+server+`, "`+dsn+`"]
    tools:
      - {remote: query, title: Query the database, scopes: [db:read], profile: standard}
`), 0o644)
	if code, out, errOut := agnara(time.Time{}, "gateway", "accept", "-config", cfg); code != 0 || !strings.Contains(out, "pinned pg_query (new)") {
		t.Fatalf("accept: exit %d, %q %q", code, out, errOut)
	}
	p := proctest.StartCmd(t, proctest.Build(t, "."), "gateway", "-config", cfg)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Errorf("the gateway's client negotiated %s, want 2026-07-28", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gateway.pg_query", Arguments: map[string]any{"sql": "SELECT id, customer, total FROM orders ORDER BY id"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v\n%s", err, res, p.Stderr)
	}
	// The rows are the upstream's one text block: a block of the result
	// itself, or of the envelope the gateway wraps a result in.
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	var env struct {
		Result struct {
			Text []string `json:"text"`
		} `json:"result"`
	}
	if b, err := json.Marshal(res.StructuredContent); err == nil && json.Unmarshal(b, &env) == nil {
		texts = append(texts, env.Result.Text...)
	}
	var rows []struct {
		ID       int    `json:"id"`
		Customer string `json:"customer"`
		Total    string `json:"total"`
	}
	for _, text := range texts {
		if json.Unmarshal([]byte(text), &rows) == nil {
			break
		}
	}
	if len(rows) != 3 || rows[0].Customer != "Ada" || rows[2].Customer != "Zoë" || rows[1].Total != "99.00" {
		t.Errorf("rows %+v, from %q", rows, texts)
	}
	if !strings.Contains(p.Stderr.String(), `protocol=2024-11-05`) {
		t.Errorf("the log does not name the upstream's revision:\n%s", p.Stderr)
	}
	if _, set := os.LookupEnv("GOGC"); !set && !strings.Contains(p.Stderr.String(), `gogc=400`) {
		t.Errorf("the gateway did not set its GC policy:\n%s", p.Stderr)
	}
}
