//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them, so its test client answers them.
package agnaratest

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/internal/taskclient"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol revisions a client can negotiate: [Modern], the default, and
// the handshake era's newest, [Handshake].
const (
	Modern    = mcpversion.Modern
	Handshake = mcpversion.Handshake20251125
)

// callTimeout bounds each call of a method that takes a testing.TB, so that
// a hung server fails the test with the call named rather than at the
// test binary's deadline.
const callTimeout = time.Minute

// Options configures a [Client]. A nil *Options and every zero field mean
// the documented default; the struct is copied.
type Options struct {
	// Principal is who the client acts as. The anonymous principal (the
	// default) sends no token, and the server sees it as production does
	// without an authorization server (Server.DevelopmentPrincipal, when
	// set, applies). Any other principal sends a bearer token that the
	// handler verifies and Server.Identity is replaced to map to it.
	Principal policy.Principal
	// ProtocolVersion is the revision to negotiate: [Modern] (the default;
	// stateless requests) or a handshake-era one such as [Handshake] (a
	// session). Connecting fails when the server negotiates another.
	ProtocolVersion string
	// Server configures the server built from the snapshot. Default: nil,
	// the defaults of mcpexpose.ServerOptions.
	Server *mcpexpose.ServerOptions
	// Answer answers the server's elicitations: confirmations and forms.
	// Default: none, and the client declares no elicitation capability, as
	// a client without a user would not.
	Answer Answerer
	// OpenURL answers the server's URL elicitations (mode "url",
	// execution.Context.AskURL): the question's URL is the page the user
	// is asked to open, which the test may fetch itself before it answers
	// (Accept(nil) for "opened it", Decline, Cancel). Default: none, and
	// the client does not declare url mode: the server refuses a call
	// that asks to open a URL, naming elicitation.url.
	OpenURL Answerer
	// Sample answers the server's sampling requests in the model's place.
	// Default: none, and the client declares no sampling capability.
	Sample func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// Roots are the roots the client lists when asked. Default: none.
	Roots []*mcp.Root
}

// Client is an MCP client connected to a snapshot served on loopback HTTP.
// It is safe for concurrent use.
type Client struct {
	session *mcp.ClientSession
	server  *httptest.Server
	http    *http.Client
	url     string

	// How a task's questions are answered (task.go), as the SDK client
	// answers a direct call's, and what a task call declares.
	answer   Answerer
	open     Answerer
	sample   func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	roots    []*mcp.Root
	taskCaps map[string]any

	mu        sync.Mutex
	questions []*mcp.ElicitParams
}

// NewClient serves snap and connects a client to it as [Connect] does. The
// client and its server are closed when the test ends (t.Cleanup); an error
// fails the test at once.
func NewClient(t testing.TB, snap *mcpexpose.Snapshot, opts *Options) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := Connect(ctx, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("agnaratest: closing the client: %v", err)
		}
	})
	return c
}

// Connect serves snap through [mcpexpose.NewHandler] on a new loopback HTTP
// server (httptest, 127.0.0.1) at /mcp, and connects the SDK client to it as
// opts say. The caller must Close the client. ctx bounds the connection's
// set-up only.
func Connect(ctx context.Context, snap *mcpexpose.Snapshot, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	version := cmp.Or(o.ProtocolVersion, Modern)
	if !slices.Contains(mcpversion.Supported(), version) {
		return nil, fmt.Errorf("agnaratest: protocol version %q is not served; use one of %v", version, mcpversion.Supported())
	}
	var server mcpexpose.ServerOptions // a copy: the caller's is not changed
	if o.Server != nil {
		server = *o.Server
	}
	hopts := &mcpexpose.HandlerOptions{Server: &server}
	token := ""
	if p := o.Principal; !p.IsAnonymous() {
		token = rand.Text()
		hopts.Tokens = func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
			if got != token {
				return nil, auth.ErrInvalidToken
			}
			// The token's facts are the principal's: its session belongs
			// to the same caller (issuer and id) the mapper returns.
			return &auth.TokenInfo{UserID: p.ID(), Scopes: p.Scopes(), Expiration: time.Now().Add(24 * time.Hour),
				Extra: map[string]any{mcpexpose.ExtraIssuer: p.Issuer()}}, nil
		}
		hopts.Server.Identity = func(context.Context, mcpexpose.Identity) (policy.Principal, error) { return p, nil }
	}
	h, err := mcpexpose.NewHandler(snap, hopts)
	if err != nil {
		return nil, fmt.Errorf("agnaratest: %w", err)
	}
	mux := http.NewServeMux()
	h.Mount(mux, "/mcp")
	c := &Client{server: httptest.NewServer(mux)}
	c.url = c.server.URL + "/mcp"
	// The client's own transport, so that Close can drop its idle
	// connections before the server waits for them.
	base := http.DefaultTransport.(*http.Transport).Clone()
	c.http = &http.Client{Transport: base}
	if token != "" {
		c.http.Transport = bearer{token: token, base: base}
	}

	copts := &mcp.ClientOptions{}
	c.answer, c.open, c.sample, c.roots = o.Answer, o.OpenURL, o.Sample, slices.Clone(o.Roots)
	if o.Answer != nil || o.OpenURL != nil {
		copts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return c.elicit(ctx, req.Params)
		}
	}
	if o.OpenURL != nil {
		// The modes declared are the ones answered: a client with only
		// OpenURL has no forms. The roots are the SDK's default, which
		// setting Capabilities replaces.
		modes := &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}
		if o.Answer != nil {
			modes.Form = &mcp.FormElicitationCapabilities{}
		}
		copts.Capabilities = &mcp.ClientCapabilities{Elicitation: modes, RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	}
	if o.Sample != nil {
		sample := o.Sample
		copts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return sample(ctx, req.Params)
		}
	}
	c.taskCaps = taskCapabilities(o)
	client := mcp.NewClient(&mcp.Implementation{Name: "agnaratest", Version: "1"}, copts)
	client.AddRoots(o.Roots...)
	if err := taskclient.Register(client); err != nil {
		c.close()
		return nil, fmt.Errorf("agnaratest: %w", err)
	}
	// The task client's transport only acts for CallTask's requests.
	c.session, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: taskclient.Wrap(c.http), MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		c.close()
		return nil, fmt.Errorf("agnaratest: connecting at %s: %w", version, err)
	}
	if got := c.session.InitializeResult().ProtocolVersion; got != version {
		c.Close()
		return nil, fmt.Errorf("agnaratest: the server negotiated %s, the client asked for %s", got, version)
	}
	return c, nil
}

// bearer sends a bearer token with every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// elicit records the question and answers it: a URL elicitation with
// Options.OpenURL, any other with Options.Answer.
func (c *Client) elicit(ctx context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c.mu.Lock()
	c.questions = append(c.questions, q)
	c.mu.Unlock()
	answer := c.answer
	if q.Mode == "url" {
		answer = c.open
	}
	if answer == nil {
		return nil, fmt.Errorf("agnaratest: the server asks a %q elicitation, and Options has nothing to answer it", cmp.Or(q.Mode, "form"))
	}
	return answer(ctx, q)
}

// Close ends the client's session and stops its server.
func (c *Client) Close() error {
	err := c.session.Close()
	c.close()
	return err
}

func (c *Client) close() {
	c.http.CloseIdleConnections()
	c.server.Close()
}

// URL is the MCP endpoint the client is connected to, for other clients
// (another SDK, raw requests) to reach the same server.
func (c *Client) URL() string { return c.url }

// Session is the SDK client session, for what the client's own methods do
// not cover (completion, subscriptions, raw results).
func (c *Client) Session() *mcp.ClientSession { return c.session }

// ProtocolVersion is the revision the session negotiated.
func (c *Client) ProtocolVersion() string { return c.session.InitializeResult().ProtocolVersion }

// Questions returns the elicitations the client has answered so far, in
// the order they were asked, in a new slice.
func (c *Client) Questions() []*mcp.ElicitParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.questions)
}

// CallTool calls the tool name with args (any value that encodes as a JSON
// object: a struct, a map, a json.RawMessage; nil means {}), answering the
// server's questions along the way, and returns the call's canonical
// outcome ([OutcomeOf]). The error reports what no outcome can say: the
// transport failed, the server answered a JSON-RPC error (it wraps a
// *jsonrpc.Error), or the result is not agnara's shape.
func (c *Client) CallTool(ctx context.Context, name string, args any) (execution.Outcome, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("agnaratest: tools/call %s: %w", name, err)
	}
	out, err := OutcomeOf(res)
	if err != nil {
		return nil, fmt.Errorf("agnaratest: tools/call %s: %w", name, err)
	}
	return out, nil
}

// ListTools returns the tools the client's principal is shown, in the
// server's order.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	res, err := c.session.ListTools(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("agnaratest: tools/list: %w", err)
	}
	return res.Tools, nil
}

// Call is [Client.CallTool] in a test: an error fails it.
func (c *Client) Call(t testing.TB, name string, args any) execution.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	out, err := c.CallTool(ctx, name, args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CallValue calls the tool and decodes its success value into v (a
// pointer, as for json.Unmarshal; nil to ignore the value). Any other
// outcome fails the test, naming it.
func (c *Client) CallValue(t testing.TB, name string, args any, v any) {
	t.Helper()
	out := c.Call(t, name, args)
	s, ok := out.(execution.Success)
	if !ok {
		t.Fatalf("agnaratest: tools/call %s = %s, want success", name, describe(out))
	}
	if err := decodeValue(s, v); err != nil {
		t.Fatalf("agnaratest: tools/call %s: %v", name, err)
	}
}

// CallFailure calls the tool and returns its canonical failure. A success
// fails the test, naming its value.
func (c *Client) CallFailure(t testing.TB, name string, args any) *execution.Failure {
	t.Helper()
	out := c.Call(t, name, args)
	f, ok := out.(*execution.Failure)
	if !ok {
		t.Fatalf("agnaratest: tools/call %s = %s, want a failure", name, describe(out))
	}
	return f
}

// ToolNames returns the names of the tools the client's principal is
// shown, in the server's order.
func (c *Client) ToolNames(t testing.TB) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Name
	}
	return names
}

// ReadResource reads the resource at uri. An error fails the test; to
// expect one, use [Client.Session].
func (c *Client) ReadResource(t testing.TB, uri string) *mcp.ReadResourceResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("agnaratest: resources/read %s: %v", uri, err)
	}
	return res
}

// UIOf returns the ui:// URI of the MCP App view a listed tool links (its
// _meta.ui.resourceUri, see mcpexpose.UI), or "" when it has none.
func UIOf(tool *mcp.Tool) string {
	ui, _ := tool.Meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	return uri
}

// ToolUI reads the MCP App view of the tool name as a host would: it finds
// the tool in the client principal's tools/list, reads the resource its
// view links, and returns the one content, whose Text is the page and
// whose Meta["ui"] carries the view's CSP. A tool that is not listed, has
// no view, or whose view is not one "text/html;profile=mcp-app" content
// fails the test.
func (c *Client) ToolUI(t testing.TB, name string) *mcp.ResourceContents {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(tool *mcp.Tool) bool { return tool.Name == name })
	if i < 0 {
		t.Fatalf("agnaratest: tool %s is not listed to the client's principal", name)
	}
	uri := UIOf(tools[i])
	if uri == "" {
		t.Fatalf("agnaratest: tool %s has no view (_meta.ui.resourceUri)", name)
	}
	res := c.ReadResource(t, uri)
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != uiMIMEType {
		t.Fatalf("agnaratest: the view %s of tool %s is %d contents, want one %s", uri, name, len(res.Contents), uiMIMEType)
	}
	return res.Contents[0]
}

// uiMIMEType is the media type of an MCP App view.
const uiMIMEType = "text/html;profile=mcp-app"

// GetPrompt gets the prompt name with args. An error fails the test; to
// expect one, use [Client.Session].
func (c *Client) GetPrompt(t testing.TB, name string, args map[string]string) *mcp.GetPromptResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := c.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("agnaratest: prompts/get %s: %v", name, err)
	}
	return res
}

// errNotCanonical says a result is not one mcpexpose projects.
var errNotCanonical = errors.New("not a canonical agnara result")
