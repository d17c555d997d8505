package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
)

// The fast path against the SDK client on real upstreams: an agnara-go
// server (mcpexpose) and an SDK server, each imported twice, once with the
// fast path and once without, and the same calls made through both
// imports as a host makes them (a compiled plan's Invoke). The outcomes
// must be equal, value for value, and the fast path must have answered the
// calls itself.

// agnaraUpstream is an agnara-go server over loopback HTTP: echo, a tool
// that fails, one whose answer is as large as asked, and one with a
// structured answer of every JSON kind.
func agnaraUpstream(t *testing.T) string {
	t.Helper()
	type text struct {
		Text string `json:"text"`
	}
	type size struct {
		N int `json:"n"`
	}
	type record struct {
		Name   string            `json:"name"`
		Count  int64             `json:"count"`
		Ratio  float64           `json:"ratio"`
		OK     bool              `json:"ok"`
		Tags   []string          `json:"tags"`
		Labels map[string]string `json:"labels"`
		Note   *string           `json:"note"`
	}
	app := agnara.New("up", nil)
	echo := app.Capability(func(_ context.Context, in text) (text, error) { return in, nil },
		&agnara.CapabilityOptions{Name: "echo", Description: "Echoes the text."})
	fail := app.Capability(func(_ context.Context, in text) (text, error) { return text{}, errors.New("no: " + in.Text) },
		&agnara.CapabilityOptions{Name: "fail", Description: "Fails."})
	large := app.Capability(func(_ context.Context, in size) (text, error) { return text{strings.Repeat("é", in.N)}, nil },
		&agnara.CapabilityOptions{Name: "large", Description: "Answers n characters."})
	structured := app.Capability(func(_ context.Context, in text) (record, error) {
		return record{Name: in.Text, Count: 1 << 53, Ratio: 0.1, OK: true, Tags: []string{"a", "ü", ""}, Labels: map[string]string{"k": in.Text}}, nil
	}, &agnara.CapabilityOptions{Name: "structured", Description: "Answers a record."})
	exp := mcpexpose.New(app)
	for _, c := range []*agnara.Capability{echo, fail, large, structured} {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dev := policy.NewPrincipal("gateway", nil)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sdkUpstream is a server on the SDK's stateless handler whose "search"
// answers by its mode: text and structured content, a tool error, a
// JSON-RPC error, invalid params, other content kinds, many blocks.
func sdkUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name:         "search",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"mode":{"type":"string"},"n":{"type":"integer"}},"required":["q"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["count","tags"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + in.Q}}, StructuredContent: ok}, nil
		case "error":
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "remote failure"}}}, nil
		case "protocol":
			return nil, errors.New("internal failure")
		case "invalid":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "q is wrong"}
		case "image":
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}, StructuredContent: ok}, nil
		case "nostruct":
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"count":1,"tags":[]}`}}}, nil
		case "badstruct":
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"count": "many", "tags": []string{}}}, nil
		case "blocks":
			blocks := make([]mcp.Content, in.N)
			for i := range blocks {
				blocks[i] = &mcp.TextContent{Text: fmt.Sprint(i)}
			}
			return &mcp.CallToolResult{Content: blocks, StructuredContent: ok}, nil
		case "bigtext":
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.N)}}, StructuredContent: ok}, nil
		}
		return nil, fmt.Errorf("unknown mode %q", in.Mode)
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// importBoth imports bindings from url twice, with the fast path and
// without, and returns the two plans and the fast session.
func importBoth(t *testing.T, url string, bindings map[string]Binding) (fast, sdk *execution.Plans, fs *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plans := func(disable bool) (*execution.Plans, *Session) {
		sess, err := Connect(ctx, "up", &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &ConnectOptions{DisableFastPath: disable})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		if got := sess.ProtocolVersion(); got != "2026-07-28" {
			t.Fatalf("negotiated %s, want 2026-07-28", got)
		}
		cat, err := Discover(ctx, sess, bindings, nil)
		if err != nil {
			t.Fatal(err)
		}
		app := agnara.New("gw", nil)
		cat.Register(app)
		p, err := execution.Compile(app)
		if err != nil {
			t.Fatal(err)
		}
		return p, sess
	}
	fast, fs = plans(false)
	sdk, ss := plans(true)
	if fs.fast == nil || ss.fast != nil {
		t.Fatalf("fast path set up: %v and %v, want one of each", fs.fast != nil, ss.fast != nil)
	}
	return fast, sdk, fs
}

// invoked is a plan's outcome as a host sees it.
type invoked struct {
	Value   string // a success's value
	Reason  execution.Reason
	Code    string
	Message string
	Err     string // an error that is not a failure
}

func invoke(plans *execution.Plans, name, args string) invoked {
	p, ok := plans.Lookup("gw." + name)
	if !ok {
		return invoked{Err: "no plan gw." + name}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.Invoke(ctx, &execution.Invocation{Principal: policy.NewPrincipal("alice", nil), Arguments: json.RawMessage(args)})
	if err != nil {
		if f := (*execution.Failure)(nil); errors.As(err, &f) {
			return invoked{Reason: execution.ReasonOf(err), Code: string(f.Code), Message: f.Message}
		}
		return invoked{Err: err.Error()}
	}
	switch o := out.(type) {
	case *execution.Failure:
		return invoked{Reason: execution.ReasonOf(o), Code: string(o.Code), Message: o.Message}
	case execution.Success:
		b, err := json.Marshal(o) // its value, and any content and structured value it carries
		if err != nil {
			return invoked{Err: err.Error()}
		}
		return invoked{Value: string(b)}
	}
	return invoked{Err: fmt.Sprintf("outcome %T", out)}
}

// TestFastCallEqualsSDKClient: through an agnara-go upstream and an SDK
// one, valid, invalid, failing, large, unicode and structured calls come to
// the same outcome with the fast path as through the SDK client, and the
// fast path answered every call that reached the upstream.
func TestFastCallEqualsSDKClient(t *testing.T) {
	standard := func(name string) Binding {
		return Binding{Name: name, Title: "T " + name, NoScopeValidator: true, ConcurrencySafe: true, Profile: ProfileStandard}
	}
	cases := []struct {
		name     string
		url      func(*testing.T) string
		bindings map[string]Binding
		calls    [][2]string // tool, arguments
		local    int         // calls refused before they are sent
	}{
		{"agnara", agnaraUpstream, map[string]Binding{
			"up.echo": standard("echo"), "up.fail": standard("fail"), "up.large": standard("large"), "up.structured": standard("structured"),
		}, [][2]string{
			{"echo", `{"text":"hi"}`},
			{"echo", `{"text":""}`},
			{"echo", `{ "text" : "h\u00e9 \u2028 \ud83d\ude00 \" \\ </script> é 😀" }`},
			{"echo", "{\"text\":\"\\u0000\\n\\t\"}"},
			{"echo", `{"text":5}`},
			{"echo", `{}`},
			{"fail", `{"text":"boom"}`},
			{"large", `{"n":0}`},
			{"large", `{"n":40000}`},
			{"large", `{"n":2000000}`},
			{"structured", `{"text":"ünï"}`},
		}, 2},
		{"sdk", sdkUpstream, map[string]Binding{"search": standard("search")}, [][2]string{
			{"search", `{"q":"mcp"}`},
			{"search", `{"q":"😀","mode":"error"}`},
			{"search", `{"q":"x","mode":"protocol"}`},
			{"search", `{"q":"x","mode":"invalid"}`},
			{"search", `{"q":"x","mode":"image"}`},
			{"search", `{"q":"x","mode":"nostruct"}`},
			{"search", `{"q":"x","mode":"badstruct"}`},
			{"search", `{"q":"x","mode":"blocks","n":3}`},
			{"search", `{"q":"x","mode":"blocks","n":100000}`},
			{"search", `{"q":"x","mode":"bigtext","n":100000}`},
			{"search", `{"q":"x","mode":"bigtext","n":20000000}`},
			{"search", `{"q":"x","mode":"unknown"}`},
			{"search", `{"mode":"x"}`},
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fast, sdk, fs := importBoth(t, tc.url(t), tc.bindings)
			for _, c := range tc.calls {
				f, s := invoke(fast, c[0], c[1]), invoke(sdk, c[0], c[1])
				if diff := cmp.Diff(s, f); diff != "" {
					t.Errorf("%s %s (-sdk +fast):\n%s", c[0], c[1], diff)
				}
				if f.Err != "" {
					t.Errorf("%s %s: %s", c[0], c[1], f.Err)
				}
			}
			if taken, passed := fs.fastStats(); taken != int64(len(tc.calls)-tc.local) || passed != 0 {
				t.Errorf("the fast path answered %d calls and passed %d on, want %d answered", taken, passed, len(tc.calls)-tc.local)
			}
		})
	}
}

// TestFastCallConcurrent: calls made at once through one fast session each
// get their own answer.
func TestFastCallConcurrent(t *testing.T) {
	fast, _, fs := importBoth(t, agnaraUpstream(t), map[string]Binding{
		"up.echo": {Name: "echo", Title: "Echo", NoScopeValidator: true, ConcurrencySafe: true, Profile: ProfileStandard},
	})
	const n = 64
	got := make(chan string, n)
	for i := range n {
		go func() {
			// The text, closed by a quote (escaped where the text is inside
			// a JSON string), so that "call 1" is not found in "call 12".
			want := fmt.Sprintf(`call %d`, i)
			if o := invoke(fast, "echo", fmt.Sprintf(`{"text":"call %d"}`, i)); !strings.Contains(o.Value, want+`"`) && !strings.Contains(o.Value, want+`\"`) {
				got <- fmt.Sprintf("call %d: %+v", i, o)
				return
			}
			got <- ""
		}()
	}
	for range n {
		if msg := <-got; msg != "" {
			t.Error(msg)
		}
	}
	if taken, _ := fs.fastStats(); taken != n {
		t.Errorf("the fast path answered %d of %d calls", taken, n)
	}
}

// TestFastPathTakesOnlyWhatItKnows: the fast path is set up only where it
// copies the SDK client, and hands other calls to the SDK.
func TestFastPathTakesOnlyWhatItKnows(t *testing.T) {
	url := agnaraUpstream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name      string
		transport mcp.Transport
		opts      *ConnectOptions
	}{
		{"handshake era", &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &ConnectOptions{SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}}},
		{"stream resumption", &mcp.StreamableClientTransport{Endpoint: url}, nil},
		{"disabled", &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &ConnectOptions{DisableFastPath: true}},
	} {
		sess, err := Connect(ctx, "up", tc.transport, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if sess.fast != nil {
			t.Errorf("%s: the fast path is set up", tc.name)
		}
		sess.Close()
	}

	sess, err := Connect(ctx, "up", &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	cs := sess.ClientSession()
	// Arguments that are not raw JSON, and a retry carrying request state,
	// are the SDK's.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up.echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up.echo", Arguments: json.RawMessage(`{"text":"x"}`), RequestState: "s"}); err != nil {
		t.Logf("retry with request state: %v", err)
	}
	if taken, passed := sess.fastStats(); taken != 0 || passed != 2 {
		t.Errorf("answered %d, passed %d; want 0 and 2", taken, passed)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up.echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if taken, _ := sess.fastStats(); taken != 1 {
		t.Errorf("a plain call: answered %d, want 1", taken)
	}
}

// TestFastCallDeliversNotifications: notifications in a call's stream reach
// the session's handlers on the fast path as through the SDK client, the
// monitor's tools/list_changed included (the catalog goes stale).
func TestFastCallDeliversNotifications(t *testing.T) {
	body := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"note\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n\n"
	srv := newAnswerServer(t, 200, "text/event-stream", []byte(body))
	for _, disable := range []bool{false, true} {
		logged, changed := make(chan string, 4), make(chan struct{}, 4)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		sess, err := Connect(ctx, "answers", &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, &ConnectOptions{
			DisableFastPath: disable,
			ClientOptions: &mcp.ClientOptions{
				//lint:ignore SA1019 an upstream may still send log messages in a call's stream
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					logged <- fmt.Sprint(req.Params.Data)
				},
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		defer cancel()
		sess.mon.mu.Lock()
		gen := sess.mon.gen
		sess.mon.mu.Unlock()
		if _, err := sess.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("fast path disabled %v: %v", disable, err)
		}
		select {
		case got := <-logged:
			if got != "note" {
				t.Errorf("fast path disabled %v: logged %q", disable, got)
			}
		case <-ctx.Done():
			t.Fatalf("fast path disabled %v: no log message", disable)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("fast path disabled %v: no tools/list_changed", disable)
		}
		sess.mon.mu.Lock()
		stale := sess.mon.gen != gen
		sess.mon.mu.Unlock()
		if !stale {
			t.Errorf("fast path disabled %v: the monitor did not record the change", disable)
		}
		if taken, _ := sess.fastStats(); taken != map[bool]int64{false: 1, true: 0}[disable] {
			t.Errorf("fast path disabled %v: answered %d", disable, taken)
		}
	}
}

// TestFastPathLeavesHeaderTools: a call of a tool whose listed input schema
// names an x-mcp-header goes to the SDK client, which sets the header.
func TestFastPathLeavesHeaderTools(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	got := make(chan string, 1)
	s.AddTool(&mcp.Tool{
		Name:        "regional",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			select {
			case got <- r.Header.Get("Mcp-Param-Region"):
			default:
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := Connect(ctx, "up", &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.ClientSession().ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: "regional", Arguments: json.RawMessage(`{"region":"eu"}`)}); err != nil {
		t.Fatal(err)
	}
	if taken, passed := sess.fastStats(); taken != 0 || passed != 1 {
		t.Errorf("answered %d, passed %d; want 0 and 1", taken, passed)
	}
	if h := <-got; h != "eu" {
		t.Errorf("Mcp-Param-Region %q, want eu", h)
	}
}

// TestFastCallDrainsOnlyOpenStreams: an agnara-go upstream sends each
// answer's stream whole, with its length, so the connection goes back to
// the pool with the answer and nothing is drained in the background; a
// stream an upstream keeps open after the answer is still drained, and
// the answer does not wait for its end.
func TestFastCallDrainsOnlyOpenStreams(t *testing.T) {
	bind := func(remote, name string) map[string]Binding {
		return map[string]Binding{remote: {Name: name, Title: "T", NoScopeValidator: true, ConcurrencySafe: true, Profile: ProfileStandard}}
	}
	t.Run("whole", func(t *testing.T) {
		fast, _, fs := importBoth(t, agnaraUpstream(t), bind("up.echo", "echo"))
		for i := range 5 {
			if o := invoke(fast, "echo", fmt.Sprintf(`{"text":"%d"}`, i)); o.Value == "" {
				t.Fatalf("call %d: %+v", i, o)
			}
		}
		if taken, _ := fs.fastStats(); taken != 5 || fs.fast.drained.Load() != 0 {
			t.Errorf("answered %d of 5 calls, drained %d streams; want 5 and 0", taken, fs.fast.drained.Load())
		}
	})
	t.Run("open", func(t *testing.T) {
		sdk := sdkUpstream(t)
		release := make(chan struct{})
		var open sync.WaitGroup // calls being answered, each till release
		held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			call := r.Header.Get("Mcp-Method") == "tools/call"
			if call {
				open.Add(1)
				defer open.Done()
			}
			proxyTo(sdk, w, r)
			if call {
				select { // the SDK's stream, answered and flushed, left open
				case <-release:
				case <-r.Context().Done():
				}
			}
		}))
		t.Cleanup(held.Close)
		fast, _, fs := importBoth(t, held.URL, bind("search", "search"))
		if o := invoke(fast, "search", `{"q":"mcp"}`); !strings.Contains(o.Value, "found mcp") {
			t.Fatalf("call: %+v", o)
		}
		if taken, _ := fs.fastStats(); taken != 1 || fs.fast.drained.Load() != 1 {
			t.Errorf("answered %d call, drained %d streams; want 1 and 1", taken, fs.fast.drained.Load())
		}
		close(release)
		open.Wait()
	})
}

// proxyTo serves r with the handler at url, passing each write and flush
// of its answer on as it comes.
func proxyTo(url string, w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, url, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			_ = http.NewResponseController(w).Flush()
		}
		if err != nil {
			return
		}
	}
}
