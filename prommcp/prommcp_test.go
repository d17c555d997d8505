package prommcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
	"github.com/agnara-go/agnara/prommcp"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var (
	requester = policy.NewPrincipal("alice", []string{"docs:write"}).WithIssuer("https://idp.example")
	approver  = policy.NewPrincipal("bob", []string{approval.DefaultApproverScope}).WithIssuer("https://idp.example")
)

type PingInput struct{}

type ReportInput struct {
	Month string `json:"month"`
}

// fixture is a real server with metrics: the approval tools (whose
// decisions ask for a confirmation) over a SQLite approval store, a
// rate-limited tool and a task tool, served on loopback HTTP with its
// /metrics on a listener of its own.
type fixture struct {
	url, metrics string
	store        approval.Store
	release      chan struct{} // lets the task's handler finish
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	m, err := prommcp.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	prommcp.CountDecisionsAtEachScrape(m) // each step scrapes right after it acts
	sqlite, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlite.Close() })
	f := &fixture{store: m.Approvals(sqlite), release: make(chan struct{})}

	app := agnara.New("shop", nil)
	caps := approval.RegisterTools(app, f.store, nil)
	ping := app.Capability(func(context.Context, PingInput) (string, error) { return "pong", nil },
		&agnara.CapabilityOptions{Name: "ping", Description: "Answers pong.", RateLimit: agnara.RateLimit{Rate: 0.001, Burst: 1}})
	report := app.Capability(func(ctx context.Context, in ReportInput) (string, error) {
		select {
		case <-f.release:
			return "report for " + in.Month, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, &agnara.CapabilityOptions{Name: "report", Description: "Builds a report."})
	exp := mcpexpose.New(app)
	for _, c := range caps {
		exp.Tool(c, &mcpexpose.ToolOptions{Name: c.Name()})
	}
	exp.Tool(ping, &mcpexpose.ToolOptions{Name: "ping"})
	exp.Tool(report, &mcpexpose.ToolOptions{Name: "report", Task: mcpexpose.TaskOptional})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{
		Server: &mcpexpose.ServerOptions{
			Meter:                m,
			DevelopmentPrincipal: &approver,
			Swappable:            true, // serves subscriptions/listen
			Tasks:                &mcpexpose.TaskOptions{Store: m.Tasks(tasks.NewMemory(nil))},
		},
		Limits: &mcpexpose.Limits{MaxSessions: 1, MaxStreams: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Handler(h); err != nil {
		t.Fatal(err)
	}
	if err := m.Handler(h); err == nil {
		t.Error("a second Handler was accepted")
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ms := httptest.NewServer(m.HTTPHandler())
	t.Cleanup(ms.Close)
	f.url, f.metrics = srv.URL, ms.URL
	return f
}

// scrape reads every sample of the metrics endpoint, by series:
// name{label="value",...}, labels sorted; a histogram by its _count.
func (f *fixture) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	resp, err := http.Get(f.metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, fam := range families {
		for _, mt := range fam.Metric {
			key := series(name, mt.Label)
			switch {
			case mt.Counter != nil:
				out[key] = mt.Counter.GetValue()
			case mt.Gauge != nil:
				out[key] = mt.Gauge.GetValue()
			case mt.Histogram != nil:
				out[series(name+"_count", mt.Label)] = float64(mt.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

func series(name string, labels []*dto.LabelPair) string {
	parts := make([]string, 0, len(labels))
	for _, l := range labels {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	slices.Sort(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

// connect connects the SDK client at version, answering every question
// with a confirmation.
func (f *fixture) connect(t *testing.T, version string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "metrics-test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func (f *fixture) call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// post sends one 2026-07-28 request from a client declaring the tasks
// extension, and returns the response message.
func (f *fixture) post(t *testing.T, method, name string, params map[string]any) map[string]any {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "metrics-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{mcpversion.TasksExtension: map[string]any{}}},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", f.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(string(data)) {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatalf("%s: %v in %s", method, err, data)
	}
	return msg
}

// listen opens a subscriptions/listen stream and returns its status; an
// open stream is held, its acknowledgement read, until the test ends.
func (f *fixture) listen(t *testing.T) int {
	t.Helper()
	params := map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": mcptest.Meta(nil)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(mcptest.Request(t, f.url, "subscriptions/listen", params, "").WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode == http.StatusOK {
		events := bufio.NewReader(resp.Body)
		line, err := events.ReadString('\n')
		for err == nil && !strings.HasPrefix(line, "data: ") {
			line, err = events.ReadString('\n')
		}
		if err != nil {
			t.Fatalf("listen: %v before the acknowledgement", err)
		}
	}
	return resp.StatusCode
}

func intent(t *testing.T, key string) approval.Intent {
	t.Helper()
	args := `{"doc":"q3"}`
	digest, err := execution.ArgumentsDigest(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return approval.Intent{
		Binding: approval.Binding{Tool: "gw.update_document", ID: "documents", Revision: "sha256:" + strings.Repeat("1", 64),
			ScopeID: "documents", ScopeRevision: "1", Effect: approval.EffectWrite},
		PrincipalID: requester.ID(), PrincipalIssuer: requester.Issuer(),
		Arguments: json.RawMessage(args), ArgumentsDigest: digest, IdempotencyKey: key, Summary: "Update document",
	}
}

// TestSeriesMove is the floor: while a confirmation, a rate-limited call,
// an approval (decided through the server, then dispatched) and a task
// happen on a real server, every series each one names moves by what it
// should, read from the /metrics endpoint.
func TestSeriesMove(t *testing.T) {
	f := newFixture(t)
	modern, err := f.connect(t, "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	var pending approval.Approval
	steps := []struct {
		name string
		do   func(t *testing.T)
		want map[string]float64 // series → how much it moved
	}{{
		name: "an approval is asked for",
		do: func(t *testing.T) {
			if pending, err = f.store.Prepare(context.Background(), intent(t, "k1")); err != nil {
				t.Fatal(err)
			}
		},
		want: map[string]float64{`agnara_approvals_pending{}`: 1},
	}, {
		name: "the approver confirms and approves through the server",
		do: func(t *testing.T) {
			res := f.call(t, modern, "approvals_approve", map[string]any{"id": pending.ID})
			if res.IsError {
				t.Fatalf("approve: %+v", res.Content[0])
			}
		},
		want: map[string]float64{
			`agnara_mcp_calls_total{outcome="input_required",reason="",tool="approvals_approve"}`: 1,
			`agnara_mcp_calls_total{outcome="ok",reason="",tool="approvals_approve"}`:             1,
			`agnara_mcp_call_duration_seconds_count{tool="approvals_approve"}`:                    2,
			`agnara_mcp_input_required_rounds_total{tool="approvals_approve"}`:                    1,
			`agnara_approvals_decided_total{decision="approved"}`:                                 1,
			`agnara_approvals_pending{}`:                                                          -1,
		},
	}, {
		name: "the write is dispatched",
		do: func(t *testing.T) {
			ctx := context.Background()
			if _, err := f.store.Claim(ctx, pending.ID, pending.Intent.Binding); err != nil {
				t.Fatal(err)
			}
			if _, err := f.store.Complete(ctx, pending.ID, approval.Receipt{Effect: approval.EffectCommitted, Result: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.store.Claim(ctx, pending.ID, pending.Intent.Binding); err == nil {
				t.Fatal("a second claim succeeded")
			}
		},
		want: map[string]float64{
			`agnara_approvals_dispatched_total{}`:                  1,
			`agnara_approvals_completed_total{effect="committed"}`: 1,
		},
	}, {
		name: "a call over its rate limit",
		do: func(t *testing.T) {
			if res := f.call(t, modern, "ping", map[string]any{}); res.IsError {
				t.Fatalf("first ping refused: %+v", res.Content[0])
			}
			if res := f.call(t, modern, "ping", map[string]any{}); !res.IsError {
				t.Fatal("second ping within the burst of 1 was not refused")
			}
		},
		want: map[string]float64{
			`agnara_mcp_calls_total{outcome="ok",reason="",tool="ping"}`:                      1,
			`agnara_mcp_calls_total{outcome="unavailable",reason="rate_limited",tool="ping"}`: 1,
			`agnara_mcp_call_duration_seconds_count{tool="ping"}`:                             2,
			`agnara_mcp_rate_limited_total{method="tools/call"}`:                              1,
		},
	}, {
		name: "a forged request state",
		do: func(t *testing.T) {
			msg := f.post(t, "tools/call", "approvals_approve", map[string]any{"name": "approvals_approve", "arguments": map[string]any{"id": pending.ID},
				"requestState": "forged", "inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
			if msg["error"] == nil {
				t.Fatalf("forged state answered %v", msg)
			}
		},
		want: map[string]float64{
			`agnara_mcp_request_state_refused_total{method="tools/call"}`:                1,
			`agnara_mcp_calls_total{outcome="error",reason="",tool="approvals_approve"}`: 1,
			`agnara_mcp_call_duration_seconds_count{tool="approvals_approve"}`:           1,
		},
	}, {
		name: "a task runs to completion",
		do: func(t *testing.T) {
			created := f.post(t, "tools/call", "report", map[string]any{"name": "report", "arguments": map[string]any{"month": "2026-11"}})
			res, _ := created["result"].(map[string]any)
			id, _ := res["taskId"].(string)
			if id == "" {
				t.Fatalf("no task created: %v", created)
			}
			close(f.release)
			deadline := time.Now().Add(30 * time.Second)
			for {
				got := f.post(t, "tasks/get", id, map[string]any{"taskId": id})
				if r, _ := got["result"].(map[string]any); r["status"] == "completed" {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the task did not complete within 30s: %v", got)
				}
				time.Sleep(10 * time.Millisecond) // polling, as a client does
			}
		},
		want: map[string]float64{
			`agnara_tasks_status_total{status="working"}`:           1,
			`agnara_tasks_status_total{status="completed"}`:         1,
			`agnara_mcp_call_duration_seconds_count{tool="report"}`: 1,
		},
	}, {
		name: "a session past the cap",
		do: func(t *testing.T) {
			if _, err := f.connect(t, "2025-11-25"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.connect(t, "2025-11-25"); err == nil {
				t.Fatal("a second session past MaxSessions 1 was opened")
			}
		},
		want: map[string]float64{
			`agnara_mcp_sessions{}`:                    1,
			`agnara_mcp_refused_total{kind="session"}`: 1,
		},
	}, {
		name: "a listen stream past the cap",
		do: func(t *testing.T) {
			if code := f.listen(t); code != http.StatusOK {
				t.Fatalf("first listen: %d", code)
			}
			if code := f.listen(t); code != http.StatusServiceUnavailable {
				t.Fatalf("second listen past MaxStreams 1: %d, want 503", code)
			}
		},
		want: map[string]float64{
			`agnara_mcp_streams{}`:                    1,
			`agnara_mcp_refused_total{kind="stream"}`: 1,
		},
	}}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := f.scrape(t)
			st.do(t)
			// What a step waits for (a task's state, an answer) can be seen
			// before the series that counts it moves (the task store's
			// wrapper counts after the store has written): so the scrape is
			// read until the series move as wanted, or 20 s have passed.
			var after, got map[string]float64
			for deadline := time.Now().Add(20 * time.Second); ; {
				after = f.scrape(t)
				got = map[string]float64{}
				for k := range st.want {
					got[k] = after[k] - before[k]
				}
				if cmp.Equal(st.want, got) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			for k := range st.want {
				if _, ok := after[k]; !ok {
					t.Errorf("series %s is not in the scrape", k)
				}
			}
			if diff := cmp.Diff(st.want, got); diff != "" {
				t.Errorf("series moved (-want +got):\n%s", diff)
			}
		})
	}
	final := f.scrape(t)
	for k, want := range map[string]float64{`agnara_mcp_sessions_max{}`: 1, `agnara_mcp_streams_max{}`: 1} {
		if final[k] != want {
			t.Errorf("%s = %v, want %v", k, final[k], want)
		}
	}
}
