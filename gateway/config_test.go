package gateway_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/mcpimport"
)

func TestSampleParses(t *testing.T) {
	cfg, err := gateway.Parse("sample.yaml", gateway.Sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Upstreams) != 2 || cfg.Upstreams[1].Tools[1].Name != "notes_create" || cfg.Upstreams[1].Tools[1].Write != "write" {
		t.Fatalf("sample: %+v", cfg.Upstreams)
	}
	// Defaults are filled in.
	files := cfg.Upstreams[0]
	if files.Tools[0].Name != "files_read_text_file" || files.Limits.MessageBytes != gateway.DefaultMessageBytes ||
		files.Restart.Min != gateway.Duration(time.Second) || cfg.Upstreams[1].Restart.Max != gateway.Duration(30*time.Second) {
		t.Errorf("defaults: %+v", files)
	}
	if w := cfg.Upstreams[1].Tools[1]; w.ApprovalScope != "notes" || w.ApprovalScopeRevision != "1" {
		t.Errorf("write defaults: %+v", w)
	}
	if o := files.Tools[1].Optional; o == nil || !*o || files.Tools[0].Optional != nil || files.Optional {
		t.Errorf("the sample's optional binding: %+v", files.Tools)
	}
	// The lock file is beside the config, unless the config names one.
	if cfg.Lock != "sample.lock" {
		t.Errorf("lock %q, want sample.lock", cfg.Lock)
	}
	for name, want := range map[string]string{"/etc/agnara/gateway.yaml": "/etc/agnara/gateway.lock", "gw": "gw.lock"} {
		if cfg, err := gateway.Parse(name, gateway.Sample); err != nil || cfg.Lock != want {
			t.Errorf("Parse(%q): lock %q (%v), want %q", name, cfg.Lock, err, want)
		}
	}
	if cfg, err := gateway.Parse("gw.yaml", append([]byte("lock: pins/gw.lock\n"), gateway.Sample...)); err != nil || cfg.Lock != "pins/gw.lock" {
		t.Errorf("a lock key: %v", err)
	}
}

// TestStrictUnlessOptional: a binding is strict unless it, or its
// upstream, says optional; a binding's word wins.
func TestStrictUnlessOptional(t *testing.T) {
	cfg, err := gateway.Parse("gw.yaml", []byte(strings.Replace(valid, "tools:", "optional: true\n    tools:", 1)+`  - name: two
    stdio: {command: other}
    tools:
      - {remote: a, title: A}
      - {remote: b, title: B, optional: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		upstream, tool int
		optional       *bool
	}{{0, 0, nil}, {1, 0, nil}} {
		if got := cfg.Upstreams[tc.upstream].Tools[tc.tool].Optional; got != tc.optional {
			t.Errorf("upstreams[%d].tools[%d].optional = %v", tc.upstream, tc.tool, got)
		}
	}
	if !cfg.Upstreams[0].Optional || cfg.Upstreams[1].Optional || cfg.Upstreams[1].Tools[1].Optional == nil || !*cfg.Upstreams[1].Tools[1].Optional {
		t.Errorf("optional read as %+v", cfg.Upstreams)
	}
}

// valid is a minimal valid config; each case below breaks it.
const valid = `
auth:
  development: {scopes: [a:read]}
approvals: {sqlite: approvals.db}
upstreams:
  - name: one
    stdio: {command: server}
    tools:
      - {remote: read, title: Read}
      - {remote: write, title: Write, write: write}
`

func TestParseReportsEveryMistakeWithItsLine(t *testing.T) {
	t.Setenv("GATEWAY_TEST_SET", "x")
	tests := []struct {
		name, yaml string
		want       []string // "line: substring", in order
	}{
		{"valid", valid, nil},
		{"syntax", "upstreams: [\n", []string{"1: did not find expected node content"}},
		{"empty", "", []string{"0: the file is empty"}},
		{"unknown keys with a hint", strings.Replace(valid, "stdio: {command: server}", "stdio: {comand: server}", 1),
			[]string{`7: upstreams[0].stdio: unknown key "comand" (did you mean "command"?)`, `7: upstreams[0].stdio.command: name the program to run`}},
		{"wrong types", valid + "limits: {max_sessions: many, call_timeout: soon}\n",
			[]string{"11: cannot unmarshal !!str `many` into int", `11: "soon" is not a duration`}},
		{"auth missing", strings.Replace(valid, "  development: {scopes: [a:read]}\n", "", 1),
			[]string{"2: auth: say how callers are identified"}},
		{"development off loopback", "listen: 0.0.0.0:8090\n" + valid,
			[]string{"4: auth.development: a development principal serves anyone who connects"}},
		{"issuer without resource", strings.Replace(valid, "development: {scopes: [a:read]}", "issuer: https://login.example.com/", 1),
			[]string{"2: auth.resource: want the gateway's public MCP URL"}},
		{"write without approvals", strings.Replace(valid, "approvals: {sqlite: approvals.db}\n", "", 1),
			[]string{"9: upstreams[0].tools[1].write: a write needs approvals"}},
		{"both transports", strings.Replace(valid, "stdio: {command: server}", "stdio: {command: server}\n    http: {url: http://127.0.0.1:1/mcp}", 1),
			[]string{"6: upstreams[0]: set http or stdio, not both"}},
		{"a shell line as command", strings.Replace(valid, "command: server", "command: npx server --flag", 1),
			[]string{`7: upstreams[0].stdio.command: "npx server --flag": the command runs without a shell`}},
		{"secret env not set", strings.Replace(valid, "stdio: {command: server}", "http: {url: http://127.0.0.1:1/mcp, oauth: {token_url: http://127.0.0.1:2/token, client_id: gw, client_secret_env: GATEWAY_TEST_UNSET}}", 1),
			[]string{"7: upstreams[0].http.oauth.client_secret_env: the environment variable GATEWAY_TEST_UNSET is not set"}},
		{"secret env set", strings.Replace(valid, "stdio: {command: server}", "http: {url: http://127.0.0.1:1/mcp, oauth: {token_url: http://127.0.0.1:2/token, client_id: gw, client_secret_env: GATEWAY_TEST_SET}}", 1), nil},
		{"bad protocol", strings.Replace(valid, "stdio: {command: server}", "http: {url: http://127.0.0.1:1/mcp, protocol: 2024-11-05}", 1),
			[]string{`7: upstreams[0].http.protocol: "2024-11-05": want one of 2026-07-28, 2025-11-25, 2025-06-18`}},
		{"remote name that is no local name", strings.Replace(valid, "remote: read,", `remote: "read (fast)",`, 1),
			[]string{`9: upstreams[0].tools[0].remote: the local name "read (fast)" (prefix and remote name) is not one: set name`}},
		{"profile and write values", strings.Replace(strings.Replace(valid, "title: Read}", "title: Read, profile: loose}", 1), "write: write}", "write: maybe}", 1),
			[]string{`9: upstreams[0].tools[0].profile: "loose": want strict or standard`, `10: upstreams[0].tools[1].write: "maybe": want write or destructive`}},
		{"collisions across upstreams", valid + `  - name: one
    prefix: ""
    stdio: {command: other}
    tools:
      - {remote: read, title: Read again}
`, []string{`11: upstreams[1].name: "one" is also the name of upstreams[0] (line 6)`,
			`15: upstreams[1].tools[0]: local name "read" is also given to upstreams[0].tools[0] (line 9): set a prefix or a name`}},
		{"same remote twice", strings.Replace(valid, "remote: write,", "remote: read, name: read2,", 1),
			[]string{`10: upstreams[0].tools[1].remote: "read" is also bound by tools[0] (line 9)`}},
		{"write marked concurrency safe", strings.Replace(valid, "write: write}", "write: write, concurrency_safe: true}", 1),
			[]string{"10: upstreams[0].tools[1].concurrency_safe: writes run one at a time"}},
		{"no tools", strings.Replace(valid, `    tools:
      - {remote: read, title: Read}
      - {remote: write, title: Write, write: write}
`, "", 1), []string{"6: upstreams[0].tools: bind at least one tool"}},
		{"optional keys", strings.Replace(strings.Replace(valid, "stdio: {command: server}", "stdio: {command: server}\n    optional: true", 1),
			"title: Read}", "title: Read, optional: false}", 1), nil},
		{"optional not a bool", strings.Replace(strings.Replace(valid, "stdio: {command: server}", "stdio: {command: server}\n    optional: sometimes", 1),
			"title: Read}", "title: Read, optional: maybe}", 1),
			[]string{"8: cannot unmarshal !!str `sometimes` into bool", "10: cannot unmarshal !!str `maybe` into bool"}},
		{"a lock key", valid + "lock: gateway.pins\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gateway.Parse("gw.yaml", []byte(tc.yaml))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error:\n%v", err)
				}
				return
			}
			var ce *gateway.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *ConfigError", err)
			}
			var got []string
			for _, p := range ce.Problems {
				got = append(got, fmt.Sprintf("%d: %s", p.Line, p))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got[i], w)
				}
			}
			if !strings.HasPrefix(err.Error(), "gw.yaml:") {
				t.Errorf("Error() = %q: want it to name the file", err)
			}
		})
	}
}

func TestNewChecksACodeConfig(t *testing.T) {
	cfg := gateway.Config{
		Auth: gateway.Auth{Development: &gateway.Development{}},
		Lock: "gateway.lock",
		Upstreams: []gateway.Upstream{
			{Name: "a", Prefix: "x_", Stdio: &gateway.StdioUpstream{Command: "a"}, Tools: []gateway.Tool{{Remote: "get", Title: "Get"}}},
			{Name: "b", Stdio: &gateway.StdioUpstream{Command: "b"}, Tools: []gateway.Tool{{Remote: "x_get", Title: "Get"}}},
		},
	}
	_, err := gateway.New(cfg, &gateway.Options{Validators: map[string]mcpimport.ScopeValidator{"nope": nil}})
	var ce *gateway.ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 2 {
		t.Fatalf("got %v, want two problems", err)
	}
	if p := ce.Problems[0].String(); !strings.Contains(p, `upstreams[1].tools[0]: local name "x_get" is also given to upstreams[0].tools[0]`) {
		t.Errorf("collision: %s", p)
	}
	if p := ce.Problems[1].String(); p != `Options.Validators: "nope" binds no tool` {
		t.Errorf("validators: %s", p)
	}
	cfg.Upstreams[1].Prefix = "b_"
	if _, err := gateway.New(cfg, nil); err != nil {
		t.Errorf("after the fix: %v", err)
	}
}

func TestParseTaskBindings(t *testing.T) {
	for _, tc := range []struct{ tool, want string }{
		{"{remote: read, title: Read, task: true, task_timeout: 2m}", ""},
		{"{remote: read, title: Read, task_timeout: 2m}", "task_timeout applies with task: true"},
		{"{remote: read, title: Read, task: true, task_timeout: 10m}", "want a positive duration of at most 5m0s"},
		{"{remote: read, title: Read, write: write, task: true}", "a write is never followed as a task"},
	} {
		_, err := gateway.Parse("gw.yaml", []byte(strings.Replace(valid, "{remote: read, title: Read}", tc.tool, 1)))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.tool, err, tc.want)
		}
	}
}

// TestParseCredentials: an HTTP upstream's credentials, each mistake with
// what to do.
func TestParseCredentials(t *testing.T) {
	t.Setenv("GATEWAY_TEST_SET", "x")
	issuer := strings.Replace(valid, "development: {scopes: [a:read]}", "{issuer: http://127.0.0.1:3, resource: http://127.0.0.1:8090/mcp}", 1)
	exchange := "token_exchange: {token_url: http://127.0.0.1:2/token, client_id: gw, client_secret_env: GATEWAY_TEST_SET, scopes: [orders.read]}"
	for _, tc := range []struct{ name, base, http, want string }{
		{"the gateway's identity, named", valid, "credentials: gateway", ""},
		{"token exchange", issuer, "credentials: token_exchange, " + exchange, ""},
		{"token exchange at 2026-07-28", issuer, "credentials: token_exchange, protocol: 2026-07-28, " + exchange, ""},
		{"unknown mode", valid, "credentials: forward", `upstreams[0].http.credentials: "forward": want gateway (the gateway's own identity), token_exchange (each caller's, exchanged) or consent`},
		{"exchange without its block", issuer, "credentials: token_exchange", "upstreams[0].http.token_exchange: say how to exchange a caller's token"},
		{"a block without the mode", issuer, exchange, "upstreams[0].http.token_exchange: the upstream is reached with the gateway's identity: set credentials: token_exchange"},
		{"exchange for a development principal", valid, "credentials: token_exchange, " + exchange, "upstreams[0].http.credentials: token_exchange exchanges each caller's token, and a development principal has none"},
		{"exchange on a session", issuer, "credentials: token_exchange, protocol: 2025-11-25, " + exchange, `upstreams[0].http.protocol: "2025-11-25": a caller's own credential needs 2026-07-28`},
		{"exchange secret unset", issuer, "credentials: token_exchange, " + strings.Replace(exchange, "GATEWAY_TEST_SET", "GATEWAY_TEST_UNSET", 1), "token_exchange.client_secret_env: the environment variable GATEWAY_TEST_UNSET is not set"},
		{"exchange token url", issuer, "credentials: token_exchange, " + strings.Replace(exchange, "http://127.0.0.1:2/token", "http://as.example.com/token", 1), "token_exchange.token_url: \"http://as.example.com/token\": want the authorization server's token endpoint, https"},
		{"exchange resource", issuer, "credentials: token_exchange, " + strings.Replace(exchange, "scopes:", "resource: urn:orders, scopes:", 1), `token_exchange.resource: "urn:orders": want an absolute http(s) URI`},
	} {
		yaml := strings.Replace(tc.base, "stdio: {command: server}", "http: {url: http://127.0.0.1:1/mcp, "+tc.http+"}", 1)
		_, err := gateway.Parse("gw.yaml", []byte(yaml))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestParseConsent: credentials consent and the connections pages, each
// mistake with what to do.
func TestParseConsent(t *testing.T) {
	t.Setenv("GATEWAY_TEST_SET", "x")
	t.Setenv("GATEWAY_TEST_KEY", "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=")
	t.Setenv("GATEWAY_TEST_SHORT_KEY", "c2hvcnQ=")
	issuer := strings.Replace(valid, "development: {scopes: [a:read]}", "{issuer: http://127.0.0.1:3, resource: http://127.0.0.1:8090/mcp}", 1)
	conns := "connections: {url: http://127.0.0.1:8090, key_env: GATEWAY_TEST_KEY, sign_in: {client_id: gw-web}}\n"
	consent := "credentials: consent, consent: {client_id: gw, client_secret_env: GATEWAY_TEST_SET, scopes: [orders.read]}"
	for _, tc := range []struct{ name, base, http, want string }{
		{"consent", issuer + conns, consent, ""},
		{"consent with its server named", issuer + conns, strings.Replace(consent, "client_id: gw,", "authorization_server: https://login.example.com, client_id: gw,", 1), ""},
		{"consent without connections", issuer, consent, "upstreams[0].http.credentials: consent needs connections"},
		{"consent for a development principal", valid + conns, consent, "consent keeps a grant per person, who signs in with auth.issuer"},
		{"consent without approvals", strings.Replace(strings.Replace(issuer, "approvals: {sqlite: approvals.db}\n", "", 1), ", write: write", "", 1) + conns, consent, "consent keeps each person's grant in the approval store: set approvals"},
		{"consent without its block", issuer + conns, "credentials: consent", "upstreams[0].http.consent: say which client the gateway is"},
		{"a consent block without the mode", issuer + conns, strings.Replace(consent, "credentials: consent, ", "", 1), "upstreams[0].http.consent: set credentials: consent to use it"},
		{"consent on a session", issuer + conns, "protocol: 2025-11-25, " + consent, `upstreams[0].http.protocol: "2025-11-25": a caller's own credential needs 2026-07-28`},
		{"a short key", issuer + strings.Replace(conns, "GATEWAY_TEST_KEY", "GATEWAY_TEST_SHORT_KEY", 1), consent, "connections.key_env: the environment variable GATEWAY_TEST_SHORT_KEY: the key is 5 bytes: want 32 random bytes"},
		{"a key not set", issuer + strings.Replace(conns, "GATEWAY_TEST_KEY", "GATEWAY_TEST_UNSET", 1), consent, "connections.key_env: the environment variable GATEWAY_TEST_UNSET is not set"},
		{"pages off loopback over http", issuer + strings.Replace(conns, "http://127.0.0.1:8090", "http://gateway.example.com", 1), consent, `connections.url: "http://gateway.example.com": want the gateway's public base URL, https`},
		{"pages under a path", issuer + strings.Replace(conns, "http://127.0.0.1:8090", "https://gateway.example.com/gw", 1), consent, "without a path"},
		{"pages without a sign-in client", issuer + strings.Replace(conns, ", sign_in: {client_id: gw-web}", "", 1), consent, "connections.sign_in.client_id: give the gateway's client id at auth.issuer"},
	} {
		yaml := strings.Replace(tc.base, "stdio: {command: server}", "http: {url: http://127.0.0.1:1/mcp, "+tc.http+"}", 1)
		_, err := gateway.Parse("gw.yaml", []byte(yaml))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}
