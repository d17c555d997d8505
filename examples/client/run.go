package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// config is what the flags set.
type config struct {
	Issuer       string // issuer URL
	MCP          string // MCP endpoint URL, also the token's resource
	ClientID     string
	ClientSecret string
	Scope        string // space separated; empty asks for the issuer's default
	Tool         string
	Args         string // a JSON object
}

// issuerMetadata is the part of the discovery document the client uses.
type issuerMetadata struct {
	Issuer                            string   `json:"issuer"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
}

// refusal is an HTTP 401 or 403 answer of the MCP server.
type refusal struct {
	StatusCode      int
	Status          string   // such as "403 Forbidden"
	WWWAuthenticate []string // every WWW-Authenticate header value
}

// refusedError is returned by run when the MCP server refused a request
// with HTTP 401 or 403.
type refusedError struct {
	Step  string // "connect", "tools/list" or "tools/call"
	Asked string // the scopes asked for, space separated (-scope)
	refusal
}

func (e *refusedError) Error() string {
	msg := fmt.Sprintf("the MCP server refused %s with HTTP %s", e.Step, e.Status)
	if hint := e.hint(); hint != "" {
		msg += ": " + hint
	}
	return msg
}

var (
	challengeError = regexp.MustCompile(`(?i)\berror\s*=\s*"([^"]*)"`)
	challengeScope = regexp.MustCompile(`(?i)\bscope\s*=\s*"([^"]*)"`)
)

// hint reads the Bearer challenge (RFC 6750 section 3) and says what to do.
func (e *refusedError) hint() string {
	challenge := strings.Join(e.WWWAuthenticate, ", ")
	if challenge == "" {
		if e.StatusCode == http.StatusForbidden {
			return "the response has no challenge, so it is not about the token: the server may refuse this Host or Origin"
		}
		return "the response has no challenge"
	}
	var code, scope string
	if m := challengeError.FindStringSubmatch(challenge); m != nil {
		code = m[1]
	}
	if m := challengeScope.FindStringSubmatch(challenge); m != nil {
		scope = m[1]
	}
	switch {
	case code == "insufficient_scope" && scope != "":
		want := strings.Fields(e.Asked)
		for _, s := range strings.Fields(scope) {
			if !slices.Contains(want, s) {
				want = append(want, s)
			}
		}
		return fmt.Sprintf("the token lacks a scope; ask for it too with -scope %q", strings.Join(want, " "))
	case code == "insufficient_scope":
		return "the token lacks a scope; ask for more with -scope"
	case code == "invalid_token":
		return "the token was not accepted: check that the MCP server trusts this -issuer and that -mcp is the URL it serves (the token's audience)"
	case e.StatusCode == http.StatusUnauthorized:
		return "the server wants a bearer token it accepts: check -issuer and -mcp"
	}
	return ""
}

// rpcError is a request the MCP server answered with a JSON-RPC error,
// such as -32021 for a client capability the tool needs.
type rpcError struct {
	Step    string // "connect", "tools/list" or "tools/call"
	Code    int64  // such as -32021
	Message string
	err     error // as the SDK returned it
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("the MCP server answered %s with JSON-RPC error %d: %s", e.Step, e.Code, e.Message)
}

func (e *rpcError) Unwrap() error { return e.err }

// serverError returns err as an *rpcError when the server answered with a
// JSON-RPC error, else err. The SDK wraps such an answer, sent with an
// HTTP error status, together with its own "rejected by transport" error
// (-32005), whose message alone hides the server's code.
func serverError(step string, err error) error {
	if e := answered(err); e != nil {
		return &rpcError{Step: step, Code: e.Code, Message: e.Message, err: err}
	}
	return err
}

// answered finds the first JSON-RPC error in err's tree that the SDK did
// not make up itself.
func answered(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Code != sdkRejected {
		return e
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, x := range u.Unwrap() {
			if e := answered(x); e != nil {
				return e
			}
		}
	case interface{ Unwrap() error }:
		return answered(u.Unwrap())
	}
	return nil
}

// sdkRejected is the code of the SDK client's "rejected by transport".
const sdkRejected = -32005

// challengeRecorder is an http.RoundTripper that remembers the last 401 or
// 403 response: the SDK's errors carry the status text at most, never the
// WWW-Authenticate header.
type challengeRecorder struct {
	next http.RoundTripper

	mu   sync.Mutex
	last *refusal
}

func (c *challengeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		c.mu.Lock()
		c.last = &refusal{
			StatusCode:      resp.StatusCode,
			Status:          resp.Status,
			WWWAuthenticate: slices.Clone(resp.Header.Values("WWW-Authenticate")),
		}
		c.mu.Unlock()
	}
	return resp, err
}

// take returns the refusal recorded since the last take, if any.
func (c *challengeRecorder) take() *refusal {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.last
	c.last = nil
	return r
}

// run gets a token, connects to the MCP server, lists its tools and calls
// cfg.Tool, printing each step to stdout.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	cfg.Issuer = strings.TrimSuffix(cfg.Issuer, "/")
	if err := checkHTTPURL("-issuer", cfg.Issuer); err != nil {
		return err
	}
	if err := checkHTTPURL("-mcp", cfg.MCP); err != nil {
		return err
	}
	if cfg.Tool == "" {
		return errors.New("-tool is empty: name the tool to call, such as -tool users.list_users")
	}
	args, err := parseArgs(cfg.Args)
	if err != nil {
		return err
	}

	// 1. Discover the token endpoint.
	meta, err := discover(ctx, cfg.Issuer)
	if err != nil {
		return err
	}

	// 2. Get a token for the MCP server (RFC 8707 resource).
	cc := &clientcredentials.Config{
		ClientID:       cfg.ClientID,
		ClientSecret:   cfg.ClientSecret,
		TokenURL:       meta.TokenEndpoint,
		Scopes:         strings.Fields(cfg.Scope),
		EndpointParams: url.Values{"resource": {cfg.MCP}},
		AuthStyle:      authStyle(meta.TokenEndpointAuthMethodsSupported),
	}
	ts := cc.TokenSource(ctx) // caches the token until it expires
	tok, err := ts.Token()
	if err != nil {
		return tokenError(err, cfg, meta)
	}
	granted, _ := tok.Extra("scope").(string)
	if granted == "" {
		granted = cfg.Scope
	}
	fmt.Fprintf(stdout, "token:    scope %q for %s", granted, cfg.MCP)
	if !tok.Expiry.IsZero() {
		fmt.Fprintf(stdout, ", expires in %v", time.Until(tok.Expiry).Round(time.Second))
	}
	fmt.Fprintln(stdout)

	// 3. Connect. The recorder wraps the oauth2 transport, which adds the
	// Authorization header to every request.
	httpClient := oauth2.NewClient(ctx, ts)
	rec := &challengeRecorder{next: httpClient.Transport}
	httpClient.Transport = rec
	// refused turns a failed step into a *refusedError when the server
	// answered it with 401 or 403, and prints that answer.
	refused := func(step string) error {
		r := rec.take()
		if r == nil {
			return nil
		}
		fmt.Fprintf(stdout, "refused:  %s: HTTP %s\n", step, r.Status)
		if len(r.WWWAuthenticate) == 0 {
			fmt.Fprintln(stdout, "WWW-Authenticate: (none)")
		}
		for _, v := range r.WWWAuthenticate {
			fmt.Fprintf(stdout, "WWW-Authenticate: %s\n", v)
		}
		return &refusedError{Step: step, Asked: cfg.Scope, refusal: *r}
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "agnara-example-client", Version: "0.1.0"}, nil)
	rec.take()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             cfg.MCP,
		HTTPClient:           httpClient,
		DisableStandaloneSSE: true, // one call; no server-initiated messages needed
	}, nil)
	if err != nil {
		if rerr := refused("connect"); rerr != nil {
			return rerr
		}
		if e := answered(err); e != nil {
			return serverError("connect", err)
		}
		return fmt.Errorf("connecting to the MCP server at %s: %w (is it running? check -mcp)", cfg.MCP, err)
	}
	defer cs.Close()
	fmt.Fprintf(stdout, "protocol: %s\n", cs.InitializeResult().ProtocolVersion)

	// 4. List the tools this caller can see.
	rec.take()
	var names []string
	var cursor string
	for {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if rerr := refused("tools/list"); rerr != nil {
				return rerr
			}
			return fmt.Errorf("listing tools: %w", serverError("tools/list", err))
		}
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	if len(names) == 0 {
		fmt.Fprintln(stdout, "tools:    none visible to this caller")
	} else {
		fmt.Fprintf(stdout, "tools:    %s\n", strings.Join(names, " "))
	}

	// 5. Call the tool.
	rec.take()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: cfg.Tool, Arguments: args})
	if err != nil {
		if rerr := refused("tools/call"); rerr != nil {
			return rerr
		}
		if !slices.Contains(names, cfg.Tool) {
			return fmt.Errorf("calling %s: %w (it is not among the tools listed above: check -tool, or ask for the scope that shows it with -scope)", cfg.Tool, serverError("tools/call", err))
		}
		return fmt.Errorf("calling %s: %w", cfg.Tool, serverError("tools/call", err))
	}
	if res.IsError {
		fmt.Fprintf(stdout, "error:    %s\n", cfg.Tool)
	} else {
		fmt.Fprintf(stdout, "result:   %s\n", cfg.Tool)
	}
	printContent(stdout, res)
	if res.IsError {
		return fmt.Errorf("tool %s reported an error (printed above)", cfg.Tool)
	}
	return nil
}

// printContent prints the result's text blocks, one per line, and a note
// for every other kind of block. A result with structured content but no
// text gets that JSON.
func printContent(w io.Writer, res *mcp.CallToolResult) {
	printed := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(w, c.Text)
			printed = true
		case *mcp.ImageContent:
			fmt.Fprintf(w, "[image, %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(w, "[audio, %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(w, "[resource link %s]\n", c.URI)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(w, "[embedded resource %s]\n", c.Resource.URI)
			}
		default:
			fmt.Fprintf(w, "[%T]\n", c)
		}
	}
	if !printed && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			fmt.Fprintln(w, string(b))
		}
	}
}

// parseArgs decodes -args, which must be a JSON object.
func parseArgs(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		s = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber() // keep numbers exactly as given
	var v any
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = errors.New("text after the object")
	}
	if err != nil {
		return nil, fmt.Errorf(`-args %q is not valid JSON (%v): give an object, such as -args '{"id":"1"}'`, s, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`-args %q is not a JSON object: give an object, such as -args '{"id":"1"}'`, s)
	}
	return m, nil
}

// discover fetches <issuer>/.well-known/openid-configuration.
func discover(ctx context.Context, issuer string) (*issuerMetadata, error) {
	u := issuer + "/.well-known/openid-configuration"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("-issuer %q: %w", issuer, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the issuer: %w (is it running? start one with go run ./examples/devissuer, or check -issuer)", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %s: is -issuer an OpenID Connect issuer?", u, resp.Status)
	}
	var m issuerMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("GET %s: the discovery document is not JSON: %v", u, err)
	}
	if m.Issuer != issuer {
		return nil, fmt.Errorf("the issuer at %s calls itself %q: pass exactly that as -issuer", issuer, m.Issuer)
	}
	if err := checkHTTPURL("token_endpoint", m.TokenEndpoint); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return &m, nil
}

// authStyle picks the client authentication the issuer advertises; with no
// advertisement the oauth2 package tries both.
func authStyle(methods []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// tokenError explains a failed token request.
func tokenError(err error, cfg config, meta *issuerMetadata) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("getting a token from %s: %w", meta.TokenEndpoint, err)
	}
	what := re.ErrorCode
	if what == "" {
		what = "HTTP " + re.Response.Status
	}
	if re.ErrorDescription != "" {
		what += " (" + re.ErrorDescription + ")"
	}
	var fix string
	switch re.ErrorCode {
	case "invalid_client", "unauthorized_client":
		fix = "check -client-id and -client-secret"
	case "invalid_scope":
		fix = "check -scope"
		if len(meta.ScopesSupported) > 0 {
			fix += fmt.Sprintf("; the issuer supports %q", strings.Join(meta.ScopesSupported, " "))
		}
	case "invalid_target":
		fix = fmt.Sprintf("the issuer does not accept -mcp %s as the token's resource", cfg.MCP)
	}
	msg := fmt.Sprintf("the issuer refused a token for client %q: %s", cfg.ClientID, what)
	if fix != "" {
		msg += ": " + fix
	}
	return errors.New(msg)
}

var urlExamples = map[string]string{
	"-issuer":        "http://127.0.0.1:9000",
	"-mcp":           "http://127.0.0.1:8080/mcp",
	"token_endpoint": "http://127.0.0.1:9000/token",
}

// checkHTTPURL reports whether s is an absolute http or https URL.
func checkHTTPURL(what, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q must be an absolute http or https URL, such as %s", what, s, urlExamples[what])
	}
	return nil
}
