package execution_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
)

// Store is a dependency whose constructions and cleanups are counted.
type Store struct {
	users map[string]string
}

// counters records what ran during an invocation.
type counters struct {
	handler  atomic.Int32
	built    atomic.Int32
	cleaned  atomic.Int32
	mu       sync.Mutex
	sequence []string
}

func (c *counters) log(event string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sequence = append(c.sequence, event)
}

func (c *counters) events() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sequence...)
}

// provideStore registers a per-invocation *Store whose constructions and
// cleanups are counted.
func provideStore(reg *di.Registry, c *counters) {
	di.ProvidePerInvocation(reg, func() (*Store, func()) {
		c.built.Add(1)
		c.log("build store")
		return &Store{users: map[string]string{"u1": "Ada"}}, func() {
			c.cleaned.Add(1)
			c.log("clean store")
		}
	})
}

// logBuffer is a thread-safe buffer for a JSON slog handler.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records decodes every JSON log record written so far.
func (b *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func newLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// compileOne compiles app and returns the plan of c.
func compileOne(t *testing.T, app *agnara.App, c *agnara.Capability) *execution.Plan {
	t.Helper()
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	p, ok := plans.Plan(c)
	if !ok {
		t.Fatalf("no plan for %s", c)
	}
	return p
}

// mustFailure asserts that out is a failure with the given code.
func mustFailure(t *testing.T, out execution.Outcome, err error, code execution.Code) *execution.Failure {
	t.Helper()
	if err != nil {
		t.Fatalf("Invoke error = %v, want outcome %s", err, code)
	}
	f, ok := out.(*execution.Failure)
	if !ok {
		t.Fatalf("outcome = %#v, want failure %s", out, code)
	}
	if f.Code != code {
		t.Fatalf("failure = %v (details %v), want code %s", f, f.Details, code)
	}
	return f
}

func mustSuccess(t *testing.T, out execution.Outcome, err error) execution.Success {
	t.Helper()
	if err != nil {
		t.Fatalf("Invoke error = %v, want success", err)
	}
	s, ok := out.(execution.Success)
	if !ok {
		t.Fatalf("outcome = %v, want success", out)
	}
	return s
}

func violations(t *testing.T, f *execution.Failure) []execution.Violation {
	t.Helper()
	vs, ok := f.Details["violations"].([]execution.Violation)
	if !ok {
		t.Fatalf("details %v have no violations", f.Details)
	}
	return vs
}

var bg = context.Background()

// invokeOK invokes p with inv and asserts success.
func invokeOK(t *testing.T, p *execution.Plan, inv *execution.Invocation) execution.Success {
	t.Helper()
	out, err := p.Invoke(bg, inv)
	return mustSuccess(t, out, err)
}
