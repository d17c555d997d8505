package gateway

import (
	"cmp"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpimport"
)

var (
	upstreamNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	localNamePattern    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)
	envNamePattern      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Defaults.
const (
	DefaultName         = "gateway"
	DefaultListen       = "127.0.0.1:8090"
	DefaultPath         = "/mcp"
	DefaultMessageBytes = 4 << 20
	maxMessageBytes     = 16 << 20
	defaultRestartMin   = 200 * time.Millisecond
	defaultRestartMax   = 30 * time.Second
)

// validate fills in defaults and adds every problem of c to ce. lookupEnv
// answers whether the environment variables the config names are set.
func (c *Config) validate(ce *ConfigError, pos positions, lookupEnv func(string) (string, bool)) {
	bad := func(format string, args ...any) func(path ...any) {
		return func(path ...any) { ce.add(pos.at(path...), pathString(path...), format, args...) }
	}
	c.Name = cmp.Or(c.Name, DefaultName)
	if !localNamePattern.MatchString(c.Name) {
		bad("%q: want a letter followed by at most 31 letters, digits, '_' or '-'", c.Name)("name")
	}
	c.Listen = cmp.Or(c.Listen, DefaultListen)
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		bad("%q: want host:port, such as 127.0.0.1:8090", c.Listen)("listen")
	}
	c.Path = cmp.Or(c.Path, DefaultPath)
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?# ") {
		bad("%q: want a URL path such as /mcp", c.Path)("path")
	}

	switch a := &c.Auth; {
	case a.Issuer != "" && a.Development != nil:
		bad("set issuer or development, not both")("auth")
	case a.Issuer != "":
		if u, err := url.Parse(a.Issuer); err != nil || u.Scheme != "https" && !isLoopbackURL(u) || u.Host == "" {
			bad("%q: want the issuer's https URL (http only on a loopback address)", a.Issuer)("auth", "issuer")
		}
		if u, err := url.Parse(a.Resource); a.Resource == "" || err != nil || u.Host == "" || u.Scheme != "https" && !isLoopbackURL(u) {
			bad("want the gateway's public MCP URL (https, or http on a loopback address): its tokens must name it")("auth", "resource")
		}
	case a.Development != nil:
		a.Development.Principal = cmp.Or(a.Development.Principal, "developer")
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) && err == nil {
			bad("a development principal serves anyone who connects: listen on a loopback address, or configure an issuer")("auth", "development")
		}
		checkScopes(bad, a.Development.Scopes, "auth", "development", "scopes")
	default:
		bad("say how callers are identified: issuer and resource (OAuth), or development (local trial)")("auth")
	}

	l := &c.Limits
	if l.CallTimeout < 0 || l.CallTimeout.D() > mcpimport.MaxCallTimeout+5*time.Second {
		bad("%s: want a positive duration of at most %s", l.CallTimeout.D(), mcpimport.MaxCallTimeout+5*time.Second)("limits", "call_timeout")
	}
	if l.MaxBodyBytes < 0 {
		bad("want a positive number of bytes")("limits", "max_body_bytes")
	}
	if l.MaxSessions < -1 {
		bad("want a positive number, or -1 for no cap")("limits", "max_sessions")
	}
	if l.MaxSessionsPerPrincipal < -1 {
		bad("want a positive number, or -1 for no cap")("limits", "max_sessions_per_principal")
	}
	if r := l.RateLimit; r != nil && (!(r.PerSecond > 0) || r.Burst < 1) {
		bad("want per_second > 0 and burst ≥ 1")("limits", "rate_limit")
	}

	ap := c.Approvals
	switch {
	case ap.SQLite != "" && ap.PostgresEnv != "":
		bad("set sqlite or postgres_env, not both")("approvals")
	case ap.PostgresEnv != "":
		checkEnv(bad, lookupEnv, ap.PostgresEnv, "approvals", "postgres_env")
	}

	if cn := c.Connections; cn != nil {
		if u, err := url.Parse(cn.URL); err != nil || u.Host == "" || u.Scheme != "https" && !isLoopbackURL(u) || u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
			bad("%q: want the gateway's public base URL, https (http only on a loopback address), without a path", cn.URL)("connections", "url")
		}
		if cn.KeyEnv == "" {
			bad("name the environment variable holding the sealing key: 32 random bytes, base64 (openssl rand -base64 32)")("connections", "key_env")
		} else if v, ok := lookupEnv(cn.KeyEnv); ok {
			if _, err := sealingKey(v); err != nil {
				bad("the environment variable %s: %v", cn.KeyEnv, err)("connections", "key_env")
			}
		} else {
			checkEnv(bad, lookupEnv, cn.KeyEnv, "connections", "key_env")
		}
		if cn.SignIn.ClientID == "" {
			bad("give the gateway's client id at auth.issuer, to sign people in on the pages")("connections", "sign_in", "client_id")
		}
		if cn.SignIn.ClientSecretEnv != "" {
			checkEnv(bad, lookupEnv, cn.SignIn.ClientSecretEnv, "connections", "sign_in", "client_secret_env")
		}
	}

	if len(c.Upstreams) == 0 {
		bad("declare at least one upstream")("upstreams")
	}
	upstreams := map[string]int{}
	type site struct {
		upstream, tool int
	}
	locals := map[string]site{}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		at := func(path ...any) []any { return append([]any{"upstreams", i}, path...) }
		if !upstreamNamePattern.MatchString(u.Name) {
			bad("%q: want a letter or digit, then at most 63 letters, digits, '.', '_' or '-'", u.Name)(at("name")...)
		} else if prev, dup := upstreams[u.Name]; dup {
			bad("%q is also the name of upstreams[%d]%s", u.Name, prev, pos.ref("upstreams", prev, "name"))(at("name")...)
		} else {
			upstreams[u.Name] = i
		}
		switch {
		case u.HTTP != nil && u.Stdio != nil:
			bad("set http or stdio, not both")(at()...)
		case u.HTTP != nil:
			checkHTTP(bad, lookupEnv, u.HTTP, at("http"))
			if u.HTTP.Credentials == CredentialsTokenExchange && c.Auth.Issuer == "" {
				bad("token_exchange exchanges each caller's token, and a development principal has none: configure auth.issuer, or use credentials: gateway")(at("http", "credentials")...)
			}
			if u.HTTP.Credentials == CredentialsConsent {
				switch {
				case c.Auth.Issuer == "":
					bad("consent keeps a grant per person, who signs in with auth.issuer: configure it, or use credentials: gateway")(at("http", "credentials")...)
				case c.Connections == nil:
					bad("consent needs connections: the pages where people sign in and agree (url, key_env, sign_in)")(at("http", "credentials")...)
				case c.Approvals == (Approvals{}):
					bad("consent keeps each person's grant in the approval store: set approvals")(at("http", "credentials")...)
				}
			}
		case u.Stdio != nil:
			checkStdio(bad, u.Stdio, at("stdio"))
		default:
			bad("say how to reach the upstream: http (a URL) or stdio (a command)")(at()...)
		}
		u.Restart.Min = cmp.Or(u.Restart.Min, Duration(defaultRestartMin))
		u.Restart.Max = cmp.Or(u.Restart.Max, Duration(defaultRestartMax))
		if u.Restart.Min <= 0 || u.Restart.Max < u.Restart.Min {
			bad("want 0 < min ≤ max")(at("restart")...)
		}
		lim := &u.Limits
		if lim.CallTimeout < 0 || lim.CallTimeout.D() > mcpimport.MaxCallTimeout {
			bad("%s: want a positive duration of at most %s", lim.CallTimeout.D(), mcpimport.MaxCallTimeout)(at("limits", "call_timeout")...)
		}
		if d := mcpimport.DefaultLimits().ObjectBytes; lim.ObjectBytes < 0 || lim.ObjectBytes > d {
			bad("%d: want 1..%d (limits can be lowered, not raised)", lim.ObjectBytes, d)(at("limits", "object_bytes")...)
		}
		lim.MessageBytes = cmp.Or(lim.MessageBytes, DefaultMessageBytes)
		if lim.MessageBytes < 1 || lim.MessageBytes > maxMessageBytes {
			bad("%d: want 1..%d", lim.MessageBytes, maxMessageBytes)(at("limits", "message_bytes")...)
		}
		if len(u.Tools)+len(u.Resources)+len(u.ResourceTemplates)+len(u.Prompts) == 0 {
			bad("bind at least one tool (or resource, resource template or prompt): only what is bound here is imported")(at("tools")...)
		}
		remotes := map[string]int{}
		for j := range u.Tools {
			t := &u.Tools[j]
			tat := func(path ...any) []any { return at(append([]any{"tools", j}, path...)...) }
			if t.Remote == "" {
				bad("name the upstream's tool")(tat("remote")...)
			} else if prev, dup := remotes[t.Remote]; dup {
				bad("%q is also bound by tools[%d]%s", t.Remote, prev, pos.ref(at("tools", prev)...))(tat("remote")...)
			} else {
				remotes[t.Remote] = j
			}
			if t.Name == "" && t.Remote != "" {
				t.Name = u.Prefix + t.Remote
				if !localNamePattern.MatchString(t.Name) {
					bad("the local name %q (prefix and remote name) is not one: set name, a letter followed by at most 31 letters, digits, '_' or '-'", t.Name)(tat("remote")...)
				}
			} else if t.Name != "" && !localNamePattern.MatchString(t.Name) {
				bad("%q: want a letter followed by at most 31 letters, digits, '_' or '-'", t.Name)(tat("name")...)
			}
			if t.Name != "" && localNamePattern.MatchString(t.Name) {
				if prev, dup := locals[t.Name]; dup {
					bad("local name %q is also given to upstreams[%d].tools[%d]%s: set a prefix or a name", t.Name, prev.upstream, prev.tool, pos.ref("upstreams", prev.upstream, "tools", prev.tool))(tat()...)
				} else {
					locals[t.Name] = site{i, j}
				}
			}
			if strings.TrimSpace(t.Title) == "" {
				bad("give the tool a title: it is published, and shown to approvers")(tat("title")...)
			}
			checkScopes(bad, t.Scopes, tat("scopes")...)
			switch t.Profile {
			case "", "strict", string(mcpimport.ProfileStandard):
			default:
				bad("%q: want strict or standard", t.Profile)(tat("profile")...)
			}
			if t.TaskTimeout != 0 && !t.Task {
				bad("task_timeout applies with task: true")(tat("task_timeout")...)
			}
			if t.TaskTimeout < 0 || t.TaskTimeout.D() > mcpimport.MaxCallTimeout {
				bad("%s: want a positive duration of at most %s", t.TaskTimeout.D(), mcpimport.MaxCallTimeout)(tat("task_timeout")...)
			}
			switch t.Write {
			case "":
				if t.ApprovalScope != "" || t.ApprovalScopeRevision != "" {
					bad("approval_scope applies to writes only: set write, or remove it")(tat()...)
				}
			case "write", "destructive":
				if c.Approvals == (Approvals{}) {
					bad("a write needs approvals: configure approvals (sqlite or postgres_env)")(tat("write")...)
				}
				if t.ConcurrencySafe {
					bad("writes run one at a time: remove concurrency_safe")(tat("concurrency_safe")...)
				}
				if t.Task {
					bad("a write is never followed as a task: task applies to reads only")(tat("task")...)
				}
				t.ApprovalScope = cmp.Or(t.ApprovalScope, u.Name)
				t.ApprovalScopeRevision = cmp.Or(t.ApprovalScopeRevision, "1")
			default:
				bad("%q: want write or destructive (or no write key, for a read)", t.Write)(tat("write")...)
			}
		}
	}
	c.validateFeatures(bad, pos)
	c.validateSearch(bad)
	c.validateLock(bad)
}

// validateLock checks the lock file's key (pinned definitions, issue 30).
func (c *Config) validateLock(bad func(string, ...any) func(...any)) {
	if strings.TrimSpace(c.Lock) == "" {
		bad("name the lock file that pins the upstreams' tool definitions (`agnara gateway accept` writes it)")("lock")
	}
}

// validateFeatures checks every upstream's resources, resource templates
// and prompts, after the tools (whose local names they must not take), and
// fills in the default names of prompts.
func (c *Config) validateFeatures(bad func(string, ...any) func(...any), pos positions) {
	// Local names become capabilities of one application: one owner each.
	names := map[string][]any{}
	for i, u := range c.Upstreams {
		for j, t := range u.Tools {
			if _, taken := names[t.Name]; t.Name != "" && !taken {
				names[t.Name] = []any{"upstreams", i, "tools", j}
			}
		}
	}
	claim := func(name string, path []any) {
		if prev, taken := names[name]; taken {
			bad("local name %q is also given to %s%s: set another name", name, pathString(prev...), pos.ref(prev...))(path...)
			return
		}
		names[name] = path
	}
	uris := map[string][]any{}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		for _, kind := range []struct {
			key      string
			list     []Resource
			template bool
		}{{"resources", u.Resources, false}, {"resource_templates", u.ResourceTemplates, true}} {
			what := map[bool]string{false: "resource URI", true: "resource URI template"}[kind.template]
			remotes := map[string]int{}
			for j := range kind.list {
				r := &kind.list[j]
				at := func(p ...any) []any { return append([]any{"upstreams", i, kind.key, j}, p...) }
				ok := true
				if r.Remote == "" {
					bad("name the upstream's %s", what)(at("remote")...)
					ok = false
				} else if prev, dup := remotes[r.Remote]; dup {
					bad("%q is also bound by %s[%d]%s", r.Remote, kind.key, prev, pos.ref("upstreams", i, kind.key, prev))(at("remote")...)
				} else {
					remotes[r.Remote] = j
				}
				switch {
				case r.Name == "":
					bad("give the resource a local name: a letter followed by at most 31 letters, digits, '_' or '-'")(at("name")...)
					ok = false
				case !localNamePattern.MatchString(r.Name):
					bad("%q: want a letter followed by at most 31 letters, digits, '_' or '-'", r.Name)(at("name")...)
					ok = false
				default:
					claim(r.Name, at())
				}
				if strings.TrimSpace(r.Title) == "" {
					bad("give the resource a title: it is published")(at("title")...)
					ok = false
				}
				checkScopes(bad, r.Scopes, at("scopes")...)
				r.URI = cmp.Or(r.URI, r.Remote)
				local := r.URI
				if strings.HasPrefix(strings.ToLower(local), "ui:") {
					// Under ui:// the gateway serves only views it pinned
					// with their tools (ADR 85).
					bad("%q: the ui: scheme is for the MCP App views of tools, which the gateway imports and pins with them; give the resource a local URI of another scheme (uri)", local)(at("uri")...)
					ok = false
				}
				if key := kind.key + " " + local; ok {
					if prev, dup := uris[key]; dup {
						bad("local %s %q is also given to %s%s", what, local, pathString(prev...), pos.ref(prev...))(at()...)
					} else {
						uris[key] = at()
					}
				}
				if !ok {
					continue
				}
				// The URIs, templates and media types: mcpimport's rules, one owner.
				b := mcpimport.ResourceBinding{Name: r.Name, URI: r.URI, Title: r.Title, MIMETypes: r.MIMETypes}
				fb := mcpimport.FeatureBindings{Resources: map[string]mcpimport.ResourceBinding{r.Remote: b}}
				if kind.template {
					fb = mcpimport.FeatureBindings{ResourceTemplates: fb.Resources}
				}
				if err := fb.Check(); err != nil {
					msg := err.Error()
					if _, rest, cut := strings.Cut(msg, strconv.Quote(r.Remote)+": "); cut {
						msg = rest
					}
					bad("%s", msg)(at()...)
				}
			}
		}
		remotes := map[string]int{}
		for j := range u.Prompts {
			p := &u.Prompts[j]
			at := func(path ...any) []any { return append([]any{"upstreams", i, "prompts", j}, path...) }
			if p.Remote == "" {
				bad("name the upstream's prompt")(at("remote")...)
			} else if prev, dup := remotes[p.Remote]; dup {
				bad("%q is also bound by prompts[%d]%s", p.Remote, prev, pos.ref("upstreams", i, "prompts", prev))(at("remote")...)
			} else {
				remotes[p.Remote] = j
			}
			switch {
			case p.Name == "" && p.Remote != "":
				p.Name = u.Prefix + p.Remote
				if !localNamePattern.MatchString(p.Name) {
					bad("the local name %q (prefix and remote name) is not one: set name, a letter followed by at most 31 letters, digits, '_' or '-'", p.Name)(at("remote")...)
				} else {
					claim(p.Name, at())
				}
			case p.Name != "" && !localNamePattern.MatchString(p.Name):
				bad("%q: want a letter followed by at most 31 letters, digits, '_' or '-'", p.Name)(at("name")...)
			case p.Name != "":
				claim(p.Name, at())
			}
			if strings.TrimSpace(p.Title) == "" {
				bad("give the prompt a title: it is published")(at("title")...)
			}
			checkScopes(bad, p.Scopes, at("scopes")...)
		}
	}
}

func checkHTTP(bad func(string, ...any) func(...any), lookupEnv func(string) (string, bool), h *HTTPUpstream, at []any) {
	p := func(path ...any) []any { return append(slices.Clone(at), path...) }
	if u, err := url.Parse(h.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("%q: want the upstream's http(s) MCP endpoint, such as http://127.0.0.1:8080/mcp", h.URL)(p("url")...)
	}
	if h.Protocol != "" && !slices.Contains(mcpversion.Supported(), h.Protocol) {
		bad("%q: want one of %s", h.Protocol, strings.Join(mcpversion.Supported(), ", "))(p("protocol")...)
	}
	switch h.Credentials {
	case "", CredentialsGateway:
		if h.TokenExchange != nil {
			bad("the upstream is reached with the gateway's identity: set credentials: token_exchange to exchange each caller's token")(p("token_exchange")...)
		}
	case CredentialsTokenExchange:
		if h.Protocol != "" && h.Protocol != mcpversion.Modern {
			bad("%q: a caller's own credential needs %s, where every request stands alone (a handshake-era session upstream belongs to the one identity that opened it)", h.Protocol, mcpversion.Modern)(p("protocol")...)
		}
		x := h.TokenExchange
		if x == nil {
			bad("say how to exchange a caller's token: token_url, client_id, client_secret_env")(p("token_exchange")...)
			break
		}
		if u, err := url.Parse(x.TokenURL); err != nil || u.Host == "" || u.Scheme != "https" && !isLoopbackURL(u) {
			bad("%q: want the authorization server's token endpoint, https (http only on a loopback address)", x.TokenURL)(p("token_exchange", "token_url")...)
		}
		if x.ClientID == "" {
			bad("give the gateway's client id at the authorization server")(p("token_exchange", "client_id")...)
		}
		if x.ClientSecretEnv == "" {
			bad("name the environment variable holding the client secret (the file holds no secrets)")(p("token_exchange", "client_secret_env")...)
		} else {
			checkEnv(bad, lookupEnv, x.ClientSecretEnv, p("token_exchange", "client_secret_env")...)
		}
		if x.Resource != "" {
			if u, err := url.Parse(x.Resource); err != nil || u.Host == "" || u.Fragment != "" || (u.Scheme != "http" && u.Scheme != "https") {
				bad("%q: want an absolute http(s) URI without a fragment (RFC 8707)", x.Resource)(p("token_exchange", "resource")...)
			}
		}
		checkScopes(bad, x.Scopes, p("token_exchange", "scopes")...)
	case CredentialsConsent:
		if h.Protocol != "" && h.Protocol != mcpversion.Modern {
			bad("%q: a caller's own credential needs %s, where every request stands alone (a handshake-era session upstream belongs to the one identity that opened it)", h.Protocol, mcpversion.Modern)(p("protocol")...)
		}
		x := h.Consent
		if x == nil {
			bad("say which client the gateway is at the upstream's authorization server: client_id (and client_secret_env), scopes")(p("consent")...)
			break
		}
		if x.AuthorizationServer != "" {
			if u, err := url.Parse(x.AuthorizationServer); err != nil || u.Host == "" || u.Scheme != "https" && !isLoopbackURL(u) {
				bad("%q: want the authorization server's issuer URL, https (http only on a loopback address)", x.AuthorizationServer)(p("consent", "authorization_server")...)
			}
		}
		if x.ClientID == "" {
			bad("give the gateway's client id at the upstream's authorization server")(p("consent", "client_id")...)
		}
		if x.ClientSecretEnv != "" {
			checkEnv(bad, lookupEnv, x.ClientSecretEnv, p("consent", "client_secret_env")...)
		}
		if x.Resource != "" {
			if u, err := url.Parse(x.Resource); err != nil || u.Host == "" || u.Fragment != "" || (u.Scheme != "http" && u.Scheme != "https") {
				bad("%q: want an absolute http(s) URI without a fragment (RFC 8707)", x.Resource)(p("consent", "resource")...)
			}
		}
		checkScopes(bad, x.Scopes, p("consent", "scopes")...)
	default:
		bad("%q: want gateway (the gateway's own identity), token_exchange (each caller's, exchanged) or consent (each person's own grant)", h.Credentials)(p("credentials")...)
	}
	if h.Credentials != CredentialsConsent && h.Consent != nil {
		bad("set credentials: consent to use it")(p("consent")...)
	}
	if o := h.OAuth; o != nil {
		if u, err := url.Parse(o.TokenURL); err != nil || u.Host == "" || u.Scheme != "https" && !isLoopbackURL(u) {
			bad("%q: want the token endpoint's https URL (http only on a loopback address)", o.TokenURL)(p("oauth", "token_url")...)
		}
		if o.ClientID == "" {
			bad("give the gateway's client id")(p("oauth", "client_id")...)
		}
		if o.ClientSecretEnv == "" {
			bad("name the environment variable holding the client secret (the file holds no secrets)")(p("oauth", "client_secret_env")...)
		} else {
			checkEnv(bad, lookupEnv, o.ClientSecretEnv, p("oauth", "client_secret_env")...)
		}
	}
}

func checkStdio(bad func(string, ...any) func(...any), s *StdioUpstream, at []any) {
	p := func(path ...any) []any { return append(slices.Clone(at), path...) }
	switch {
	case strings.TrimSpace(s.Command) == "":
		bad("name the program to run")(p("command")...)
	case strings.ContainsAny(s.Command, " \t") && len(s.Args) == 0:
		bad("%q: the command runs without a shell: put its arguments in args", s.Command)(p("command")...)
	}
	for _, k := range slices.Sorted(mapsKeys(s.Env)) {
		if !envNamePattern.MatchString(k) {
			bad("%q is not an environment variable name", k)(p("env", k)...)
		}
	}
	for i, k := range s.PassEnv {
		if !envNamePattern.MatchString(k) {
			bad("%q is not an environment variable name", k)(p("pass_env", i)...)
		}
	}
	switch s.Stderr {
	case "", "info", "debug", "warn", "discard":
	default:
		bad("%q: want info, debug, warn or discard", s.Stderr)(p("stderr")...)
	}
}

func checkScopes(bad func(string, ...any) func(...any), scopes []string, at ...any) {
	for i, s := range scopes {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r == 0x7f }) {
			bad("%q: a scope is printable, without spaces, quotes or backslashes", s)(append(slices.Clone(at), i)...)
		}
	}
}

func checkEnv(bad func(string, ...any) func(...any), lookupEnv func(string) (string, bool), name string, at ...any) {
	if !envNamePattern.MatchString(name) {
		bad("%q is not an environment variable name", name)(at...)
		return
	}
	if v, ok := lookupEnv(name); !ok || v == "" {
		bad("the environment variable %s is not set", name)(at...)
	}
}

func isLoopbackURL(u *url.URL) bool {
	h := u.Hostname()
	ip := net.ParseIP(h)
	return u.Scheme == "http" && (h == "localhost" || ip != nil && ip.IsLoopback())
}
