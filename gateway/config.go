package gateway

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is a gateway's declaration: where it listens, who may call it, the
// limits it enforces, where approvals are kept, and the upstream servers it
// imports tools (and resources and prompts) from, with an explicit binding
// for every one it imports.
// It is what a gateway.yaml file holds ([Load], [Parse]); each field's
// comment ends with its YAML key. Hosts that embed the gateway in Go build
// one in code; [New] validates it.
type Config struct {
	// Name is the gateway's application name: every tool is published as
	// "<name>.<local name>". Default "gateway". (name)
	Name string `yaml:"name"`
	// Listen is the TCP address to serve on. Default "127.0.0.1:8090".
	// (listen)
	Listen string `yaml:"listen"`
	// Path is the URL path of the MCP endpoint. Default "/mcp". (path)
	Path string `yaml:"path"`
	// Auth says how callers are identified. (auth)
	Auth Auth `yaml:"auth"`
	// Limits are the gateway's own limits on its callers. (limits)
	Limits Limits `yaml:"limits"`
	// Approvals is where approvals of imported writes are kept. Required
	// when any tool is a write. (approvals)
	Approvals Approvals `yaml:"approvals"`
	// Upstreams are the servers tools are imported from, at least one.
	// (upstreams)
	Upstreams []Upstream `yaml:"upstreams"`
	// Connections is where people grant the gateway the right to act for
	// them at upstreams whose credentials are "consent". Required with
	// any. (connections)
	Connections *Connections `yaml:"connections"`

	// Search, when set, lists callers two tools, search_tools and
	// call_tool, and the tools named in Listed, instead of every tool:
	// a caller finds the definitions it needs by searching (see
	// docs/gateway.md, "Search"). (search)
	Search *Search `yaml:"search"`

	// Lock is the lock file: the definition of each bound tool an operator
	// accepted ([Lock]). A tool is served only while its upstream offers
	// the definition pinned there. [Parse] defaults it to the config file's
	// name with the extension ".lock" (gateway.yaml: gateway.lock);
	// required for a config built in Go. (lock)
	Lock string `yaml:"lock"`
}

// Auth says how the gateway identifies its callers: with OAuth bearer
// tokens from Issuer, or, for local trial on a loopback address only, as one
// fixed development principal. Exactly one of Issuer and Development is set.
type Auth struct {
	// Issuer is the OpenID Connect issuer whose access tokens callers
	// present. (issuer)
	Issuer string `yaml:"issuer"`
	// Resource is the gateway's resource identifier (its public MCP URL):
	// the audience its tokens must name, and the resource its metadata
	// describes (RFC 9728). Required with Issuer. (resource)
	Resource string `yaml:"resource"`
	// Development makes every caller act as one principal, loudly, and
	// requires a loopback Listen address. (development)
	Development *Development `yaml:"development"`
}

// Development is the fixed principal of a gateway run for local trial.
type Development struct {
	// Principal is the principal's id. Default "developer". (principal)
	Principal string `yaml:"principal"`
	// Scopes are the principal's scopes. (scopes)
	Scopes []string `yaml:"scopes"`
}

// Limits are the gateway's limits on its own callers. Zero fields take the
// defaults of package mcpexpose.
type Limits struct {
	// CallTimeout bounds each tools/call a caller makes, imported call
	// included. Default: the longest upstream call timeout plus 5 s.
	// (call_timeout)
	CallTimeout Duration `yaml:"call_timeout"`
	// MaxBodyBytes bounds request bodies. (max_body_bytes)
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxSessions caps live handshake-era sessions; -1: no cap.
	// (max_sessions)
	MaxSessions int `yaml:"max_sessions"`
	// MaxSessionsPerPrincipal caps one principal's sessions; -1: no cap.
	// (max_sessions_per_principal)
	MaxSessionsPerPrincipal int `yaml:"max_sessions_per_principal"`
	// RateLimit limits each principal's tools/call rate across every tool.
	// (rate_limit)
	RateLimit *RateLimit `yaml:"rate_limit"`
}

// RateLimit is a token bucket: PerSecond calls a second, Burst at once.
type RateLimit struct {
	PerSecond float64 `yaml:"per_second"` // (per_second)
	Burst     int     `yaml:"burst"`      // (burst)
}

// Approvals is where approvals of imported writes are kept: a SQLite file
// (one gateway), or a PostgreSQL database shared by several, whose DSN is
// read from the environment variable PostgresEnv (a DSN holds a password,
// and a config file is no place for one). At most one is set.
type Approvals struct {
	SQLite      string `yaml:"sqlite"`       // (sqlite)
	PostgresEnv string `yaml:"postgres_env"` // (postgres_env)
}

// Upstream is one server the gateway imports tools from, over HTTP or
// stdio (exactly one of the two).
type Upstream struct {
	// Name identifies the upstream in logs, snapshots and approvals: a
	// letter or digit, then at most 63 letters, digits, '.', '_' or '-'.
	// (name)
	Name string `yaml:"name"`
	// Prefix is put before each remote tool name to make its local name,
	// unless the tool's binding names it. (prefix)
	Prefix string `yaml:"prefix"`
	// HTTP is a Streamable HTTP upstream. (http)
	HTTP *HTTPUpstream `yaml:"http"`
	// Stdio is an upstream the gateway runs as a child process. (stdio)
	Stdio *StdioUpstream `yaml:"stdio"`
	// Restart is the backoff between attempts to connect (and, for stdio,
	// to restart the process). (restart)
	Restart Restart `yaml:"restart"`
	// Limits bound what this upstream may send. (limits)
	Limits UpstreamLimits `yaml:"limits"`
	// Tools are the bindings: the only remote tools imported. (tools)
	Tools []Tool `yaml:"tools"`

	// Optional makes every binding of this upstream optional unless the
	// binding says otherwise ([Tool.Optional]). Default false: strict.
	// (optional)
	Optional bool `yaml:"optional"`

	// Resources, ResourceTemplates and Prompts bind the upstream's
	// resources, resource templates and prompts: the only ones served.
	// (resources, resource_templates, prompts)
	Resources         []Resource `yaml:"resources"`
	ResourceTemplates []Resource `yaml:"resource_templates"`
	Prompts           []Prompt   `yaml:"prompts"`
}

// HTTPUpstream is an upstream reached over Streamable HTTP.
type HTTPUpstream struct {
	// URL is the upstream's MCP endpoint, http or https. (url)
	URL string `yaml:"url"`
	// Protocol is the MCP revision to ask for. Default: the newest the
	// upstream offers, 2026-07-28 when it serves it
	// (mcpimport.HTTPProtocolVersion): no session upstream, so a load
	// balancer needs no affinity, and ordinary calls take the client
	// half's fast path. 2025-11-25 keeps one session for every call, which
	// costs an SDK-based upstream less and the gateway more. (protocol)
	Protocol string `yaml:"protocol"`
	// Credentials says whose authority a request to the upstream carries
	// (docs/gateway.md, "Credentials"):
	//
	//   - "gateway" (the default): the gateway's own identity, the tokens
	//     OAuth gets, or none. Every caller reaches the upstream as the
	//     gateway.
	//   - "token_exchange": each caller's own. The gateway exchanges the
	//     caller's verified token at the authorization server (RFC 8693)
	//     for one whose audience is the upstream, as TokenExchange says,
	//     and sends that; the caller's token never reaches the upstream.
	//     Needs auth.issuer, and the 2026-07-28 revision upstream, where
	//     every request stands alone.
	//   - "consent": each caller's own grant at the upstream's own
	//     authorization server, which the person gives by signing in there
	//     once, through a link the gateway asks the caller to open (a URL
	//     elicitation), as Consent says; kept sealed in the approval store
	//     and refreshed. Needs auth.issuer, connections and approvals, and
	//     2026-07-28 upstream.
	//
	// Callers' tokens are never forwarded as they are. Requests the gateway
	// makes for no caller (discovery, pings) carry the gateway's identity
	// in every mode. (credentials)
	Credentials string `yaml:"credentials"`
	// TokenExchange is how the gateway exchanges a caller's token for the
	// upstream; required with credentials "token_exchange". (token_exchange)
	TokenExchange *TokenExchange `yaml:"token_exchange"`
	// Consent is the gateway's client at the upstream's own authorization
	// server; required with credentials "consent". (consent)
	Consent *Consent `yaml:"consent"`
	// OAuth, when set, gets the gateway its own tokens for the upstream with
	// the client credentials grant: the gateway's identity. (oauth)
	OAuth *ClientCredentials `yaml:"oauth"`
}

// The values of [HTTPUpstream].Credentials, also what an audit record's
// credential names (docs/audit.md).
const (
	CredentialsGateway       = "gateway"
	CredentialsTokenExchange = "token_exchange"
	CredentialsConsent       = "consent"
)

// Consent is the gateway's registered client at an upstream's own
// authorization server, through which each person grants the gateway the
// right to act for them there (the authorization-code flow with PKCE,
// redirecting to the gateway's connections/callback page).
type Consent struct {
	// AuthorizationServer is that server's issuer URL (its metadata, RFC
	// 8414 or OpenID discovery, names its endpoints). Default: the first
	// one the upstream's protected resource metadata names (RFC 9728).
	// (authorization_server)
	AuthorizationServer string `yaml:"authorization_server"`
	// ClientID is the gateway's client id there. (client_id)
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv names the variable holding its secret; empty for a
	// public client, which PKCE alone binds. (client_secret_env)
	ClientSecretEnv string `yaml:"client_secret_env"`
	// Scopes are the scopes to ask the person for: what the upstream's
	// bindings need, no more. (scopes)
	Scopes []string `yaml:"scopes"`
	// Resource is the upstream's resource identifier (RFC 8707). Default:
	// the upstream URL. (resource)
	Resource string `yaml:"resource"`
}

// Connections is where people connect the upstreams whose credentials are
// "consent": pages the gateway serves under URL + "/connections/", where a
// person signs in with the gateway's own issuer (auth.issuer), agrees, and
// is sent to the upstream's authorization server; and where they see and
// revoke their own grants.
type Connections struct {
	// URL is the gateway's public base URL, such as
	// https://gateway.example.com (http only on a loopback address). The
	// upstreams' authorization servers must have URL +
	// "/connections/callback" registered, exactly, and auth.issuer URL +
	// "/connections/signed-in". (url)
	URL string `yaml:"url"`
	// KeyEnv names the variable holding the key that seals the grants at
	// rest and the pages' cookies: 32 random bytes, base64 (openssl rand
	// -base64 32). Every gateway sharing the approval store needs the
	// same. (key_env)
	KeyEnv string `yaml:"key_env"`
	// SignIn is the gateway's client at auth.issuer, to sign people in on
	// the pages. (sign_in)
	SignIn ClientRegistration `yaml:"sign_in"`
}

// ClientRegistration is a client id and the variable holding its secret.
type ClientRegistration struct {
	ClientID        string `yaml:"client_id"`         // (client_id)
	ClientSecretEnv string `yaml:"client_secret_env"` // (client_secret_env)
}

// TokenExchange is the gateway's client at the authorization server that
// issued its callers' tokens (auth.issuer), and what it asks for there on a
// caller's behalf (RFC 8693): a token for Resource (RFC 8707), with at most
// Scopes, for the caller's own subject. An exchanged token is kept per
// caller and upstream until shortly before it expires.
type TokenExchange struct {
	// TokenURL is the authorization server's token endpoint. (token_url)
	TokenURL string `yaml:"token_url"`
	// ClientID is the gateway's client id there. (client_id)
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv names the environment variable holding the client
	// secret. (client_secret_env)
	ClientSecretEnv string `yaml:"client_secret_env"`
	// Scopes are the scopes to ask for: what the upstream's bindings need,
	// no more. The authorization server grants at most what the caller's
	// own token holds. Default: none named (the server decides). (scopes)
	Scopes []string `yaml:"scopes"`
	// Resource is the upstream's resource identifier, the audience of the
	// exchanged token (RFC 8707). Default: the upstream URL. (resource)
	Resource string `yaml:"resource"`
}

// ClientCredentials are the gateway's own credentials at an upstream's
// authorization server.
type ClientCredentials struct {
	TokenURL string `yaml:"token_url"` // (token_url)
	ClientID string `yaml:"client_id"` // (client_id)
	// ClientSecretEnv names the environment variable holding the client
	// secret. (client_secret_env)
	ClientSecretEnv string   `yaml:"client_secret_env"`
	Scopes          []string `yaml:"scopes"` // (scopes)
	// Resource is the resource to ask a token for (RFC 8707). Default: the
	// upstream URL. (resource)
	Resource string `yaml:"resource"`
}

// StdioUpstream is an upstream the gateway runs itself: Command with Args,
// started directly (never through a shell), speaking MCP on its standard
// input and output.
type StdioUpstream struct {
	// Command is the program: a path, or a name looked up in PATH. (command)
	Command string `yaml:"command"`
	// Args are its arguments, each passed as is. (args)
	Args []string `yaml:"args"`
	// Env sets variables of the child's environment. (env)
	Env map[string]string `yaml:"env"`
	// PassEnv names variables copied from the gateway's own environment
	// (secrets among them, so that the file holds none). The child's
	// environment is Env, PassEnv and PATH, nothing else. (pass_env)
	PassEnv []string `yaml:"pass_env"`
	// Dir is the child's working directory. Default: the gateway's. (dir)
	Dir string `yaml:"dir"`
	// Stderr is the log level of the lines the child writes to its
	// standard error: "info" (default), "debug", "warn" or "discard".
	// (stderr)
	Stderr string `yaml:"stderr"`
}

// Restart is a backoff: the first retry after about Min, doubling up to
// Max, jittered.
type Restart struct {
	Min Duration `yaml:"min"` // default 200ms (min)
	Max Duration `yaml:"max"` // default 30s (max)
}

// Delay is the wait before attempt n+1 after n failed ones (n from 0):
// Min·2ⁿ, capped at Max, then a random point in its upper half, so that
// gateways that lost the same upstream do not retry in step.
func (r Restart) Delay(n int) time.Duration {
	lo, hi := r.Min.D(), r.Max.D()
	d := hi
	if n < 32 && lo<<n < hi && lo<<n > 0 {
		d = lo << n
	}
	return d/2 + rand.N(d/2+1)
}

// UpstreamLimits bound what one upstream may send. Zero fields take
// mcpimport's defaults, which are also the ceilings (except CallTimeout, at
// most 300 s).
type UpstreamLimits struct {
	// CallTimeout bounds each call of the upstream. (call_timeout)
	CallTimeout Duration `yaml:"call_timeout"`
	// ObjectBytes bounds the arguments sent and each result. (object_bytes)
	ObjectBytes int `yaml:"object_bytes"`
	// MessageBytes bounds each message read from the upstream: an HTTP
	// response body or a stdio line. Default 4 MiB, at most 16 MiB.
	// (message_bytes)
	MessageBytes int `yaml:"message_bytes"`
}

// Tool is the binding of one remote tool: the host's explicit declaration
// of what it is (a read, or a write behind approvals), under which local
// name, title and scopes it is served, and which schema profile it must
// fit.
type Tool struct {
	// Remote is the upstream's tool name. (remote)
	Remote string `yaml:"remote"`
	// Name is the local name. Default: the upstream's Prefix and Remote.
	// (name)
	Name string `yaml:"name"`
	// Title is published as the tool's title and shown to approvers.
	// Required. (title)
	Title string `yaml:"title"`
	// Description, when set, is published instead of the upstream's own.
	// (description)
	Description string `yaml:"description"`
	// Scopes are the scopes a caller must hold, all of them. (scopes)
	Scopes []string `yaml:"scopes"`
	// Write declares the tool a write: "write" or "destructive". Every call
	// then waits for a durable approval by another person. Empty: a read
	// (the host has established that the remote tool only reads). (write)
	Write string `yaml:"write"`
	// Profile is the schema profile: "strict" (default) or "standard".
	// (profile)
	Profile string `yaml:"profile"`
	// ConcurrencySafe lets a read's calls overlap; without it they run one
	// at a time. (concurrency_safe)
	ConcurrencySafe bool `yaml:"concurrency_safe"`
	// Task lets the upstream answer a read with a task (the MCP tasks
	// extension), which the gateway follows to its result; TaskTimeout
	// bounds the whole call (default: the upstream's call_timeout; at most
	// 300 s). Reads only. (task, task_timeout)
	Task        bool     `yaml:"task"`
	TaskTimeout Duration `yaml:"task_timeout"`
	// ApprovalScope and ApprovalScopeRevision name the authority that
	// approves a write, as recorded in every approval. Defaults: the
	// upstream's name and "1". (approval_scope, approval_scope_revision)
	ApprovalScope         string `yaml:"approval_scope"`
	ApprovalScopeRevision string `yaml:"approval_scope_revision"`

	// Optional says whether the upstream may lack this tool. A strict
	// binding (the default) that cannot be imported (the upstream does not
	// list the tool, its schema is outside the profile, its description is
	// too large) fails the upstream's import with that reason, and the
	// upstream is marked failed. An optional one is withdrawn alone, with
	// its reason, while the upstream's other tools serve. Default: the
	// upstream's Optional. It is no part of a write's binding revision:
	// tolerating absence authorizes nothing. (optional)
	Optional *bool `yaml:"optional" json:"-"`
}

// optional reports whether t, a binding of u, is optional.
func (u *Upstream) optional(t Tool) bool {
	if t.Optional != nil {
		return *t.Optional
	}
	return u.Optional
}

// Resource is the binding of one upstream resource, or, in
// resource_templates, of one resource template: under which local name,
// URI (template), title and scopes it is served, and which media types its
// contents may have. A resource is read-only by nature; it needs no
// approvals.
type Resource struct {
	// Remote is the upstream's resource URI, or its RFC 6570 URI template.
	// (remote)
	Remote string `yaml:"remote"`
	// URI is the local URI, or URI template with exactly the remote one's
	// variables. Default: Remote. (uri)
	URI string `yaml:"uri"`
	// Name is the local name, unique among every tool, resource and prompt
	// of the gateway, and published as the resource's name. Required.
	// (name)
	Name string `yaml:"name"`
	// Title is published as the resource's title. Required. (title)
	Title string `yaml:"title"`
	// Description, when set, is published instead of the upstream's own.
	// (description)
	Description string `yaml:"description"`
	// Scopes are the scopes a caller must hold, all of them, to see the
	// resource listed and to read it. (scopes)
	Scopes []string `yaml:"scopes"`
	// MIMETypes are the media types its contents may have ("text/plain",
	// "image/*"). Default: every well-formed type. (mime_types)
	MIMETypes []string `yaml:"mime_types"`
}

// Prompt is the binding of one upstream prompt: under which local name,
// title and scopes it is served. It is published as "<gateway name>.<local
// name>".
type Prompt struct {
	// Remote is the upstream's prompt name. (remote)
	Remote string `yaml:"remote"`
	// Name is the local name. Default: the upstream's Prefix and Remote.
	// (name)
	Name string `yaml:"name"`
	// Title is published as the prompt's title. Required. (title)
	Title string `yaml:"title"`
	// Description, when set, is published instead of the upstream's own.
	// (description)
	Description string `yaml:"description"`
	// Scopes are the scopes a caller must hold, all of them, to see the
	// prompt listed and to get it. (scopes)
	Scopes []string `yaml:"scopes"`
}

// Duration is a time.Duration written as Go writes one ("30s", "1m30s").
type Duration time.Duration

// UnmarshalYAML reads a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration: want a number with a unit, such as 30s or 1m30s", n.Line, s)}}
	}
	*d = Duration(v)
	return nil
}

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Load reads and validates the config file at path. Every mistake is
// reported at once, each with its line; the error is a [*ConfigError].
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads and validates a config from data; name is the file name used
// in messages. Unknown keys, values of the wrong type and every rule [New]
// checks are reported at once, each with its line; the error is a
// [*ConfigError]. Environment variables the config names (client_secret_env,
// postgres_env) must be set. Defaults are filled in, the lock file's
// among them: name with its extension replaced by ".lock".
func Parse(name string, data []byte) (*Config, error) {
	ce := &ConfigError{File: name}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		ce.addRaw(strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, ce
	}
	if len(root.Content) == 0 {
		ce.add(0, "", "the file is empty: want a gateway config (`agnara gateway -sample` prints one)")
		return nil, ce
	}
	doc := root.Content[0]
	checkKeys(ce, doc, configType, "")
	var cfg Config
	if err := doc.Decode(&cfg); err != nil {
		var te *yaml.TypeError
		if ok := asTypeError(err, &te); ok {
			for _, msg := range te.Errors {
				ce.addRaw(msg)
			}
		} else {
			ce.addRaw(err.Error())
		}
	}
	if cfg.Lock == "" {
		cfg.Lock = lockPath(name)
	}
	cfg.validate(ce, positions{doc}, os.LookupEnv)
	if len(ce.Problems) > 0 {
		ce.sort()
		return nil, ce
	}
	return &cfg, nil
}
