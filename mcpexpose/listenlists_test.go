package mcpexpose_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listsApp is what listsSnap exposes: which tools, prompts, resources and
// templates a snapshot has besides the tool echo, the resource
// docs://readme and the template docs://pages/{id}, which it always has.
type listsApp struct {
	x         bool   // the tool x
	prompts   string // "a": the prompt a; "a2": a, described otherwise; "ab": a and b
	resources string // "extra": docs://extra too; "secret": docs://secret, for writers only
	templates bool   // docs://notes/{id} too
	slow      *slowCall
}

// slowCall is the tool slow, whose calls start (started) and wait for
// release.
type slowCall struct {
	started, release chan struct{}
}

// listsSnap builds v anew, so that two handlers share nothing.
func listsSnap(t testing.TB, v listsApp) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("listens", nil)
	text := func(name, desc string, scopes ...string) *agnara.Capability {
		return app.Capability(func() (string, error) { return name, nil }, &agnara.CapabilityOptions{Name: name, Description: desc, Scopes: scopes})
	}
	page := app.Capability(func(in PageIn) (Page, error) { return Page{ID: in.ID}, nil }, &agnara.CapabilityOptions{Name: "page", Description: "A page."})
	exp := mcpexpose.New(app)
	exp.Tool(text("echo", "Echo."), nil)
	exp.Resource(text("readme", "The readme."), &mcpexpose.ResourceOptions{URI: "docs://readme"})
	exp.ResourceTemplate(page, &mcpexpose.ResourceTemplateOptions{URITemplate: "docs://pages/{id}"})
	if v.x {
		exp.Tool(text("x", "X."), nil)
	}
	if sc := v.slow; sc != nil {
		exp.Tool(app.Capability(func() (string, error) {
			sc.started <- struct{}{}
			<-sc.release
			return "slow", nil
		}, &agnara.CapabilityOptions{Name: "slow", Description: "Slow."}), nil)
	}
	switch v.prompts {
	case "a":
		exp.Prompt(text("a", "Prompt a."), &mcpexpose.PromptOptions{Name: "a"})
	case "a2":
		exp.Prompt(text("a", "Prompt a, again."), &mcpexpose.PromptOptions{Name: "a"})
	case "ab":
		exp.Prompt(text("a", "Prompt a."), &mcpexpose.PromptOptions{Name: "a"})
		exp.Prompt(text("b", "Prompt b."), &mcpexpose.PromptOptions{Name: "b"})
	}
	switch v.resources {
	case "extra":
		exp.Resource(text("extra", "Extra."), &mcpexpose.ResourceOptions{URI: "docs://extra"})
	case "secret":
		exp.Resource(text("secret", "Writers only.", "ledger:write"), &mcpexpose.ResourceOptions{URI: "docs://secret"})
	}
	if v.templates {
		notes := app.Capability(func(in PageIn) (Page, error) { return Page{ID: in.ID}, nil }, &agnara.CapabilityOptions{Name: "notes", Description: "Notes."})
		exp.ResourceTemplate(notes, &mcpexpose.ResourceTemplateOptions{URITemplate: "docs://notes/{id}"})
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// The lists' change notifications, and the sentinel each step ends with.
const (
	toolsChanged     = "notifications/tools/list_changed"
	resourcesChanged = "notifications/resources/list_changed"
	promptsChanged   = "notifications/prompts/list_changed"
	sentinel         = "notifications/resources/updated"
)

// listsStep is one swap, or a call's end (release), and, when set, the
// lists it changes (want; by default, changes from the one before).
type listsStep struct {
	name    string
	to      listsApp
	want    []string
	call    bool // a call to slow runs on both handlers during the swap
	release bool // no swap: the call ends
}

// changes are the lists a swap from a to b changes, in the order the edge
// tells them (ADR 90).
func changes(a, b listsApp) []string {
	var c []string
	if a.x != b.x {
		c = append(c, toolsChanged)
	}
	if a.resources != b.resources || a.templates != b.templates {
		c = append(c, resourcesChanged)
	}
	if a.prompts != b.prompts {
		c = append(c, promptsChanged)
	}
	return c
}

// TestListenListsDifferential opens listens of every combination of the
// lists' changes (tools, prompts, resources; each also subscribed to
// docs://readme, the sentinel) on a handler whose edge holds them and on
// one with DisableFastPath, where the SDK does, makes the same swaps on
// both (changing the tools, prompts, resources and templates at once and
// one at a time, nothing, a resource a reader may not see), and requires
// the same bytes on each stream: the status, the headers, the
// acknowledgement, and after each swap the same events, then the
// sentinel's update, with nothing between. The SDK sends each list's
// change from a timer of its own, so the order of one swap's events on its
// streams is not determined: they are compared as a set, and the edge's
// order is required to be the rule's (tools, resources, prompts). No time
// is asserted: each step waits for its events, then for the sentinel.
func TestListenListsDifferential(t *testing.T) {
	all := []listsStep{
		{name: "all-at-once", to: listsApp{x: true, prompts: "a", resources: "extra", templates: true}},
		{name: "prompt-changed", to: listsApp{x: true, prompts: "a2", resources: "extra", templates: true}},
		{name: "resource-removed", to: listsApp{x: true, prompts: "a2", templates: true}},
		{name: "template-removed", to: listsApp{x: true, prompts: "a2"}},
		{name: "tool-removed", to: listsApp{prompts: "a2"}},
		{name: "nothing", to: listsApp{prompts: "a2"}},
		{name: "prompts-removed", to: listsApp{}},
		{name: "secret-resource", to: listsApp{resources: "secret"}},
		{name: "all-again", to: listsApp{x: true, prompts: "ab", templates: true}},
		{name: "template-added", to: listsApp{x: true, prompts: "ab"}},
	}
	// A call running on the old snapshot keeps what it had registered with
	// the SDK (live.go): the SDK tells of the prompt and the resource
	// removed only when the call ends, and so must the edge.
	slow := &slowCall{started: make(chan struct{}, 2), release: make(chan struct{})}
	retired := []listsStep{
		{name: "removed-during-a-call", to: listsApp{slow: slow}, call: true, want: []string{}},
		{name: "the-call-ends", to: listsApp{slow: slow}, release: true, want: []string{resourcesChanged, promptsChanged}},
		{name: "all-while-idle", to: listsApp{x: true, prompts: "a", resources: "extra", slow: slow}},
	}
	scenarios := []struct {
		name   string
		start  listsApp
		before []listsApp  // swaps made before the listens open
		fixed  bool        // not Swappable: nothing agreed but the sentinel
		steps  []listsStep // all when nil
	}{
		// Built without prompts: the SDK agrees to the prompt list's
		// changes only while it holds prompts, here never at the listen.
		{name: "no-prompts", start: listsApp{}},
		// Built with prompts: declared, agreed whatever a swap does.
		{name: "declared-prompts", start: listsApp{prompts: "a"}},
		// Built without, given prompts by a swap before the listens.
		{name: "swapped-in-prompts", start: listsApp{}, before: []listsApp{{prompts: "a"}}},
		// Not swappable: the lists are fixed, their changes never agreed.
		{name: "fixed", start: listsApp{prompts: "a"}, fixed: true},
		{name: "retired", start: listsApp{prompts: "a", resources: "extra", slow: slow}, steps: retired},
	}
	type listener struct {
		caller, notes string
		ack           string // the acknowledgement's data line
		fast, sdk     *heldStream
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			opts := mcpexpose.HandlerOptions{
				Server:         &mcpexpose.ServerOptions{Swappable: !sc.fixed, Identity: mapper},
				Tokens:         listenTokens,
				AllowAnonymous: true,
				Limits:         &mcpexpose.Limits{StreamKeepAlive: time.Hour},
			}
			fastH, sdkH, fastURL, sdkURL := servePair(t, listsSnap(t, sc.start), listsSnap(t, sc.start), opts)
			for _, v := range sc.before {
				swapBoth(t, fastH, sdkH, v)
			}
			var ls []*listener
			for kinds := range 8 {
				var fields []string
				for i, f := range []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged"} {
					if kinds&(1<<i) != 0 {
						fields = append(fields, `"`+f+`":true`)
					}
				}
				fields = append(fields, `"resourceSubscriptions":["docs://readme"]`)
				notes := "{" + strings.Join(fields, ",") + "}"
				ls = append(ls, &listener{notes: notes})
				if kinds == 7 {
					// A reader, who may not see docs://secret: told of the
					// resource list's change as anyone is, by the SDK.
					ls = append(ls, &listener{caller: "Bearer reader", notes: notes})
				}
			}
			for i, l := range ls {
				body := listenBody(strings.Repeat("1", i+1), l.notes)
				l.fast, l.sdk = openListen(t, fastURL, l.caller, body), openListen(t, sdkURL, l.caller, body)
				l.fast.until(t, "edge", "subscriptions/acknowledged")
				l.sdk.until(t, "sdk", "subscriptions/acknowledged")
				if got, want := l.fast.transcript(), l.sdk.transcript(); l.fast.status != l.sdk.status || got != want || !headersEqual(l.fast.header, l.sdk.header) {
					t.Fatalf("%s: edge: %d %v\n%s\nsdk:  %d %v\n%s", l.notes, l.fast.status, l.fast.header, got, l.sdk.status, l.sdk.header, want)
				}
				l.ack = l.fast.read[len(l.fast.read)-1]
			}
			held := fastH.FastPathRequests()
			steps := sc.steps
			if steps == nil && !sc.fixed { // a fixed server's Swap fails
				steps = all
			}
			prev := sc.start
			if len(sc.before) > 0 {
				prev = sc.before[len(sc.before)-1]
			}
			var calls sync.WaitGroup
			done := make(chan string, 2) // the calls' answers
			for _, st := range steps {
				switch {
				case st.call:
					for _, u := range []string{fastURL, sdkURL} {
						req := mcptest.Request(t, u, "tools/call", map[string]any{"name": "listens.slow", "arguments": map[string]any{}, "_meta": mcptest.Meta(nil)}, "")
						calls.Go(func() {
							if resp, err := http.DefaultClient.Do(req); err == nil {
								b, _ := io.ReadAll(resp.Body)
								resp.Body.Close()
								done <- fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b)
							} else {
								done <- err.Error()
							}
						})
						select {
						case <-st.to.slow.started:
						case msg := <-done:
							t.Fatalf("the call to slow ended before the swap: %s", msg)
						}
					}
					swapBoth(t, fastH, sdkH, st.to)
				case st.release:
					close(st.to.slow.release)
					calls.Wait()
				default:
					swapBoth(t, fastH, sdkH, st.to)
				}
				if st.want == nil {
					st.want = changes(prev, st.to)
				}
				prev = st.to
				for _, l := range ls {
					var want []string // what this listen agreed to, of the swap's
					for _, n := range st.want {
						if strings.Contains(l.ack, `"`+strings.Split(n, "/")[1]+`ListChanged":true`) {
							want = append(want, n)
						}
					}
					l.fast.step(t, "edge "+st.name+" "+l.notes, want)
					l.sdk.step(t, "sdk "+st.name+" "+l.notes, want)
				}
				for _, h := range []*mcpexpose.Handler{fastH, sdkH} {
					if err := h.ResourceUpdated(context.Background(), "docs://readme"); err != nil {
						t.Fatal(err)
					}
				}
				for _, l := range ls {
					fast, sdk := l.fast.quiet(t, "edge "+st.name+" "+l.notes), l.sdk.quiet(t, "sdk "+st.name+" "+l.notes)
					if fast != "" || sdk != "" {
						t.Errorf("%s %s: after the swap's events: edge %q, sdk %q", st.name, l.notes, fast, sdk)
					}
				}
			}
			for _, l := range ls {
				l.fast.cancel()
				l.sdk.cancel()
			}
			waitFor(t, func() bool { return fastH.Load().Streams == 0 && sdkH.Load().Streams == 0 })
			for _, l := range ls {
				if got, want := l.fast.transcript(), l.sdk.transcript(); got != want {
					t.Errorf("%s %s: edge:\n%s\nsdk:\n%s", l.caller, l.notes, got, want)
				}
			}
			if held != int64(len(ls)) || sdkH.FastPathRequests() != 0 {
				t.Errorf("the edge held %d listens of %d, the SDK route %d", held, len(ls), sdkH.FastPathRequests())
			}
		})
	}
}

// swapBoth swaps both handlers to v.
func swapBoth(t *testing.T, fastH, sdkH *mcpexpose.Handler, v listsApp) {
	t.Helper()
	for _, h := range []*mcpexpose.Handler{fastH, sdkH} {
		if err := h.Swap(listsSnap(t, v)); err != nil {
			t.Fatal(err)
		}
	}
}

// data reads the stream's lines up to its next data line and returns it,
// failing the test after 10 s.
func (s *heldStream) data(t *testing.T, who string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("%s: the stream ended; read %q", who, s.read)
			}
			s.read = append(s.read, line)
			if strings.HasPrefix(line, "data: ") {
				return line
			}
		case <-timeout:
			t.Fatalf("%s: no event within 10s; read %q", who, s.read)
		}
	}
}

// step reads the events one swap sends, want's methods in some order,
// and requires each once; the stream's lines it read are sorted into
// want's order (the transcripts compare them so), and the edge's must
// already be.
func (s *heldStream) step(t *testing.T, who string, want []string) {
	t.Helper()
	start := len(s.read)
	var got []string
	for len(got) < len(want) {
		line := s.data(t, who)
		i := slices.IndexFunc(want, func(m string) bool { return strings.Contains(line, `"method":"`+m+`"`) })
		if i < 0 || slices.Contains(got, want[i]) {
			t.Fatalf("%s: got %q, want one each of %q", who, line, want)
		}
		got = append(got, want[i])
	}
	if strings.HasPrefix(who, "edge") && !slices.Equal(got, want) {
		t.Errorf("%s: the edge told %q, want the order %q", who, got, want)
	}
	// Put the data lines read into want's order, in place: the framing
	// between them is the same for every event.
	var at []int
	for i := start; i < len(s.read); i++ {
		if strings.HasPrefix(s.read[i], "data: ") {
			at = append(at, i)
		}
	}
	lines := make([]string, len(at))
	for j, i := range at {
		lines[j] = s.read[i]
	}
	order := func(line string) int {
		return slices.IndexFunc(want, func(m string) bool { return strings.Contains(line, `"method":"`+m+`"`) })
	}
	slices.SortStableFunc(lines, func(a, b string) int { return order(a) - order(b) })
	for j, i := range at {
		s.read[i] = lines[j]
	}
}

// quiet reads up to the sentinel's update and returns the data lines
// read before it: "" when nothing came between.
func (s *heldStream) quiet(t *testing.T, who string) string {
	t.Helper()
	var extra []string
	for {
		line := s.data(t, who)
		if strings.Contains(line, `"method":"`+sentinel+`"`) {
			return strings.Join(extra, "")
		}
		extra = append(extra, line)
	}
}

// TestListenStartDuringSwaps opens listens on the edge while swaps change
// every list: whatever each saw of the swaps during its start (which
// neither the edge nor the SDK orders: the SDK tells the listens
// subscribed when its timer fires), once the swaps stop and the sentinel
// has shown that nothing waits, each is told of the next swap, once of
// each list. It is run with -race.
func TestListenStartDuringSwaps(t *testing.T) {
	opts := mcpexpose.HandlerOptions{
		Server: &mcpexpose.ServerOptions{Swappable: true},
		Limits: &mcpexpose.Limits{StreamKeepAlive: time.Hour},
	}
	a, b := listsApp{prompts: "a"}, listsApp{x: true, prompts: "ab", resources: "extra", templates: true}
	h, err := mcpexpose.NewHandler(listsSnap(t, a), &opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	swaps := make(chan struct{})
	go func() {
		defer close(swaps)
		for i := range 100 {
			v := a
			if i%2 == 0 {
				v = b
			}
			if err := h.Swap(listsSnap(t, v)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	notes := `{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["docs://readme"]}`
	var ls []*heldStream
	for i := range 10 {
		l := openListen(t, srv.URL+"/mcp", "", listenBody(strconv.Itoa(i+1), notes))
		l.until(t, "edge", "subscriptions/acknowledged")
		if ack := l.read[len(l.read)-1]; !strings.Contains(ack, `"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,`) {
			t.Fatalf("acknowledged %s", ack)
		}
		ls = append(ls, l)
	}
	<-swaps
	if err := h.ResourceUpdated(context.Background(), "docs://readme"); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		l.until(t, "edge", sentinel)
	}
	next := b
	if h.Snapshot().Tools()[len(h.Snapshot().Tools())-1].Name == "listens.x" {
		next = a
	}
	if err := h.Swap(listsSnap(t, next)); err != nil {
		t.Fatal(err)
	}
	if err := h.ResourceUpdated(context.Background(), "docs://readme"); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		l.step(t, "edge", []string{toolsChanged, resourcesChanged, promptsChanged})
		if extra := l.quiet(t, "edge"); extra != "" {
			t.Errorf("after the swap's events: %q", extra)
		}
	}
}

// TestGoClientHearsListsChanges connects a Go SDK client with handlers
// for the three lists' changes, which then listens for all of them at
// 2026-07-28 (a listen the edge holds: TestListenListsDifferential): a
// swap that changes the three lists is heard once of each, and the lists
// read after show the swap.
func TestGoClientHearsListsChanges(t *testing.T) {
	h, err := mcpexpose.NewHandler(listsSnap(t, listsApp{prompts: "a"}), &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Swappable: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	heard := make(chan string, 16)
	acked := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "lists", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { heard <- "tools" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { heard <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { heard <- "resources" },
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				select {
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	select {
	case <-acked:
	case <-ctx.Done():
		t.Fatal("the server never acknowledged subscriptions/listen")
	}
	if err := h.Swap(listsSnap(t, listsApp{x: true, prompts: "ab", resources: "extra"})); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		select {
		case kind := <-heard:
			got = append(got, kind)
		case <-ctx.Done():
			t.Fatalf("heard %q of the swap, want tools, resources and prompts", got)
		}
	}
	if slices.Sort(got); !slices.Equal(got, []string{"prompts", "resources", "tools"}) {
		t.Errorf("heard %q of the swap, want each list once", got)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 2 {
		t.Errorf("prompts after the swap: %+v, %v", prompts, err)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 2 {
		t.Errorf("resources after the swap: %+v, %v", res, err)
	}
}
