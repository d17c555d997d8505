package mcpexpose_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
)

// jobs ends the task tool job's runs of one handler: each run named
// label waits for its outcome (nil: it succeeds; an error: it fails), or
// for its task's cancellation.
type jobs struct {
	mu   sync.Mutex
	by   map[string]chan error
	done chan struct{} // closed at the test's end: every run ends
}

func newJobs(t *testing.T) *jobs {
	j := &jobs{by: map[string]chan error{}, done: make(chan struct{})}
	t.Cleanup(func() { close(j.done) })
	return j
}

func (j *jobs) ch(label string) chan error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.by[label] == nil {
		j.by[label] = make(chan error, 1)
	}
	return j.by[label]
}

// JobIn is the job tool's input.
type JobIn struct {
	Label string `json:"label"`
}

// JobAnswer is the answer to the job tool's question.
type JobAnswer struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

var jobQuestion = execution.NewForm[JobAnswer]("Your name?")

// jobSnap is listenSnap's application with the task tool job, whose runs
// j ends, and, as named, the tool x for everyone.
func jobSnap(t testing.TB, j *jobs, tools ...string) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("listens", nil)
	readme := app.Capability(func() (string, error) { return "read me", nil }, &agnara.CapabilityOptions{Name: "readme", Description: "The readme."})
	echo := app.Capability(func() (string, error) { return "e", nil }, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."})
	x := app.Capability(func() (string, error) { return "x", nil }, &agnara.CapabilityOptions{Name: "x", Description: "X."})
	job := app.Capability(func(ec *execution.Context, in JobIn) (string, error) {
		if strings.HasPrefix(in.Label, "ask") {
			// A question: the task waits for input, or, its client
			// having declared no elicitation, fails.
			v, err := execution.Ask(ec, "name", jobQuestion)
			if err != nil {
				return "", err
			}
			return "hi " + v.Name, nil
		}
		var ctx context.Context = ec
		select {
		case err := <-j.ch(in.Label):
			if err != nil {
				return "", err
			}
			return "done " + in.Label, nil
		case <-ctx.Done():
			return "", ctx.Err()
		case <-j.done:
			return "", errors.New("the test ended")
		}
	}, &agnara.CapabilityOptions{Name: "job", Description: "Runs until told.", Forms: []agnara.Form{jobQuestion}})
	exp := mcpexpose.New(app)
	exp.Resource(readme, &mcpexpose.ResourceOptions{URI: "docs://readme"})
	exp.Tool(echo, nil)
	exp.Tool(job, &mcpexpose.ToolOptions{Name: "job", Task: mcpexpose.TaskRequired})
	if slices.Contains(tools, "x") {
		exp.Tool(x, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// taskMeta is diffMeta with the tasks extension declared.
const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"diff","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// taskSide is one handler of TestListenTasksDifferential: its tasks'
// ids by label, and its job runs.
type taskSide struct {
	h    *mcpexpose.Handler
	url  string
	ids  map[string]string
	jobs *jobs
}

// taskStep is one thing done to a side while its listen is open, and the
// line that then shows on the listen ("" for none).
type taskStep struct {
	do   func(t *testing.T, s *taskSide)
	want string
}

func finish(label string) func(*testing.T, *taskSide) {
	return func(t *testing.T, s *taskSide) { s.jobs.ch(label) <- nil }
}

func fail(label string) func(*testing.T, *taskSide) {
	return func(t *testing.T, s *taskSide) { s.jobs.ch(label) <- errors.New("the job failed") }
}

func cancelTask(token, label string) func(*testing.T, *taskSide) {
	return func(t *testing.T, s *taskSide) {
		if _, e := tasktest.RPC(t, s.url, token, true, "tasks/cancel", map[string]any{"taskId": s.ids[label]}); e != nil {
			t.Fatalf("cancelling %s: %v", label, e)
		}
	}
}

func swapJobs(tools ...string) func(*testing.T, *taskSide) {
	return func(t *testing.T, s *taskSide) {
		if err := s.h.Swap(jobSnap(t, s.jobs, tools...)); err != nil {
			t.Fatal(err)
		}
	}
}

func touch(uri string) func(*testing.T, *taskSide) {
	return func(t *testing.T, s *taskSide) {
		if err := s.h.ResourceUpdated(context.Background(), uri); err != nil {
			t.Fatal(err)
		}
	}
}

func nothing(*testing.T, *taskSide) {}

// TestListenTasksDifferential opens the same listens naming tasks (ADR
// 91) on a handler whose edge holds them and on one with DisableFastPath,
// where the SDK's route does (tasknotify.go's taskStream), does the same
// to both (tasks that finish, fail, are cancelled; tasks unknown or of
// another caller; the tool list's changes and resource updates mixed in;
// the stream's lifetime and its token's end; the client going away) and
// requires the same bytes on the wire, each handler's task ids named by
// label. Listens the edge leaves to the SDK's route (undeclared
// extension, bad ids, ids it does not read) are answered alike too.
func TestListenTasksDifferential(t *testing.T) {
	type start struct{ label, token string }
	scenarios := []struct {
		name   string
		limits *mcpexpose.Limits
		starts []start
		authz  string
		ids    string // the taskIds, labels standing for each side's ids
		notes  string // the other notifications asked for, each followed by a comma
		meta   string // taskMeta unless set
		steps  []taskStep
		end    string // "" the client goes away; "server" the server ends the stream
		expiry time.Duration
		held   bool
		// sorted: the tasks' first states are compared as a set: the
		// SDK's route writes those waiting in its map's order.
		sorted bool
		down   bool   // the task store fails every Get once the tasks started
		id     string // the listen's id; 7 unless set
	}{
		{name: "finishes", starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a"]`, held: true, steps: []taskStep{
			{nothing, `"status":"working"`},
			{finish("a"), `"status":"completed"`},
			{touch("docs://readme"), ""},
		}},
		{name: "errs", starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a"]`, held: true, steps: []taskStep{
			{nothing, `"status":"working"`},
			{fail("a"), `"isError":true`},
		}},
		{name: "asks-then-cancelled", starts: []start{{"ask", "writer"}}, authz: "Bearer writer", ids: `["ask"]`, held: true, steps: []taskStep{
			{nothing, `"status":"input_required"`},
			{cancelTask("writer", "ask"), `"status":"cancelled"`},
		}},
		{name: "fails", starts: []start{{"ask-unasked", "writer"}}, authz: "Bearer writer", ids: `["ask-unasked"]`, held: true, steps: []taskStep{
			{nothing, `"status":"failed"`},
		}},
		{name: "html-id", id: `"<&>"`, starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a"]`, held: true, steps: []taskStep{
			{nothing, `"status":"working"`},
			{finish("a"), `"status":"completed"`},
		}},
		{name: "cancelled", starts: []start{{"a", "reader"}}, authz: "Bearer reader", ids: `["a"]`, held: true, steps: []taskStep{
			{nothing, `"status":"working"`},
			{cancelTask("reader", "a"), `"status":"cancelled"`},
		}},
		{name: "one-by-one", starts: []start{{"a", "writer"}, {"b", "writer"}}, authz: "Bearer writer", ids: `["b","a","b"]`, held: true, sorted: true, steps: []taskStep{
			{nothing, `"status":"working"`},
			{nothing, `"status":"working"`},
			{finish("b"), `"status":"completed"`},
			{fail("a"), `"isError":true`},
		}},
		{name: "unknown-and-anothers", starts: []start{{"a", "writer"}, {"r", "reader"}}, authz: "Bearer writer", ids: `["no-such-task","r","a"]`, held: true, steps: []taskStep{
			{nothing, `"status":"working"`},
			{finish("r"), ""}, // the reader's: not told
			{finish("a"), `"status":"completed"`},
		}},
		{name: "mixed", starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a"]`, notes: `"toolsListChanged":true,"resourceSubscriptions":["docs://readme"],`, held: true, steps: []taskStep{
			{nothing, `"status":"working"`},
			{swapJobs("x"), "tools/list_changed"},
			{touch("docs://readme"), "resources/updated"},
			{finish("a"), `"status":"completed"`},
			{swapJobs(), "tools/list_changed"},
		}},
		{name: "done-before", starts: []start{{"a", "anonymous"}}, ids: `["a"]`, held: true, steps: []taskStep{
			{nothing, `"status":"completed"`},
		}},
		{name: "none-agreed", starts: []start{{"r", "reader"}}, authz: "Bearer writer", ids: `["no-such-task","r"]`, end: "server", held: true},
		{name: "empty", ids: `[]`, end: "server", held: true},
		{name: "empty-with-tools", ids: `[]`, notes: `"toolsListChanged":true,`, held: true, steps: []taskStep{
			{swapJobs("x"), "tools/list_changed"},
		}},
		{name: "lifetime", limits: &mcpexpose.Limits{StreamLifetime: 300 * time.Millisecond}, starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a"]`, end: "server", held: true},
		{name: "token-expiry", expiry: 1500 * time.Millisecond, starts: []start{{"a", "brief"}}, authz: "Bearer brief", ids: `["a"]`, end: "server", held: true},
		{name: "sdk/store-down", starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a"]`, down: true, end: "server"},
		{name: "sdk/undeclared", starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a"]`, meta: diffMeta, end: "server"},
		{name: "sdk/not-strings", ids: `[1]`, end: "server"},
		{name: "sdk/null", ids: `null`, notes: `"toolsListChanged":true,`, steps: []taskStep{{swapJobs("x"), "tools/list_changed"}}},
		{name: "sdk/too-many", ids: `[` + strings.Repeat(`"t",`, 64) + `"t"]`, end: "server"},
		{name: "sdk/too-long", ids: `["` + strings.Repeat("t", 129) + `"]`, end: "server"},
		{name: "sdk/escaped", starts: []start{{"a", "writer"}}, authz: "Bearer writer", ids: `["a","\u0041"]`, steps: []taskStep{
			{nothing, `"status":"working"`},
			{finish("a"), `"status":"completed"`},
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			opts := mcpexpose.HandlerOptions{
				Server:         &mcpexpose.ServerOptions{Swappable: true, Identity: mapper, Tasks: &mcpexpose.TaskOptions{Heartbeat: time.Hour}},
				Tokens:         listenTokens,
				AllowAnonymous: true,
				Limits:         sc.limits,
			}
			if opts.Limits == nil {
				opts.Limits = &mcpexpose.Limits{StreamKeepAlive: time.Hour}
			}
			var store *downStore
			if sc.down {
				// One store for both handlers: each sees its own tasks.
				store = &downStore{Store: tasks.NewMemory(nil)}
				opts.Server.Tasks.Store = store
			}
			fj, sj := newJobs(t), newJobs(t)
			fastH, sdkH, fastURL, sdkURL := servePair(t, jobSnap(t, fj), jobSnap(t, sj), opts)
			briefExpiry.Store(time.Now().Add(sc.expiry).UnixNano())
			sides := []*taskSide{{h: fastH, url: fastURL, ids: map[string]string{}, jobs: fj}, {h: sdkH, url: sdkURL, ids: map[string]string{}, jobs: sj}}
			for _, s := range sides {
				for _, st := range sc.starts {
					token := st.token
					if token == "anonymous" {
						token = ""
					}
					s.ids[st.label] = startJob(t, s.url, token, st.label)
				}
			}
			if sc.name == "asks-then-cancelled" {
				for _, s := range sides {
					tasktest.WaitStatus(t, s.url, "writer", s.ids["ask"], "input_required")
				}
			}
			if sc.name == "fails" {
				// The task fails as soon as it asks: a listen opened before
				// that sees it working first, one opened after does not;
				// both routes are asked after it.
				for _, s := range sides {
					tasktest.WaitStatus(t, s.url, "writer", s.ids["ask-unasked"], "failed")
				}
			}
			if sc.name == "done-before" {
				for _, s := range sides {
					finish("a")(t, s)
					tasktest.WaitStatus(t, s.url, "", s.ids["a"], "completed")
				}
			}
			if store != nil {
				store.down.Store(true)
			}
			meta := sc.meta
			if meta == "" {
				meta = taskMeta
			}
			before := fastH.FastPathRequests()
			streams := make([]*heldStream, 2)
			for i, s := range sides {
				ids := sc.ids
				for label, id := range s.ids {
					ids = strings.ReplaceAll(ids, `"`+label+`"`, `"`+id+`"`)
				}
				id := sc.id
				if id == "" {
					id = "7"
				}
				body := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":{` + sc.notes + `"taskIds":` + ids + `},` + meta + `}}`
				streams[i] = openListen(t, s.url, sc.authz, body)
			}
			fast, sdk := streams[0], streams[1]
			var held bool // the edge held the listen
			if sc.end == "" {
				fast.until(t, "edge", "subscriptions/acknowledged")
				sdk.until(t, "sdk", "subscriptions/acknowledged")
				held = fastH.FastPathRequests()-before == 1
				for _, st := range sc.steps {
					for i, s := range sides {
						st.do(t, s)
						if st.want != "" {
							streams[i].until(t, []string{"edge", "sdk"}[i], st.want)
						}
					}
				}
				fast.cancel()
				sdk.cancel()
				waitFor(t, func() bool { return fastH.Load().Streams == 0 && sdkH.Load().Streams == 0 })
			} else {
				fast.until(t, "edge", "")
				sdk.until(t, "sdk", "")
				held = fastH.FastPathRequests()-before == 1
			}
			got, want := taskTranscript(fast, sides[0].ids, sc.sorted), taskTranscript(sdk, sides[1].ids, sc.sorted)
			if fast.status != sdk.status || got != want || !headersEqual(fast.header, sdk.header) {
				t.Errorf("edge: %d %v\n%s\nsdk:  %d %v\n%s", fast.status, fast.header, got, sdk.status, sdk.header, want)
			}
			if sc.down && !strings.Contains(got, `"code":-32603`) {
				t.Errorf("with the store down, the listen was answered\n%s\nwant the store's error", got)
			}
			// Every step's line shows on the edge's stream too.
			for _, st := range sc.steps {
				if st.want != "" && !strings.Contains(got, st.want) {
					t.Errorf("the edge's stream has no %q:\n%s", st.want, got)
				}
			}
			if held != sc.held {
				t.Errorf("the edge held the listen: %v, want %v", held, sc.held)
			}
			if sdkH.FastPathRequests() != 0 {
				t.Error("the handler with DisableFastPath held a listen")
			}
		})
	}
}

// startJob starts the job labelled label as token, declaring the tasks
// extension and, unless label is "ask-unasked", elicitation; it returns
// the task's id.
func startJob(t *testing.T, url, token, label string) string {
	t.Helper()
	if label != "ask-unasked" {
		return tasktest.StartTask(t, url, token, "job", map[string]any{"label": label})
	}
	caps := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	_, body, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{"label": label}, "_meta": mcptest.Meta(caps)}, token))
	res, _ := msg["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if id == "" {
		t.Fatalf("starting %s: %s", label, body)
	}
	return id
}

// taskTranscript is s's transcript with each task's id named by its
// label in ids; when sorted, the acknowledgement's task ids and the
// tasks' first states in their labels' order.
func taskTranscript(s *heldStream, ids map[string]string, sorted bool) string {
	h := s.header.Clone()
	body := strings.Join(s.read, "")
	mcptest.Unframe(h, body)
	for label, id := range ids {
		body = strings.ReplaceAll(body, `"taskId":"`+id+`"`, `"taskId":<`+label+`>`)
		body = strings.ReplaceAll(body, `"`+id+`"`, `<`+label+`>`)
	}
	body = mask(body, h)
	if !sorted {
		return body
	}
	ack := regexp.MustCompile(`"taskIds":\[([^\]]*)\]`)
	body = ack.ReplaceAllStringFunc(body, func(m string) string {
		list := ack.FindStringSubmatch(m)[1]
		labels := strings.Split(list, ",")
		slices.Sort(labels)
		return `"taskIds":[` + strings.Join(labels, ",") + `]`
	})
	return sortFirstStates(body)
}

// sortFirstStates returns the transcript b with the events after the
// acknowledgement that tell a task's "working" state sorted.
func sortFirstStates(b string) string {
	events := strings.SplitAfter(b, "\n\n")
	var first []string
	var at []int
	for i, ev := range events {
		if strings.Contains(ev, `"status":"working"`) {
			first = append(first, ev)
			at = append(at, i)
		}
	}
	slices.Sort(first)
	for k, i := range at {
		events[i] = first[k]
	}
	return strings.Join(events, "")
}

// downStore is a task store whose Get fails while down.
type downStore struct {
	tasks.Store
	down atomic.Bool
}

func (s *downStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	if s.down.Load() {
		return nil, errors.New("the store is down")
	}
	return s.Store.Get(ctx, id)
}

// TestListenTasksDifferentialShutdown: a server whose base context ends
// (its shutdown) ends a listen following a task alike on the edge and the
// SDK's route (TestListenDifferentialShutdown's rule: the SDK's route may
// lose the result, racing the connection's end; the edge writes it).
func TestListenTasksDifferentialShutdown(t *testing.T) {
	serveCancellable := func(disable bool) (*taskSide, context.CancelFunc) {
		j := newJobs(t)
		h, err := mcpexpose.NewHandler(jobSnap(t, j), &mcpexpose.HandlerOptions{DisableFastPath: disable,
			Server: &mcpexpose.ServerOptions{Tasks: &mcpexpose.TaskOptions{Heartbeat: time.Hour}},
			Limits: &mcpexpose.Limits{StreamKeepAlive: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		base, cancel := context.WithCancel(context.Background())
		srv := httptest.NewUnstartedServer(h)
		srv.Config.BaseContext = func(net.Listener) context.Context { return base }
		srv.Start()
		t.Cleanup(srv.Close)
		s := &taskSide{h: h, url: srv.URL + "/mcp", ids: map[string]string{}, jobs: j}
		s.ids["a"] = startJob(t, s.url, "", "a")
		return s, cancel
	}
	fastSide, fastEnd := serveCancellable(false)
	sdkSide, sdkEnd := serveCancellable(true)
	open := func(s *taskSide) *heldStream {
		return openListen(t, s.url, "", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["`+s.ids["a"]+`"]},`+taskMeta+`}}`)
	}
	before := fastSide.h.FastPathRequests()
	fast, sdk := open(fastSide), open(sdkSide)
	fast.until(t, "edge", `"status":"working"`)
	sdk.until(t, "sdk", `"status":"working"`)
	if fastSide.h.FastPathRequests() != before+1 {
		t.Fatal("the edge did not hold the listen")
	}
	fastEnd()
	sdkEnd()
	fast.until(t, "edge", "")
	sdk.until(t, "sdk", "")
	got, want := taskTranscript(fast, fastSide.ids, false), taskTranscript(sdk, sdkSide.ids, false)
	if got != want && !(strings.HasPrefix(got, want) && !strings.Contains(want, `"result"`) && strings.Contains(got[len(want):], `"result":{"resultType":"complete"`)) {
		t.Errorf("edge:\n%s\nsdk:\n%s", got, want)
	}
	if !strings.Contains(got, `"result":{"resultType":"complete"`) {
		t.Errorf("the edge ended a listen on shutdown without its result:\n%s", got)
	}
}
