package mcpexpose

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFinishedCopiesEveryField holds the finishers, which copy a result
// field by field to give it a result type, to the fields of the SDK's
// results: a field an SDK upgrade adds would be dropped from every answer
// on the SDK's route, and this fails first.
func TestFinishedCopiesEveryField(t *testing.T) {
	for _, c := range []struct {
		rt   reflect.Type
		want []string
	}{
		{reflect.TypeFor[mcp.CallToolResult](), []string{"Meta", "Content", "StructuredContent", "IsError", "InputRequests", "RequestState", "resultType", "err"}},
		{reflect.TypeFor[mcp.ReadResourceResult](), []string{"Meta", "Cacheable", "Contents", "InputRequests", "RequestState", "resultType"}},
		{reflect.TypeFor[mcp.GetPromptResult](), []string{"Meta", "Description", "Messages", "InputRequests", "RequestState", "resultType"}},
	} {
		var fields []string
		for i := range c.rt.NumField() {
			fields = append(fields, c.rt.Field(i).Name)
		}
		if !slices.Equal(fields, c.want) {
			t.Errorf("%v has the fields %v; its finisher copies %v: copy the new ones", c.rt, fields, c.want)
		}
	}
	for _, c := range []struct {
		r    interface{ MarshalJSON() ([]byte, error) }
		want string
	}{
		{&completeResult, `"resultType":"complete"`}, {&inputRequiredResult, `"resultType":"input_required"`},
		{&readComplete, `"resultType":"complete"`}, {&readInputRequired, `"resultType":"input_required"`},
		{&promptComplete, `"resultType":"complete"`}, {&promptInputRequired, `"resultType":"input_required"`},
	} {
		b, err := c.r.MarshalJSON()
		if err != nil || !strings.Contains(string(b), c.want) {
			t.Errorf("the result a finisher copies its type from encodes as %s (%v), want %s", b, err, c.want)
		}
	}
	// Every exported field set survives, and the result type is the one
	// the SDK would give (NeedsInput reads it).
	in := &mcp.CallToolResult{Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: "t"}}, StructuredContent: map[string]any{"a": 1.0}, IsError: true, RequestState: "s"}
	out := sdkFinished(&mcp.CallToolRequest{}, in).(*mcp.CallToolResult)
	if !reflect.DeepEqual(out.Meta, in.Meta) || !reflect.DeepEqual(out.Content, in.Content) || !reflect.DeepEqual(out.StructuredContent, in.StructuredContent) || !out.IsError || out.RequestState != "s" || out.NeedsInput() {
		t.Errorf("finished %+v from %+v", out, in)
	}
	asks := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "?"}}, RequestState: "s"}
	if out := sdkFinished(&mcp.CallToolRequest{}, asks).(*mcp.CallToolResult); !out.NeedsInput() || out.Content != nil || out.InputRequests == nil {
		t.Errorf("an input-required result finished as %+v", out)
	}
}

// TestFinishersDifferential holds the finishers (finished.go) to the SDK
// itself: two SDK servers hold one tool, one resource, one template and
// one prompt, and answer with the same results, one through the SDK's own
// handlers, which the SDK finishes, the other through a middleware that
// answers as server.middleware does, finishing them itself. Each result,
// read by the SDK's client at each revision over HTTP, must reach it as
// the same bytes (the client's log of the wire).
func TestFinishersDifferential(t *testing.T) {
	text := func(uri, mime string) *mcp.ResourceContents {
		return &mcp.ResourceContents{URI: uri, MIMEType: mime, Text: "hello"}
	}
	asks := mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "Who?", RequestedSchema: map[string]any{"type": "object"}}}
	reads := map[string]func() *mcp.ReadResourceResult{
		"whole": func() *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{text("docs://r", "text/plain")}}
		},
		"no uri": func() *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{text("", "text/plain"), text("docs://other", "")}}
		},
		"cached": func() *mcp.ReadResourceResult {
			r := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{text("", "")}}
			r.TTLMs, r.CacheScope = 5, "private"
			return r
		},
		"meta": func() *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{Meta: mcp.Meta{"k": "v"}, Contents: []*mcp.ResourceContents{{Blob: []byte{1, 2}}}}
		},
		"nil":   func() *mcp.ReadResourceResult { return &mcp.ReadResourceResult{} },
		"empty": func() *mcp.ReadResourceResult { return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}} },
		"asks":  func() *mcp.ReadResourceResult { return &mcp.ReadResourceResult{InputRequests: asks, RequestState: "s"} },
		"asks+both": func() *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{InputRequests: asks, Contents: []*mcp.ResourceContents{text("", "")}}
		},
	}
	prompts := map[string]func() *mcp.GetPromptResult{
		"whole": func() *mcp.GetPromptResult {
			return &mcp.GetPromptResult{Description: "d", Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}
		},
		"nil":  func() *mcp.GetPromptResult { return &mcp.GetPromptResult{Meta: mcp.Meta{"k": 1}} },
		"asks": func() *mcp.GetPromptResult { return &mcp.GetPromptResult{InputRequests: asks, RequestState: "s"} },
	}
	calls := map[string]func() *mcp.CallToolResult{
		"whole": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "t"}}, StructuredContent: map[string]any{"a": 1}}
		},
		"nil":   func() *mcp.CallToolResult { return &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{"k": "v"}} },
		"asks":  func() *mcp.CallToolResult { return &mcp.CallToolResult{InputRequests: asks, RequestState: "s"} },
		"state": func() *mcp.CallToolResult { return &mcp.CallToolResult{Content: []mcp.Content{}, RequestState: "s"} },
	}
	var current string // the case being asked, the same on both servers
	build := func(finishHere bool) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "finishers", Version: "1"}, nil)
		readH := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return reads[current](), nil
		}
		promptH := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompts[current](), nil
		}
		toolH := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return calls[current](), nil }
		if finishHere {
			readH = func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return nil, errUnrouted
			}
			promptH = func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, errUnrouted }
			toolH = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, errUnrouted }
		}
		s.AddResource(&mcp.Resource{URI: "docs://r", Name: "r", MIMEType: "text/markdown"}, readH)
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "docs://pages/{id}", Name: "page"}, readH)
		s.AddPrompt(&mcp.Prompt{Name: "p"}, promptH)
		s.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}, toolH)
		if finishHere {
			s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					switch r := req.(type) {
					case *mcp.ReadResourceRequest:
						mime := "text/markdown" // the definitions'
						if r.Params.URI != "docs://r" {
							mime = ""
						}
						return readFinished(r, reads[current](), mime)
					case *mcp.GetPromptRequest:
						return promptFinished(r, prompts[current]()), nil
					case *mcp.CallToolRequest:
						return sdkFinished(r, calls[current]()), nil
					}
					return next(ctx, method, req)
				}
			})
		}
		return s
	}
	serveSDK := func(s *mcp.Server) string {
		get := func(*http.Request) *mcp.Server { return s }
		stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
		stateful := mcp.NewStreamableHTTPHandler(get, nil)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if modernRequest(r) {
				stateless.ServeHTTP(w, r)
				return
			}
			stateful.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	sdkURL, oursURL := serveSDK(build(false)), serveSDK(build(true))
	ctx := context.Background()
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		connect := func(url string) (*mcp.ClientSession, *wireLog) {
			log := &wireLog{}
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			tr := &mcp.LoggingTransport{Transport: &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, Writer: log}
			cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect at %q: %v", version, err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs, log
		}
		sdk, sdkLog := connect(sdkURL)
		ours, oursLog := connect(oursURL)
		ask := func(what string, do func(cs *mcp.ClientSession) error) {
			errSDK := do(sdk)
			wantSDK := sdkLog.last(t)
			errOurs := do(ours)
			got := oursLog.last(t)
			if fmt.Sprint(errSDK) != fmt.Sprint(errOurs) || got != wantSDK {
				t.Errorf("version %q, %s:\nSDK (%v):\n%s\nours (%v):\n%s", version, what, errSDK, wantSDK, errOurs, got)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(reads)) {
			current = name
			for _, uri := range []string{"docs://r", "docs://pages/7"} {
				ask("read "+name+" of "+uri, func(cs *mcp.ClientSession) error {
					_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					return err
				})
				// At 2026-07-28 the SDK's client keeps a read for its ttlMs
				// and answers the next read of the URI from there, with no
				// request: wait the entry out on both clients, so the next
				// case is asked of the servers.
				if ttl := reads[name]().TTLMs; ttl > 0 {
					time.Sleep(time.Duration(ttl)*time.Millisecond + 20*time.Millisecond)
				}
			}
		}
		// A handshake-era session is asked through the session (rounds.go):
		// no prompt or call the middleware runs returns input requests to
		// it, which the SDK's own multi-round-trip middleware, inside the
		// middleware, would fulfil by asking the client.
		legacyAsks := func(name string) bool { return version != "" && name == "asks" }
		for _, name := range slices.Sorted(maps.Keys(prompts)) {
			current = name
			if legacyAsks(name) {
				continue
			}
			ask("prompt "+name, func(cs *mcp.ClientSession) error {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"})
				return err
			})
		}
		for _, name := range slices.Sorted(maps.Keys(calls)) {
			current = name
			if legacyAsks(name) {
				continue
			}
			ask("call "+name, func(cs *mcp.ClientSession) error {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: map[string]any{}})
				return err
			})
		}
	}
}

// wireLog is what a LoggingTransport writes, one line a message, which its
// goroutines may write after the call that sent the message returns.
type wireLog struct {
	mu    sync.Mutex
	lines []string
	part  string
}

func (l *wireLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	text := l.part + string(p)
	for {
		line, rest, ok := strings.Cut(text, "\n")
		if !ok {
			break
		}
		if line != "" {
			l.lines = append(l.lines, line)
		}
		text = rest
	}
	l.part = text
	return len(p), nil
}

// last returns the last request the client wrote and the response it
// read to it, waiting a while for the response to be logged.
func (l *wireLog) last(t *testing.T) string {
	t.Helper()
	idOf := func(line, prefix string) (string, bool) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, ok := strings.CutPrefix(line, prefix)
		if !ok || json.Unmarshal([]byte(body), &m) != nil || m.ID == nil {
			return "", false
		}
		return string(m.ID), prefix == "read: " || m.Method != ""
	}
	for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait); time.Sleep(time.Millisecond) {
		l.mu.Lock()
		var write, id string
		for _, line := range slices.Backward(l.lines) {
			if i, ok := idOf(line, "write: "); ok {
				write, id = line, i
				break
			}
		}
		for _, line := range l.lines {
			if i, ok := idOf(line, "read: "); ok && write != "" && i == id {
				l.mu.Unlock()
				return write + "\n" + line
			}
		}
		l.mu.Unlock()
	}
	t.Fatal("no response logged to the last request")
	return ""
}
