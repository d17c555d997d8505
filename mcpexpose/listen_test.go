package mcpexpose_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// listenSnap is the listens' application: a resource, a template, the
// tool echo for everyone, and, as named, the tool x for everyone and the
// tool admin for writers (ledger:write) only. Each call builds it anew,
// so that two handlers share nothing.
func listenSnap(t testing.TB, tools ...string) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("listens", nil)
	readme := app.Capability(func() (string, error) { return "read me", nil }, &agnara.CapabilityOptions{Name: "readme", Description: "The readme."})
	page := app.Capability(func(in PageIn) (Page, error) { return Page{ID: in.ID}, nil }, &agnara.CapabilityOptions{Name: "page", Description: "A page."})
	echo := app.Capability(func() (string, error) { return "e", nil }, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."})
	x := app.Capability(func() (string, error) { return "x", nil }, &agnara.CapabilityOptions{Name: "x", Description: "X."})
	admin := app.Capability(func() (string, error) { return "a", nil }, &agnara.CapabilityOptions{Name: "admin", Description: "Admins only.", Scopes: []string{"ledger:write"}})
	exp := mcpexpose.New(app)
	exp.Resource(readme, &mcpexpose.ResourceOptions{URI: "docs://readme"})
	exp.ResourceTemplate(page, &mcpexpose.ResourceTemplateOptions{URITemplate: "docs://pages/{id}"})
	exp.Tool(echo, nil)
	if slices.Contains(tools, "x") {
		exp.Tool(x, nil)
	}
	if slices.Contains(tools, "admin") {
		exp.Tool(admin, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// listenBody is a 2026-07-28 subscriptions/listen with id and the
// notifications object notes.
func listenBody(id, notes string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":` + notes + `,` + diffMeta + `}}`
}

// heldStream is a listen's response read line by line: its status, its
// headers (Date removed) and every line read so far.
type heldStream struct {
	status int
	header http.Header
	lines  chan string
	read   []string
	cancel context.CancelFunc
	done   chan struct{} // closed when the body ended
}

// openListen POSTs body with authz and starts reading the answer.
func openListen(t *testing.T, url, authz, body string) *heldStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = baseHeader("subscriptions/listen", "")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp.Header.Del("Date")
	s := &heldStream{status: resp.StatusCode, header: resp.Header, lines: make(chan string, 64), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	t.Cleanup(func() { s.cancel(); <-s.done })
	return s
}

// until reads lines until one contains want ("" for the body's end) and
// fails the test after 10 s.
func (s *heldStream) until(t *testing.T, who, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				if want != "" {
					t.Fatalf("%s: the stream ended before %q; read %q", who, want, s.read)
				}
				return
			}
			s.read = append(s.read, line)
			if want != "" && strings.Contains(line, want) {
				return
			}
		case <-timeout:
			t.Fatalf("%s: no %q within 10s; read %q", who, want, s.read)
		}
	}
}

// transcript is what the stream showed, what differs by nature masked.
func (s *heldStream) transcript() string {
	h := s.header.Clone()
	body := strings.Join(s.read, "")
	mcptest.Unframe(h, body)
	return mask(body, h)
}

// briefExpiry is when the token "brief" of listenTokens expires.
var briefExpiry atomic.Int64

// listenTokens is tokens, with "brief", a writer's token that expires at
// briefExpiry.
func listenTokens(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	if token == "brief" {
		return &auth.TokenInfo{UserID: "brenda", Scopes: []string{"ledger:write"}, Expiration: time.Unix(0, briefExpiry.Load())}, nil
	}
	return tokens(ctx, token, r)
}

// listenStep is one thing done to both handlers while their listens are
// open, and the line that then shows on the listens ("" for none: the
// next step's line shows whether anything came between).
type listenStep struct {
	do   func(t *testing.T, h *mcpexpose.Handler)
	want string
}

func swapTo(tools ...string) func(*testing.T, *mcpexpose.Handler) {
	return func(t *testing.T, h *mcpexpose.Handler) {
		if err := h.Swap(listenSnap(t, tools...)); err != nil {
			t.Fatal(err)
		}
	}
}

func updated(uri string) func(*testing.T, *mcpexpose.Handler) {
	return func(t *testing.T, h *mcpexpose.Handler) {
		if err := h.ResourceUpdated(context.Background(), uri); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListenDifferential opens the same listens on a handler whose edge
// holds them and on one with DisableFastPath, where the SDK does, does
// the same to both (swaps that change a caller's tool list or not,
// resource updates for subscribed URIs and others, nothing while the
// stream keeps alive, its lifetime's and its token's ends, the client
// going away, the stream caps) and requires the same bytes on the wire:
// status, headers and every line (an event stream's framing aside,
// mcptest.Unframe). Listens the edge must leave to the SDK (malformed
// params, ones it does not read) are sent too, and must be answered alike.
func TestListenDifferential(t *testing.T) {
	tools := `{"toolsListChanged":true}`
	res := `{"resourceSubscriptions":["docs://readme","docs://pages/p1"]}`
	both := `{"toolsListChanged":true,"resourceSubscriptions":["docs://readme","docs://readme"]}`
	scenarios := []struct {
		name   string
		opts   mcpexpose.HandlerOptions
		authz  string
		body   string
		steps  []listenStep
		end    string // "" the client goes away; "server" the server ends the stream
		expiry time.Duration
		held   bool // the edge holds it
	}{
		{name: "tools/writer", authz: "Bearer writer", body: listenBody("1", tools), held: true, steps: []listenStep{
			{swapTo("admin"), "tools/list_changed"},
			{updated("docs://readme"), ""},
			{swapTo("admin"), ""}, // the same list: nothing
			{swapTo("admin", "x"), "tools/list_changed"},
		}},
		{name: "tools/reader", authz: "Bearer reader", body: listenBody(`"<&>"`, tools), held: true, steps: []listenStep{
			{swapTo("admin"), ""}, // not the reader's to see
			{swapTo("admin", "x"), "tools/list_changed"},
		}},
		{name: "tools/anonymous", body: listenBody("-7", tools), held: true, steps: []listenStep{
			{swapTo("x"), "tools/list_changed"},
			{swapTo(), "tools/list_changed"},
		}},
		{name: "resources", authz: "Bearer reader", body: listenBody("2", res), held: true, steps: []listenStep{
			{updated("docs://readme"), "resources/updated"},
			{updated("docs://pages/other"), ""},
			{swapTo("x"), ""},
			{updated("docs://pages/p1"), "resources/updated"},
		}},
		{name: "tools-and-resources", authz: "Bearer writer", body: listenBody("3", both), held: true, steps: []listenStep{
			{updated("docs://readme"), "resources/updated"},
			{swapTo("x"), "tools/list_changed"},
			{updated("docs://readme"), "resources/updated"},
		}},
		{name: "nothing-agreed", body: listenBody("4", `{}`), end: "server", held: true},
		{name: "nothing-asked", body: listenBody("5", `{"toolsListChanged":false,"resourceSubscriptions":[]}`), end: "server", held: true},
		{name: "fixed/tools", opts: mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{}}, body: listenBody("6", tools), end: "server", held: true},
		{name: "lifetime", opts: mcpexpose.HandlerOptions{Limits: &mcpexpose.Limits{StreamLifetime: 300 * time.Millisecond}}, body: listenBody("8", tools), end: "server", held: true},
		{name: "token-expiry", authz: "Bearer brief", expiry: 400 * time.Millisecond, body: listenBody("9", both), end: "server", held: true},
		{name: "keepalive", opts: mcpexpose.HandlerOptions{Limits: &mcpexpose.Limits{StreamKeepAlive: 50 * time.Millisecond}}, body: listenBody("10", tools), held: true, steps: []listenStep{
			{func(*testing.T, *mcpexpose.Handler) {}, ": keepalive"},
			{func(*testing.T, *mcpexpose.Handler) {}, ": keepalive"},
		}},
		// The lists' changes (ADR 90): listenSnap has no prompt, so the
		// prompt list's are not agreed; its resources are not changed by
		// a swap (TestListenListsDifferential changes them).
		{name: "prompts-and-resources-lists", body: listenBody("11", `{"toolsListChanged":true,"resourcesListChanged":true,"promptsListChanged":true}`), held: true, steps: []listenStep{
			{updated("docs://readme"), ""},
			{swapTo("x"), "tools/list_changed"},
		}},
		{name: "prompts-only-none-held", body: listenBody("20", `{"promptsListChanged":true}`), end: "server", held: true},
		{name: "resources-list", authz: "Bearer reader", body: listenBody(`"r"`, `{"resourcesListChanged":true}`), held: true, steps: []listenStep{
			{swapTo("x"), ""},
			{updated("docs://readme"), ""},
		}},
		{name: "fixed/lists", opts: mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{}}, body: listenBody("21", `{"resourcesListChanged":true,"promptsListChanged":true}`), end: "server", held: true},
		{name: "sdk/escaped-id", body: listenBody(`"\u0041"`, tools), steps: []listenStep{{swapTo("x"), "tools/list_changed"}}},
		{name: "sdk/fraction-id", body: listenBody(`1.0`, tools), steps: []listenStep{{swapTo("x"), "tools/list_changed"}}},
		{name: "sdk/unknown-field", body: listenBody(`2`, `{"toolsListChanged":true,"other":1}`), steps: []listenStep{{swapTo("x"), "tools/list_changed"}}},
		{name: "sdk/progress", body: `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}`, steps: []listenStep{{swapTo("x"), "tools/list_changed"}}},
		{name: "sdk/unreadable", body: listenBody("12", `{"resourceSubscriptions":["docs://nothing"]}`), end: "server"},
		{name: "sdk/refused-caller", authz: "Bearer refused", body: listenBody("13", tools), end: "server"},
		{name: "sdk/no-notifications", body: `{"jsonrpc":"2.0","id":14,"method":"subscriptions/listen","params":{` + diffMeta + `}}`, end: "server"},
		{name: "sdk/null-notifications", body: listenBody("15", `null`), end: "server"},
		{name: "sdk/not-a-bool", body: listenBody("16", `{"toolsListChanged":"yes"}`), end: "server"},
		{name: "sdk/uris-not-a-list", body: listenBody("17", `{"resourceSubscriptions":"docs://readme"}`), end: "server"},
		{name: "sdk/task-ids", body: listenBody("18", `{"taskIds":["t"]}`), end: "server"},
		{name: "sdk/no-id", body: `{"jsonrpc":"2.0","method":"subscriptions/listen","params":{"notifications":{},` + diffMeta + `}}`, end: "server"},
		{name: "sdk/no-meta", body: `{"jsonrpc":"2.0","id":19,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`, end: "server"},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			opts := sc.opts
			server := mcpexpose.ServerOptions{Swappable: true, Identity: mapper}
			if opts.Server != nil {
				server = *opts.Server
				server.Identity = mapper
			}
			opts.Server = &server
			opts.Tokens, opts.AllowAnonymous = listenTokens, true
			if opts.Limits == nil {
				opts.Limits = &mcpexpose.Limits{StreamKeepAlive: time.Hour}
			}
			fastH, sdkH, fastURL, sdkURL := servePair(t, listenSnap(t), listenSnap(t), opts)
			briefExpiry.Store(time.Now().Add(sc.expiry).UnixNano())
			fast, sdk := openListen(t, fastURL, sc.authz, sc.body), openListen(t, sdkURL, sc.authz, sc.body)
			if sc.end == "" {
				fast.until(t, "edge", "subscriptions/acknowledged")
				sdk.until(t, "sdk", "subscriptions/acknowledged")
				for _, st := range sc.steps {
					st.do(t, fastH)
					st.do(t, sdkH)
					if st.want != "" {
						fast.until(t, "edge", st.want)
						sdk.until(t, "sdk", st.want)
					}
				}
				// The client goes away: both give the stream's slot back.
				fast.cancel()
				sdk.cancel()
				waitFor(t, func() bool { return fastH.Load().Streams == 0 && sdkH.Load().Streams == 0 })
			} else {
				fast.until(t, "edge", "")
				sdk.until(t, "sdk", "")
			}
			if got, want := fast.transcript(), sdk.transcript(); fast.status != sdk.status || got != want || !headersEqual(fast.header, sdk.header) {
				t.Errorf("edge: %d %v\n%s\nsdk:  %d %v\n%s", fast.status, fast.header, got, sdk.status, sdk.header, want)
			}
			if held := fastH.FastPathRequests() == 1; held != sc.held {
				t.Errorf("the edge held the listen: %v, want %v", held, sc.held)
			}
			if sdkH.FastPathRequests() != 0 {
				t.Error("the handler with DisableFastPath held a listen")
			}
		})
	}
}

// TestListenDifferentialCaps: past MaxStreams, a listen is refused alike
// on the edge and the SDK path, and the held ones count against the cap.
func TestListenDifferentialCaps(t *testing.T) {
	opts := mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Swappable: true}, Limits: &mcpexpose.Limits{MaxStreams: 1, StreamKeepAlive: time.Hour}}
	fastH, _, fastURL, sdkURL := servePair(t, listenSnap(t), listenSnap(t), opts)
	body := listenBody("1", `{"toolsListChanged":true}`)
	fast, sdk := openListen(t, fastURL, "", body), openListen(t, sdkURL, "", body)
	fast.until(t, "edge", "subscriptions/acknowledged")
	sdk.until(t, "sdk", "subscriptions/acknowledged")
	client := &http.Client{}
	r := wireRequest{name: "second", header: baseHeader("subscriptions/listen", ""), body: listenBody("2", `{"toolsListChanged":true}`)}
	got, want := send(t, client, fastURL, "", r), send(t, client, sdkURL, "", r)
	if !got.equal(want) || got.status != http.StatusServiceUnavailable {
		t.Errorf("edge: %d %v\n%s\nsdk:  %d %v\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
	}
	if fastH.FastPathRequests() != 1 {
		t.Errorf("the edge held %d listens, want 1", fastH.FastPathRequests())
	}
}

// FuzzListen sends one arbitrary subscriptions/listen, in process, to a
// handler whose edge may hold it and to one with DisableFastPath, where
// the SDK serves it, and requires the same status, headers and bytes, on
// a server without tasks and on one that runs them. Every listen ends at its handler's short StreamLifetime, so that one
// either side holds is answered whole: acknowledged, then ended.
func FuzzListen(f *testing.F) {
	for _, notes := range []string{
		`{"toolsListChanged":true}`, `{}`, `{"toolsListChanged":false}`, `null`, `[]`, `{"toolsListChanged":"yes"}`,
		`{"resourceSubscriptions":["docs://readme","docs://pages/p1"]}`, `{"resourceSubscriptions":["docs://nothing"]}`,
		`{"resourceSubscriptions":[]}`, `{"resourceSubscriptions":"docs://readme"}`, `{"resourceSubscriptions":[1]}`,
		`{"resourceSubscriptions":["docs:\/\/readme"]}`, `{"toolsListChanged":true,"toolsListChanged":false}`,
		`{"promptsListChanged":true}`, `{"resourcesListChanged":true}`, `{"taskIds":["t"]}`, `{"other":1}`,
		`{"ToolsListChanged":true}`, `{"toolsListChanged":true,"resourceSubscriptions":["docs://readme","docs://readme"]}`,
		`{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["docs://readme"]}`,
		`{"promptsListChanged":false,"resourcesListChanged":true}`, `{"promptsListChanged":true,"resourcesListChanged":false}`,
		`{"resourcesListChanged":true,"resourcesListChanged":false}`,
	} {
		for _, id := range []string{"1", `"<&>"`, `"a"`, "-3", "1.5", "123456789012345678", `"\u0041"`} {
			f.Add([]byte(listenBody(id, notes)), "subscriptions/listen", "")
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{}}}`), "subscriptions/listen", "")
	f.Add([]byte(`{"jsonrpc":"2.0","method":"subscriptions/listen","params":{"notifications":{},`+diffMeta+`}}`), "subscriptions/listen", "")
	f.Add([]byte(listenBody("1", `{"toolsListChanged":true}`)), "tools/list", "")
	f.Add([]byte(listenBody("1", `{"toolsListChanged":true}`)), "subscriptions/listen", "Bearer writer")
	f.Add([]byte(listenBody("1", `{"toolsListChanged":true}`)), "subscriptions/listen", "Bearer refused")
	f.Add([]byte(listenBody("1", `{"toolsListChanged":true}`)), "subscriptions/listen", "Bearer  writer")
	f.Add([]byte(listenBody("1", `{"toolsListChanged":true}`)), "subscriptions/listen", "Bearer nobody")
	// Listens naming tasks (ADR 91), with the tasks extension declared.
	for _, notes := range []string{`"taskIds":["t"]`, `"taskIds":[]`, `"taskIds":["t","t"]`, `"taskIds":[1]`, `"taskIds":null`,
		`"taskIds":["t"]`, `"taskIds":"t"`, `"toolsListChanged":true,"taskIds":["t"]`, `"taskIds":["t"],"taskIds":[]`} {
		f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{`+notes+`},`+taskMeta+`}}`), "subscriptions/listen", "Bearer writer")
	}
	opts := mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true,
		Server: &mcpexpose.ServerOptions{Swappable: true, Identity: mapper},
		Limits: &mcpexpose.Limits{StreamLifetime: 5 * time.Millisecond, StreamKeepAlive: time.Hour}}
	// Two pairs: one without tasks, one that runs them.
	var pairs [][2]*mcpexpose.Handler
	for _, tasks := range []*mcpexpose.TaskOptions{nil, {}} {
		o := opts
		server := *opts.Server
		server.Tasks = tasks
		o.Server = &server
		fastH, err := mcpexpose.NewHandler(listenSnap(f), &o)
		if err != nil {
			f.Fatal(err)
		}
		o.DisableFastPath = true
		sdkH, err := mcpexpose.NewHandler(listenSnap(f), &o)
		if err != nil {
			f.Fatal(err)
		}
		pairs = append(pairs, [2]*mcpexpose.Handler{fastH, sdkH})
	}
	f.Fuzz(func(t *testing.T, body []byte, method, authz string) {
		do := func(h http.Handler) (exchange, bool) {
			req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
			hd := baseHeader(method, "")
			if method == "" {
				hd.Del("Mcp-Method")
			}
			if authz != "" {
				hd.Set("Authorization", authz)
			}
			for k, v := range hd {
				if !validHeader(k, v) {
					return exchange{}, false
				}
			}
			req.Header = hd
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			mcptest.Unframe(rec.Header(), rec.Body.String())
			b := mask(rec.Body.String(), rec.Header())
			return exchange{status: rec.Code, header: rec.Header(), body: b}, true
		}
		for _, pair := range pairs {
			got, ok := do(pair[0])
			if !ok {
				return
			}
			want, _ := do(pair[1])
			if !got.equal(want) {
				t.Fatalf("edge: %d %v\n%s\nsdk:  %d %v\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
			}
		}
	})
}

// TestListenDifferentialShutdown: a server whose base context ends (its
// shutdown, as a host that cancels BaseContext does it) ends its listens
// alike on the edge and the SDK path.
func TestListenDifferentialShutdown(t *testing.T) {
	opts := mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Swappable: true}, Limits: &mcpexpose.Limits{StreamKeepAlive: time.Hour}}
	serveCancellable := func(disable bool) (string, context.CancelFunc) {
		o := opts
		o.DisableFastPath = disable
		h, err := mcpexpose.NewHandler(listenSnap(t), &o)
		if err != nil {
			t.Fatal(err)
		}
		base, cancel := context.WithCancel(context.Background())
		srv := httptest.NewUnstartedServer(h)
		srv.Config.BaseContext = func(net.Listener) context.Context { return base }
		srv.Start()
		t.Cleanup(srv.Close)
		return srv.URL + "/mcp", cancel
	}
	fastURL, fastEnd := serveCancellable(false)
	sdkURL, sdkEnd := serveCancellable(true)
	body := listenBody("1", `{"toolsListChanged":true}`)
	fast, sdk := openListen(t, fastURL, "", body), openListen(t, sdkURL, "", body)
	fast.until(t, "edge", "subscriptions/acknowledged")
	sdk.until(t, "sdk", "subscriptions/acknowledged")
	fastEnd()
	sdkEnd()
	fast.until(t, "edge", "")
	sdk.until(t, "sdk", "")
	// The SDK writes the listen's result when the request's context ends,
	// racing the connection's own end: about one time in ten the result is
	// lost. The edge always writes it; the SDK's transcript is then the
	// edge's without that last event.
	got, want := fast.transcript(), sdk.transcript()
	if got != want && !(strings.HasPrefix(got, want) && !strings.Contains(want, `"result"`) && strings.Contains(got[len(want):], `"result":{"resultType":"complete"`)) {
		t.Errorf("edge:\n%s\nsdk:\n%s", got, want)
	}
	if !strings.Contains(got, `"result":{"resultType":"complete"`) {
		t.Errorf("the edge ended a listen on shutdown without its result:\n%s", got)
	}
}
