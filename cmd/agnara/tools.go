package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/internal/taskclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

const toolsSynopsis = `usage: agnara tools list URL [flags]
       agnara tools call URL NAME [JSON] [flags]
`

const toolsUsage = toolsSynopsis + `
Talks to any MCP server over streamable HTTP, as a client would: list
lists the tools the server shows you (with the ui:// URI of each one's MCP
App view, when some have one), call calls one with JSON object arguments
(default {}). Flags go before or after the arguments.

Protocol:
  -era modern|legacy   modern: 2026-07-28, stateless requests (the default);
                       legacy: 2025-11-25, a session opened by initialize
  -protocol VERSION    ask for this exact protocol version instead of -era

Authorization (a token never goes on the command line):
  -token-env NAME      send the bearer token held by this environment
                       variable (default AGNARA_TOKEN, when it is set)
  -token-url URL       get a token with the OAuth client-credentials grant
                       from this token endpoint, with
  -client-id ID          the client's id (required with -token-url)
  -client-secret-env NAME  the variable holding its secret (default AGNARA_CLIENT_SECRET)
  -scope "A B"           the scopes to ask for (default: the issuer's default)
  -resource URL          the token's audience (RFC 8707; default URL)

Questions the server asks during a call (confirmations, forms):
  on a terminal they are asked on standard error and answered from
  standard input; otherwise they are declined, unless
  -yes                 accept confirmations
  -answers JSON        fill in any form with this JSON object

Tasks (2026-07-28; a tool the server runs as a task of the extension
io.modelcontextprotocol/tasks):
  -task                declare the tasks extension: the call creates a
                       task, which is followed to its end; its status and
                       progress are printed on standard error, its
                       questions answered as above, its result printed
                       as a direct call's. Ctrl-C or -timeout (default 1h
                       with -task) cancels the task (tasks/cancel).

Output:
  -json                print the server's result as JSON (tools/list: every
                       page's tools; tools/call: the CallToolResult)
  -timeout D           give up after D (default 2m)

A call the server answers with a failure prints its code, reason and
message on standard error and exits 1; a mistake on the command line
exits 2. Everything the server sent is printed escaped when it is not
printable text.
`

// toolsCLI runs one `agnara tools` invocation.
type toolsCLI struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
	// command is the command running, for messages ("" is tools call).
	commandLabel string
	// ctx is the context of every request (nil: context.Background());
	// `agnara tools` cancels it on an interrupt (Ctrl-C).
	ctx context.Context
	// interactive reports whether questions may be asked (stdin and stderr
	// are terminals); spinning whether a spinner may be drawn on stderr.
	interactive, spinning bool
}

// tools runs `agnara tools`.
func (c *cli) tools(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	t := &toolsCLI{stdout: c.stdout, stderr: c.stderr, stdin: os.Stdin, getenv: os.Getenv, ctx: ctx}
	if f, ok := c.stderr.(*os.File); ok && isTerminal(f) {
		t.spinning = true
		t.interactive = isTerminal(os.Stdin)
	}
	return t.run(args)
}

// isTerminal reports whether f is a character device, as a terminal is.
// (golang.org/x/term is not in the module graph; a character device that
// is not a terminal, such as /dev/null, at worst gets a prompt or a
// spinner nobody sees.)
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && fi.Name() != os.DevNull && f.Name() != os.DevNull
}

// errUsage marks a mistake in the command line: exit 2, with the usage.
var errUsage = errors.New("usage")

func (t *toolsCLI) run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(t.stderr, "agnara tools: missing command: list or call\n\n"+toolsUsage)
		return 2
	}
	name := args[0]
	var err error
	switch name {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(t.stdout, toolsUsage)
		return 0
	case "list", "call":
		err = t.command(name, args[1:])
	default:
		fmt.Fprintf(t.stderr, "agnara tools: unknown command %s: want list or call\n\n%s", printable(name), toolsUsage)
		return 2
	}
	return t.exit("tools", name, toolsSynopsis, toolsUsage, err)
}

// exit prints the end of `agnara GROUP NAME` and returns its exit code.
func (t *toolsCLI) exit(group, name, synopsis, usage string, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(t.stdout, usage)
		return 0
	}
	command := strings.TrimSpace(group + " " + name)
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(t.stderr, "agnara %s: %s\n%s\nRun 'agnara %s help' for the flags.\n", command, printable(strings.TrimSuffix(err.Error(), ": usage")), synopsis, group)
		return 2
	case errors.Is(err, errFailed):
		return 1 // already printed
	}
	fmt.Fprintf(t.stderr, "agnara %s: %s\n", command, printable(err.Error()))
	return 1
}

// toolsFlags are the flags of list and call.
type toolsFlags struct {
	era, protocol                        string
	tokenEnv, tokenURL, clientID, secret string
	scope, resource                      string
	yes, json, task                      bool
	answers                              string
	timeout                              time.Duration
	timeoutSet                           bool // -timeout given
}

func (t *toolsCLI) parse(name string, args []string) (*toolsFlags, []string, error) {
	var f toolsFlags
	fs := flag.NewFlagSet("tools "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.era, "era", "modern", "")
	fs.StringVar(&f.protocol, "protocol", "", "")
	fs.StringVar(&f.tokenEnv, "token-env", "", "")
	fs.StringVar(&f.tokenURL, "token-url", "", "")
	fs.StringVar(&f.clientID, "client-id", "", "")
	fs.StringVar(&f.secret, "client-secret-env", "AGNARA_CLIENT_SECRET", "")
	fs.StringVar(&f.scope, "scope", "", "")
	fs.StringVar(&f.resource, "resource", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute, "")
	switch name {
	case "call":
		fs.BoolVar(&f.task, "task", false, "")
		fallthrough
	case "resources read", "prompts get":
		fs.BoolVar(&f.yes, "yes", false, "")
		fs.StringVar(&f.answers, "answers", "", "")
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("%v: %w", err, errUsage)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	fs.Visit(func(fl *flag.Flag) { f.timeoutSet = f.timeoutSet || fl.Name == "timeout" })
	return &f, pos, nil
}

// version is the protocol version the flags ask for.
func (f *toolsFlags) version() (string, error) {
	if f.protocol != "" {
		return f.protocol, nil
	}
	switch f.era {
	case "modern":
		return "2026-07-28", nil
	case "legacy":
		return "2025-11-25", nil
	}
	return "", fmt.Errorf("-era %s: want modern (2026-07-28) or legacy (2025-11-25): %w", printable(f.era), errUsage)
}

func checkServerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s is not an http(s) URL: give the server's MCP endpoint, such as http://127.0.0.1:8080/mcp: %w", printable(raw), errUsage)
	}
	return nil
}

func (t *toolsCLI) command(name string, args []string) error {
	f, pos, err := t.parse(name, args)
	if err != nil {
		return err
	}
	want := "URL"
	if name == "call" {
		want = "URL NAME [JSON]"
	}
	switch {
	case len(pos) == 0:
		return fmt.Errorf("missing %s: %w", want, errUsage)
	case name == "list" && len(pos) > 1, name == "call" && len(pos) > 3:
		return fmt.Errorf("too many arguments: want %s (quote the JSON arguments as one): %w", want, errUsage)
	case name == "call" && len(pos) < 2:
		return fmt.Errorf("missing the tool's NAME (run 'agnara tools list %s' to see them): %w", pos[0], errUsage)
	}
	endpoint := pos[0]
	if err := checkServerURL(endpoint); err != nil {
		return err
	}
	version, err := f.version()
	if err != nil {
		return err
	}
	if f.task && version < taskVersion {
		return fmt.Errorf("-task needs protocol %s or later, where tasks are an extension, not %s: drop -era legacy or -protocol: %w", taskVersion, printable(version), errUsage)
	}
	if f.task && !f.timeoutSet {
		f.timeout = taskTimeout
	}
	var arguments map[string]any
	if name == "call" && len(pos) == 3 {
		if err := json.Unmarshal([]byte(pos[2]), &arguments); err != nil || arguments == nil {
			return fmt.Errorf("the arguments %s are not a JSON object, such as '{\"id\":\"1\"}': %w", printable(pos[2]), errUsage)
		}
	}
	answers, err := f.answersMap()
	if err != nil {
		return err
	}
	ctx, cancel := t.context(f)
	defer cancel()
	ask := &asker{t: t, yes: f.yes, answers: answers}
	cs, rec, err := t.connect(ctx, f, endpoint, version, ask)
	if err != nil {
		return err
	}
	defer cs.Close()
	switch {
	case name == "list":
		return t.list(ctx, cs, f, rec)
	case f.task:
		return t.callTask(ctx, cs, f, rec, ask, pos[1], arguments)
	}
	return t.call(ctx, cs, f, rec, ask, pos[1], arguments)
}

// context is the context of one command: the base context, bounded by
// -timeout.
func (t *toolsCLI) context(f *toolsFlags) (context.Context, context.CancelFunc) {
	base := t.ctx
	if base == nil {
		base = context.Background()
	}
	return context.WithTimeoutCause(base, f.timeout, errTimeout{f.timeout})
}

// connect connects to endpoint at version with the flags' credentials,
// asking the server's questions with ask. The caller closes the session.
func (t *toolsCLI) connect(ctx context.Context, f *toolsFlags, endpoint, version string, ask *asker) (*mcp.ClientSession, *challengeRecorder, error) {
	rec := &challengeRecorder{}
	hc, err := t.httpClient(ctx, f, endpoint, rec)
	if err != nil {
		return nil, nil, err
	}
	// Forms and URLs both: a URL question is shown, and followed only at
	// a terminal (asker.openURL). The roots are the SDK's default, which
	// setting Capabilities replaces.
	copts := &mcp.ClientOptions{ElicitationHandler: ask.elicit, ElicitationCompleteHandler: ask.urlDone,
		Capabilities: &mcp.ClientCapabilities{
			//lint:ignore SA1019 roots are deprecated at 2026-07-28 (SEP-2577) but remain during the deprecation window: declared, they keep the SDK's default, which setting Capabilities replaces.
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		}}
	if f.task {
		// Declared on every request, so that a TaskOptional tool answers
		// with a task.
		copts.Capabilities.Extensions = map[string]any{mcpversion.TasksExtension: map[string]any{}}
		hc = taskclient.Wrap(hc)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agnara", Version: "cli"}, copts)
	if err := taskclient.Register(client); err != nil {
		return nil, nil, err
	}
	stop := t.spin("connecting")
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	stop()
	if err != nil {
		if u := unreachable(endpoint, err); u != nil {
			return nil, nil, u
		}
		return nil, nil, rec.explain("connect", err)
	}
	return cs, rec, nil
}

// httpClient is the HTTP client that carries the flags' credentials.
func (t *toolsCLI) httpClient(ctx context.Context, f *toolsFlags, endpoint string, rec *challengeRecorder) (*http.Client, error) {
	rec.next = http.DefaultTransport
	base := &http.Client{Transport: rec}
	if f.tokenURL != "" {
		if f.tokenEnv != "" {
			return nil, fmt.Errorf("-token-env and -token-url: give one, a token or the client-credentials grant: %w", errUsage)
		}
		if err := checkServerURL(f.tokenURL); err != nil {
			return nil, fmt.Errorf("-token-url: %w", err)
		}
		if f.clientID == "" {
			return nil, fmt.Errorf("-token-url needs -client-id, the OAuth client's id: %w", errUsage)
		}
		secret := t.getenv(f.secret)
		if secret == "" {
			return nil, fmt.Errorf("the environment variable %s holding the client secret is empty: set it, or name another with -client-secret-env: %w", printable(f.secret), errUsage)
		}
		resource := f.resource
		if resource == "" {
			resource = endpoint
		}
		cc := clientcredentials.Config{
			ClientID:       f.clientID,
			ClientSecret:   secret,
			TokenURL:       f.tokenURL,
			Scopes:         strings.Fields(f.scope),
			EndpointParams: url.Values{"resource": {resource}},
		}
		// The token request goes out without the MCP challenge recorder.
		ctx = context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Timeout: 30 * time.Second})
		return &http.Client{Transport: &oauth2.Transport{Source: cc.TokenSource(ctx), Base: rec}}, nil
	}
	if f.clientID != "" || f.scope != "" || f.resource != "" {
		return nil, fmt.Errorf("-client-id, -scope and -resource are for the client-credentials grant: add -token-url: %w", errUsage)
	}
	env := f.tokenEnv
	if env == "" {
		env = "AGNARA_TOKEN"
	}
	token := t.getenv(env)
	if token == "" {
		if f.tokenEnv != "" {
			return nil, fmt.Errorf("the environment variable %s is empty: set it to the bearer token: %w", printable(env), errUsage)
		}
		return base, nil // no token
	}
	return &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}), Base: rec}}, nil
}

// challengeRecorder is an http.RoundTripper that remembers the last 401 or
// 403 answer: the SDK's errors carry the status at most, never the
// WWW-Authenticate challenge that says what is missing.
type challengeRecorder struct {
	next http.RoundTripper

	mu        sync.Mutex
	status    string
	challenge []string
}

func (c *challengeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		c.mu.Lock()
		c.status, c.challenge = resp.Status, slices.Clone(resp.Header.Values("WWW-Authenticate"))
		c.mu.Unlock()
	}
	return resp, err
}

// explain adds the server's refusal, if there was one, to err.
func (c *challengeRecorder) explain(step string, err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		why := strings.TrimSpace(re.ErrorCode + " " + re.ErrorDescription)
		if why == "" {
			why = strings.TrimSpace(string(re.Body))
		}
		return fmt.Errorf("%s: the token endpoint refused the client-credentials grant with HTTP %s: %s: check -client-id, its secret (-client-secret-env) and -scope", step, re.Response.Status, why)
	}
	if e := answered(err); e != nil && c.status == "" {
		// The SDK adds its own "rejected by transport" and the HTTP
		// status to an answer sent with an error status: say what the
		// server said, with its code.
		return fmt.Errorf("%s: %s (JSON-RPC error %d)", step, e.Message, e.Code)
	}
	if c.status == "" {
		// The SDK wraps its errors in what it was doing; say it once.
		msg := err.Error()
		for _, p := range []string{"calling", "sending"} {
			msg = strings.ReplaceAll(msg, fmt.Sprintf("%s %q: ", p, step), "")
		}
		return fmt.Errorf("%s: %s", step, msg)
	}
	msg := fmt.Sprintf("%s: the server refused with HTTP %s", step, c.status)
	if len(c.challenge) > 0 {
		msg += "; WWW-Authenticate: " + strings.Join(c.challenge, ", ")
	}
	switch ch := strings.Join(c.challenge, ", "); {
	case strings.Contains(ch, "insufficient_scope"):
		msg += " (ask for the scope it names with -scope)"
	case strings.Contains(ch, "invalid_token"), c.status != "" && strings.HasPrefix(c.status, "401"):
		msg += " (give a token: -token-env NAME, or -token-url with -client-id)"
	}
	return errors.New(msg)
}

// answered finds the first JSON-RPC error in err's tree that the SDK
// client did not make up itself (its "rejected by transport" is -32005).
func answered(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Code != -32005 {
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

// spin starts the spinner, when stderr is a terminal, and returns what
// stops it.
func (t *toolsCLI) spin(label string) (stop func()) {
	if !t.spinning {
		return func() {}
	}
	return startSpinner(t.stderr, label, 400*time.Millisecond, 100*time.Millisecond)
}
