package execution_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
)

type GetUserInput struct {
	ID      string `json:"id" jsonschema:"minLength=1"`
	Verbose bool   `json:"verbose,omitempty"`
	Limit   int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=10"`
}

type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// usersApp registers GetUser: func(context.Context, In, *Store) (Out, error).
func usersApp(c *counters, logs *logBuffer) (*agnara.App, *agnara.Capability) {
	reg := di.NewRegistry()
	provideStore(reg, c)
	opts := &agnara.Options{Dependencies: reg}
	if logs != nil {
		opts.Logger = newLogger(logs)
	}
	app := agnara.New("users", opts)
	getUser := func(ctx context.Context, in GetUserInput, s *Store) (User, error) {
		c.handler.Add(1)
		name, ok := s.users[in.ID]
		if !ok {
			return User{}, execution.Fail(execution.NotFound, "no such user", map[string]any{"id": in.ID})
		}
		return User{ID: in.ID, Name: name}, nil
	}
	cap := app.Capability(getUser, &agnara.CapabilityOptions{Name: "get_user", Description: "Look up a user."})
	return app, cap
}

func TestInvokeSuccess(t *testing.T) {
	var c counters
	app, cap := usersApp(&c, nil)
	p := compileOne(t, app, cap)
	out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(`{"id":"u1"}`)})
	s := mustSuccess(t, out, err)
	if diff := cmp.Diff(User{ID: "u1", Name: "Ada"}, s.Value); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	if c.handler.Load() != 1 || c.built.Load() != 1 || c.cleaned.Load() != 1 {
		t.Errorf("handler=%d built=%d cleaned=%d, want 1 1 1", c.handler.Load(), c.built.Load(), c.cleaned.Load())
	}
	out, err = p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(`{"id":"nobody"}`)})
	f := mustFailure(t, out, err, execution.NotFound)
	if f.Message != "no such user" || f.Details["id"] != "nobody" {
		t.Errorf("failure = %+v, want the handler's own", f)
	}
}

func TestInvokeInvalidInput(t *testing.T) {
	tests := []struct {
		name string
		args string
		want []execution.Violation
	}{
		{"unknown key", `{"id":"u1","nickname":"x"}`, []execution.Violation{
			{Path: "/nickname", Message: "unknown field"}}},
		{"wrong type", `{"id":42}`, []execution.Violation{
			{Path: "/id", Message: "want string, got number"}}},
		{"missing required", `{"verbose":true}`, []execution.Violation{
			{Path: "/id", Message: "required field is missing"}}},
		{"key named like the dependency", `{"id":"u1","store":{}}`, []execution.Violation{
			{Path: "/store", Message: "unknown field"}}},
		{"key named like the dependency type", `{"id":"u1","Store":{}}`, []execution.Violation{
			{Path: "/Store", Message: "unknown field"}}},
		{"case matters", `{"ID":"u1"}`, []execution.Violation{
			{Path: "/ID", Message: "unknown field"},
			{Path: "/id", Message: "required field is missing"}}},
		{"all at once", `{"verbose":"yes","limit":0,"s":1}`, []execution.Violation{
			{Path: "/id", Message: "required field is missing"},
			{Path: "/limit", Message: "must be >= 1"},
			{Path: "/s", Message: "unknown field"},
			{Path: "/verbose", Message: "want boolean, got string"}}},
		{"not an object", `[1,2]`, []execution.Violation{
			{Path: "", Message: "want object, got array"}}},
		{"not JSON", `{"id":`, []execution.Violation{
			{Path: "", Message: "arguments are not valid JSON"}}},
		{"trailing data", `{"id":"u1"} {}`, []execution.Violation{
			{Path: "", Message: "arguments are not valid JSON"}}},
		{"too short", `{"id":""}`, []execution.Violation{
			{Path: "/id", Message: "must not be empty"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c counters
			app, cap := usersApp(&c, nil)
			p := compileOne(t, app, cap)
			out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(tt.args)})
			f := mustFailure(t, out, err, execution.InvalidInput)
			if diff := cmp.Diff(tt.want, violations(t, f)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if c.handler.Load() != 0 || c.built.Load() != 0 {
				t.Errorf("handler ran %d times, dependency built %d times; want 0 and 0", c.handler.Load(), c.built.Load())
			}
		})
	}
}

func TestInvalidInputMessagesDoNotEchoValues(t *testing.T) {
	type In struct {
		Email string `json:"email" jsonschema:"format=email"`
		Code  string `json:"code" jsonschema:"pattern=^[0-9]+$"`
		Kind  string `json:"kind" jsonschema:"enum=a,enum=b"`
	}
	app := agnara.New("app", nil)
	cap := app.Capability(func(In) error { return nil }, &agnara.CapabilityOptions{Name: "c"})
	p := compileOne(t, app, cap)
	const secret = "hunter2-secret"
	args := fmt.Sprintf(`{"email":%q,"code":%q,"kind":%q}`, secret, secret, secret)
	out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(args)})
	f := mustFailure(t, out, err, execution.InvalidInput)
	got, _ := json.Marshal(f)
	if strings.Contains(string(got), secret) || strings.Contains(f.Message, secret) {
		t.Errorf("failure echoes the caller's value: %s", got)
	}
	want := []execution.Violation{
		{Path: "/code", Message: "does not match the pattern ^[0-9]+$"},
		{Path: "/email", Message: "is not a valid email"},
		{Path: "/kind", Message: `must be one of "a", "b"`},
	}
	if diff := cmp.Diff(want, violations(t, f)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

func TestInvalidInputIsBounded(t *testing.T) {
	var c counters
	app, cap := usersApp(&c, nil)
	p := compileOne(t, app, cap)
	var b strings.Builder
	b.WriteString(`{"id":"u1"`)
	for i := range 500 {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	b.WriteString("}")
	out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(b.String())})
	f := mustFailure(t, out, err, execution.InvalidInput)
	if n := len(violations(t, f)); n != 64 || f.Details["truncated"] != true {
		t.Errorf("got %d violations, truncated=%v; want 64 and true", n, f.Details["truncated"])
	}
}

func TestEmptyArguments(t *testing.T) {
	var ran int
	app := agnara.New("app", nil)
	cap := app.Capability(func(context.Context) error { ran++; return nil }, &agnara.CapabilityOptions{Name: "noop"})
	p := compileOne(t, app, cap)
	for _, args := range []string{"", "null", " {} "} {
		out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(args)})
		if s := mustSuccess(t, out, err); s.Value != nil {
			t.Errorf("args %q: value = %v, want nil", args, s.Value)
		}
	}
	out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(`{"x":1}`)})
	mustFailure(t, out, err, execution.InvalidInput)
	if ran != 3 {
		t.Errorf("handler ran %d times, want 3", ran)
	}
	if _, err := p.Invoke(bg, nil); err != nil {
		t.Errorf("Invoke(nil invocation) = %v", err)
	}
}

func TestScopeGuard(t *testing.T) {
	var c counters
	reg := di.NewRegistry()
	provideStore(reg, &c)
	app := agnara.New("users", &agnara.Options{Dependencies: reg, Scopes: policy.Scopes{Implies: policy.Hierarchy(":")}})
	cap := app.Capability(func(ctx context.Context, in GetUserInput, s *Store) (User, error) {
		c.handler.Add(1)
		return User{}, nil
	}, &agnara.CapabilityOptions{Name: "get_user", Scopes: []string{"users:read", "audit"}})
	p := compileOne(t, app, cap)
	tests := []struct {
		name      string
		principal policy.Principal
		args      string
		allowed   bool
	}{
		{"anonymous", policy.Anonymous(), `{"id":"u1"}`, false},
		{"one of two scopes", policy.NewPrincipal("p", []string{"users:read"}), `{"id":"u1"}`, false},
		{"denied before input is checked", policy.NewPrincipal("p", []string{"audit"}), `{"bogus":1}`, false},
		{"both scopes", policy.NewPrincipal("p", []string{"users:read", "audit"}), `{"id":"u1"}`, true},
		{"implied by a broader scope", policy.NewPrincipal("p", []string{"users", "audit"}), `{"id":"u1"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c.handler.Load()
			out, err := p.Invoke(bg, &execution.Invocation{Principal: tt.principal, Arguments: json.RawMessage(tt.args)})
			if p.Allows(tt.principal) != tt.allowed {
				t.Errorf("Allows = %v, want %v", !tt.allowed, tt.allowed)
			}
			if tt.allowed {
				mustSuccess(t, out, err)
				return
			}
			f := mustFailure(t, out, err, execution.Forbidden)
			if diff := cmp.Diff([]string{"users:read", "audit"}, f.Details["required_scopes"]); diff != "" {
				t.Errorf("required_scopes (-want +got):\n%s", diff)
			}
			if c.handler.Load() != before {
				t.Error("handler ran for a caller without the scopes")
			}
		})
	}
	if c.built.Load() != 2 {
		t.Errorf("store built %d times, want 2 (only for allowed calls)", c.built.Load())
	}
}

func TestPolicies(t *testing.T) {
	errBoom := errors.New("policy backend password=secret unreachable")
	tests := []struct {
		name     string
		policy   policy.Func
		wantCode execution.Code
		wantMsg  string
	}{
		{"allow", func(context.Context, policy.Request) error { return nil }, 0, ""},
		{"deny", func(context.Context, policy.Request) error { return policy.Deny("not your user") }, execution.Forbidden, "not your user"},
		{"wrapped deny", func(context.Context, policy.Request) error {
			return fmt.Errorf("checking: %w", policy.Deny("outside office hours"))
		}, execution.Forbidden, "outside office hours"},
		{"canonical failure", func(context.Context, policy.Request) error {
			return execution.Fail(execution.Conflict, "account locked", nil)
		}, execution.Conflict, "account locked"},
		{"other error", func(context.Context, policy.Request) error { return errBoom }, execution.InternalFailure, "internal failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c counters
			var logs logBuffer
			reg := di.NewRegistry()
			provideStore(reg, &c)
			app := agnara.New("users", &agnara.Options{Dependencies: reg, Logger: newLogger(&logs)})
			var seen policy.Request
			record := policy.Func(func(_ context.Context, r policy.Request) error { seen = r; return nil })
			cap := app.Capability(func(ctx context.Context, in GetUserInput, s *Store) error {
				c.handler.Add(1)
				return nil
			}, &agnara.CapabilityOptions{Name: "touch", Policies: []policy.Policy{record, tt.policy}})
			p := compileOne(t, app, cap)
			principal := policy.NewPrincipal("alice", nil)
			out, err := p.Invoke(bg, &execution.Invocation{Principal: principal, Arguments: json.RawMessage(`{"id":"u1"}`)})
			if in, ierr := seen.Input(); seen.Capability != "users.touch" || seen.Principal.ID() != "alice" || ierr != nil || in != (GetUserInput{ID: "u1"}) {
				t.Errorf("policy saw %+v, input %v, %v", seen, in, ierr)
			}
			if tt.wantMsg == "" {
				mustSuccess(t, out, err)
				return
			}
			f := mustFailure(t, out, err, tt.wantCode)
			if f.Message != tt.wantMsg {
				t.Errorf("message = %q, want %q", f.Message, tt.wantMsg)
			}
			if c.handler.Load() != 0 || c.built.Load() != 0 {
				t.Errorf("handler=%d built=%d after refusal, want 0 0", c.handler.Load(), c.built.Load())
			}
			if tt.wantCode == execution.InternalFailure && !strings.Contains(logs.String(), "password=secret") {
				t.Errorf("cause not logged: %s", logs.String())
			}
		})
	}
}

func TestConfirmation(t *testing.T) {
	var c counters
	reg := di.NewRegistry()
	provideStore(reg, &c)
	app := agnara.New("users", &agnara.Options{Dependencies: reg})
	cap := app.Capability(func(ctx context.Context, in GetUserInput, s *Store) error {
		c.handler.Add(1)
		return nil
	}, &agnara.CapabilityOptions{Name: "delete_user", Confirm: "Delete this user?"})
	var seenDigest string
	verifier := policy.VerifyFunc(func(ctx context.Context, req policy.Request, d string, ev policy.Confirmation) error {
		seenDigest = d
		return policy.Bound{}.VerifyConfirmation(ctx, req, d, ev)
	})
	capV := app.Capability(func(ctx context.Context, in GetUserInput, s *Store) error {
		c.handler.Add(1)
		return nil
	}, &agnara.CapabilityOptions{Name: "delete_user_v", Confirm: "Delete this user?", ConfirmationVerifier: verifier})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Plan(cap)
	pv, _ := plans.Plan(capV)
	args := json.RawMessage(`{"id":"u1"}`)
	digest, err := execution.ArgumentsDigest(args)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := execution.ArgumentsDigest(json.RawMessage(`{"id":"u2"}`))

	out, err := p.Invoke(bg, &execution.Invocation{Arguments: args})
	if out, ok := out.(*execution.InputRequired); !ok || err != nil {
		t.Fatalf("first round = %#v, %v; want input required", out, err)
	}
	want := map[string]execution.InputRequest{execution.ConfirmKey: {
		Kind:    execution.Elicitation,
		Message: "Delete this user?",
		Schema:  json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"}},"required":["confirm"]}`),
	}}
	if diff := cmp.Diff(want, out.(*execution.InputRequired).Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	answer := func(action, content string) map[string]execution.Answer {
		a := execution.Answer{Kind: execution.Elicitation, Action: action}
		if content != "" {
			a.Content = json.RawMessage(content)
		}
		return map[string]execution.Answer{execution.ConfirmKey: a}
	}
	tests := []struct {
		name    string
		answers map[string]execution.Answer
		digest  string // Invocation.ArgumentsDigest
		code    execution.Code
		ok      bool
	}{
		{"accepted", answer("accept", `{"confirm":true}`), "", 0, true},
		{"accepted, digest from the adapter", answer("accept", `{"confirm":true}`), digest, 0, true},
		{"said no", answer("accept", `{"confirm":false}`), "", execution.Forbidden, false},
		{"declined", answer("decline", ""), "", execution.Forbidden, false},
		{"cancelled", answer("cancel", ""), "", execution.Forbidden, false},
		{"accepted without content", answer("accept", ""), "", execution.InvalidInput, false},
		{"accepted with a string", answer("accept", `{"confirm":"yes"}`), "", execution.InvalidInput, false},
		{"not an action", answer("sure", ""), "", execution.InvalidInput, false},
		{"answered by sampling", map[string]execution.Answer{execution.ConfirmKey: {Kind: execution.Sampling}}, "", execution.InvalidInput, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c.handler.Load()
			seenDigest = ""
			// Same arguments written differently digest the same.
			out, err := pv.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(` { "id" : "u1" } `), Answers: tt.answers, ArgumentsDigest: tt.digest})
			if tt.ok {
				mustSuccess(t, out, err)
				if seenDigest != digest {
					t.Errorf("verifier saw digest %q, want %q", seenDigest, digest)
				}
				return
			}
			mustFailure(t, out, err, tt.code)
			if c.handler.Load() != before {
				t.Error("handler ran without valid confirmation")
			}
		})
	}
	t.Run("duplicate keys", func(t *testing.T) {
		// The schema validator keeps the last of repeated keys; the digest
		// the evidence is bound to refuses them, as bad input.
		out, err := pv.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(`{"id":"u2","id":"u1"}`), Answers: answer("accept", `{"confirm":true}`)})
		f := mustFailure(t, out, err, execution.InvalidInput)
		if !strings.Contains(f.Message, "duplicate") {
			t.Errorf("message %q does not say what is wrong", f.Message)
		}
	})
	_ = other
}

// A policy runs before the input is validated: a caller it denies is told
// forbidden whatever it sent, and learns nothing about the input's shape.
// A policy that reads the input gets it validated, once.
func TestPoliciesRunBeforeInputValidation(t *testing.T) {
	app := agnara.New("users", nil)
	var decoded int
	denyAll := policy.Func(func(context.Context, policy.Request) error { return policy.Deny("not today") })
	readTwice := policy.Func(func(_ context.Context, r policy.Request) error {
		a, err := r.Input()
		if err != nil {
			return err
		}
		b, _ := r.Input()
		if a != b {
			return errors.New("Input changed between calls")
		}
		decoded++
		return nil
	})
	handler := func(ctx context.Context, in GetUserInput) error { return nil }
	deniedCap := app.Capability(handler, &agnara.CapabilityOptions{Name: "denied", Policies: []policy.Policy{denyAll}})
	readsCap := app.Capability(handler, &agnara.CapabilityOptions{Name: "reads", Policies: []policy.Policy{readTwice}})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	denied, _ := plans.Plan(deniedCap)
	reads, _ := plans.Plan(readsCap)
	bad := json.RawMessage(`{"nope":1}`)

	out, err := denied.Invoke(bg, &execution.Invocation{Arguments: bad})
	if f := mustFailure(t, out, err, execution.Forbidden); f.Message != "not today" {
		t.Errorf("denied caller with bad input: %v", f)
	}
	out, err = reads.Invoke(bg, &execution.Invocation{Arguments: bad})
	mustFailure(t, out, err, execution.InvalidInput)
	out, err = reads.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(`{"id":"u1"}`)})
	mustSuccess(t, out, err)
	if decoded != 1 {
		t.Errorf("policy read a valid input %d times, want 1", decoded)
	}
}

// cancelApp registers a capability whose handler blocks until its context
// ends, with a per-invocation dependency whose cleanup is counted.
func blockingApp(c *counters, logs *logBuffer, timeout time.Duration, started chan<- struct{}) (*agnara.App, *agnara.Capability) {
	reg := di.NewRegistry()
	provideStore(reg, c)
	app := agnara.New("slow", &agnara.Options{Dependencies: reg, Logger: newLogger(logs)})
	cap := app.Capability(func(ctx context.Context, s *Store) error {
		c.handler.Add(1)
		c.log("handler")
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}, &agnara.CapabilityOptions{Name: "wait", Timeout: timeout})
	return app, cap
}

func TestCancellationPropagates(t *testing.T) {
	var c counters
	var logs logBuffer
	started := make(chan struct{})
	app, cap := blockingApp(&c, &logs, 0, started)
	p := compileOne(t, app, cap)
	ctx, cancel := context.WithCancel(bg)
	go func() { <-started; cancel() }()
	out, err := p.Invoke(ctx, nil)
	if !errors.Is(err, context.Canceled) || out != nil {
		t.Fatalf("Invoke = %v, %v; want nil outcome and context.Canceled", out, err)
	}
	if diff := cmp.Diff([]string{"build store", "handler", "clean store"}, c.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	recs := logs.records(t)
	if len(recs) != 1 || recs[0]["outcome"] != "canceled" {
		t.Errorf("log records = %v, want one with outcome canceled", recs)
	}
	// An invocation whose context already ended does nothing.
	out, err = p.Invoke(ctx, nil)
	if !errors.Is(err, context.Canceled) || out != nil || c.built.Load() != 1 {
		t.Errorf("Invoke on a cancelled context = %v, %v (built %d), want nothing to run", out, err, c.built.Load())
	}
}

func TestDeadlineIsTimeout(t *testing.T) {
	var c counters
	var logs logBuffer
	app, cap := blockingApp(&c, &logs, 10*time.Millisecond, make(chan struct{}))
	p := compileOne(t, app, cap)
	out, err := p.Invoke(bg, nil)
	f := mustFailure(t, out, err, execution.Timeout)
	if f.Details["timeout_ms"] != int64(10) {
		t.Errorf("details = %v", f.Details)
	}
	if diff := cmp.Diff([]string{"build store", "handler", "clean store"}, c.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestInvocationTimeout(t *testing.T) {
	var c counters
	var logs logBuffer
	app, cap := blockingApp(&c, &logs, time.Hour, make(chan struct{}))
	p := compileOne(t, app, cap)
	out, err := p.Invoke(bg, &execution.Invocation{Timeout: 10 * time.Millisecond})
	f := mustFailure(t, out, err, execution.Timeout)
	if f.Details["timeout_ms"] != int64(10) || c.cleaned.Load() != 1 {
		t.Errorf("details = %v, cleaned = %d; want the shorter, invocation timeout and cleanup", f.Details, c.cleaned.Load())
	}
}

// passedDeadline is a caller's context whose deadline has passed once
// passed is closed, whatever the clock says.
type passedDeadline struct {
	context.Context
	deadline time.Time
	passed   <-chan struct{}
}

func (c passedDeadline) Deadline() (time.Time, bool) { return c.deadline, true }
func (c passedDeadline) Done() <-chan struct{}       { return c.passed }
func (c passedDeadline) Err() error {
	select {
	case <-c.passed:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestParentDeadlineIsNotTimeoutOutcome(t *testing.T) {
	var c counters
	var logs logBuffer
	started := make(chan struct{})
	app, cap := blockingApp(&c, &logs, time.Hour, started)
	p := compileOne(t, app, cap)
	// The caller's deadline passes once the handler runs: a real 10 ms
	// timer could pass before Invoke starts, which then runs nothing.
	ctx := passedDeadline{Context: bg, deadline: time.Now().Add(time.Minute), passed: started}
	out, err := p.Invoke(ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) || out != nil {
		t.Fatalf("Invoke = %v, %v; want the caller's own deadline as an error", out, err)
	}
	if c.cleaned.Load() != 1 {
		t.Error("cleanup did not run")
	}
}

func TestPanicIsInternalFailure(t *testing.T) {
	var c counters
	var logs logBuffer
	reg := di.NewRegistry()
	provideStore(reg, &c)
	app := agnara.New("app", &agnara.Options{Dependencies: reg, Logger: newLogger(&logs)})
	cap := app.Capability(func(s *Store) error {
		c.log("handler")
		panic("index out of range: token=abc123")
	}, &agnara.CapabilityOptions{Name: "explode"})
	p := compileOne(t, app, cap)
	out, err := p.Invoke(bg, &execution.Invocation{Principal: policy.NewPrincipal("bob", nil)})
	f := mustFailure(t, out, err, execution.InternalFailure)
	if f.Message != "internal failure" || f.Details != nil {
		t.Errorf("failure = %+v, want the fixed safe message and no details", f)
	}
	if diff := cmp.Diff([]string{"build store", "handler", "clean store"}, c.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	recs := logs.records(t)
	if len(recs) != 2 {
		t.Fatalf("got %d log records, want 2 (cause, summary): %v", len(recs), recs)
	}
	if recs[0]["level"] != "ERROR" || recs[0]["panic"] != "index out of range: token=abc123" || !strings.Contains(recs[0]["stack"].(string), "TestPanicIsInternalFailure") {
		t.Errorf("cause record = %v", recs[0])
	}
	if recs[1]["outcome"] != "internal_failure" || recs[1]["principal"] != "bob" {
		t.Errorf("summary record = %v", recs[1])
	}
}

func TestErrorsAreRedacted(t *testing.T) {
	var logs logBuffer
	app := agnara.New("app", &agnara.Options{Logger: newLogger(&logs)})
	cap := app.Capability(func() error {
		return fmt.Errorf("query failed: %w", errors.New("dsn postgres://admin:pw@db"))
	}, &agnara.CapabilityOptions{Name: "query"})
	internal := app.Capability(func() error {
		return execution.Fail(execution.InternalFailure, "leaky detail", map[string]any{"x": 1})
	}, &agnara.CapabilityOptions{Name: "internal"})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*agnara.Capability{cap, internal} {
		p, _ := plans.Plan(c)
		out, err := p.Invoke(bg, nil)
		f := mustFailure(t, out, err, execution.InternalFailure)
		if f.Message != "internal failure" || f.Details != nil {
			t.Errorf("%s: failure = %+v, want the fixed safe message", c, f)
		}
	}
	if !strings.Contains(logs.String(), "postgres://admin:pw@db") {
		t.Errorf("cause missing from the error log: %s", logs.String())
	}
}

func TestOneLogLinePerInvocation(t *testing.T) {
	var c counters
	var logs logBuffer
	app, cap := usersApp(&c, &logs)
	p := compileOne(t, app, cap)
	alice := policy.NewPrincipal("alice", nil)
	for _, args := range []string{`{"id":"u1","verbose":true}`, `{"id":"sekrit-value"}`, `{"id":7}`} {
		if _, err := p.Invoke(bg, &execution.Invocation{Principal: alice, Arguments: json.RawMessage(args)}); err != nil {
			t.Fatal(err)
		}
	}
	recs := logs.records(t)
	var outcomes []string
	for _, r := range recs {
		if r["level"] != "INFO" || r["msg"] != "invocation finished" || r["capability"] != "users.get_user" || r["principal"] != "alice" {
			t.Errorf("record = %v", r)
		}
		if _, ok := r["duration"].(float64); !ok {
			t.Errorf("record has no duration: %v", r)
		}
		outcomes = append(outcomes, r["outcome"].(string))
	}
	if diff := cmp.Diff([]string{"ok", "not_found", "invalid_input"}, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if strings.Contains(logs.String(), "sekrit-value") {
		t.Errorf("an argument value reached the log: %s", logs.String())
	}
}

func TestCleanupOrder(t *testing.T) {
	type A struct{}
	type B struct{}
	var c counters
	reg := di.NewRegistry()
	di.ProvidePerInvocation(reg, func() (*A, func()) { c.log("build A"); return &A{}, func() { c.log("clean A") } })
	di.ProvidePerInvocation(reg, func(*A) (*B, func()) { c.log("build B"); return &B{}, func() { c.log("clean B") } })
	app := agnara.New("app", &agnara.Options{Dependencies: reg})
	cap := app.Capability(func(ctx context.Context, b *B, a *A) error { c.log("handler"); return nil }, &agnara.CapabilityOptions{Name: "both"})
	p := compileOne(t, app, cap)
	invokeOK(t, p, nil)
	want := []string{"build A", "build B", "handler", "clean B", "clean A"}
	if diff := cmp.Diff(want, c.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestDependencyFailure(t *testing.T) {
	type Conn struct{}
	var logs logBuffer
	var ran bool
	reg := di.NewRegistry()
	di.ProvidePerInvocation(reg, func() (*Conn, error) { return nil, errors.New("dial tcp 10.0.0.1: refused") })
	app := agnara.New("app", &agnara.Options{Dependencies: reg, Logger: newLogger(&logs)})
	cap := app.Capability(func(*Conn) error { ran = true; return nil }, &agnara.CapabilityOptions{Name: "use"})
	p := compileOne(t, app, cap)
	out, err := p.Invoke(bg, nil)
	mustFailure(t, out, err, execution.InternalFailure)
	if ran {
		t.Error("handler ran without its dependency")
	}
	if !strings.Contains(logs.String(), "10.0.0.1") {
		t.Errorf("cause not logged: %s", logs.String())
	}
}

func TestRawInput(t *testing.T) {
	app := agnara.New("app", nil)
	var got json.RawMessage
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	cap := app.Capability(func(ctx context.Context, raw json.RawMessage) (int, error) {
		got = raw
		return len(raw), nil
	}, &agnara.CapabilityOptions{Name: "search", InputSchema: schema})
	p := compileOne(t, app, cap)
	if string(p.InputSchema()) != string(schema) {
		t.Errorf("schema = %s, want it verbatim", p.InputSchema())
	}
	invokeOK(t, p, &execution.Invocation{Arguments: json.RawMessage(`{"q":"go","extra":1}`)})
	if string(got) != `{"q":"go","extra":1}` {
		t.Errorf("handler got %s", got)
	}
	out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(`{}`)})
	f := mustFailure(t, out, err, execution.InvalidInput)
	if diff := cmp.Diff([]execution.Violation{{Path: "/q", Message: "required field is missing"}}, violations(t, f)); diff != "" {
		t.Error(diff)
	}
}

func TestRawOutputSchema(t *testing.T) {
	app := agnara.New("app", nil)
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
	declared := app.Capability(func() (json.RawMessage, error) {
		return json.RawMessage(`{"n":1}`), nil
	}, &agnara.CapabilityOptions{Name: "declared", OutputSchema: schema})
	undeclared := app.Capability(func() (json.RawMessage, error) {
		return json.RawMessage(`[1]`), nil
	}, &agnara.CapabilityOptions{Name: "undeclared"})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Plan(declared)
	if string(p.OutputSchema()) != string(schema) {
		t.Errorf("declared output schema = %s, want it verbatim", p.OutputSchema())
	}
	if s := invokeOK(t, p, nil); string(s.Value.(json.RawMessage)) != `{"n":1}` {
		t.Errorf("value = %s", s.Value)
	}
	q, _ := plans.Plan(undeclared)
	if string(q.OutputSchema()) != `{}` {
		t.Errorf("undeclared output schema = %s, want {} (any value)", q.OutputSchema())
	}
}

func TestContentResult(t *testing.T) {
	app := agnara.New("app", nil)
	cap := app.Capability(func() ([]execution.Content, error) {
		return []execution.Content{execution.Text{Text: "hello"}, execution.Image{Data: []byte{1}, MIMEType: "image/png"}}, nil
	}, &agnara.CapabilityOptions{Name: "render"})
	p := compileOne(t, app, cap)
	if !registry.Facts(p).ReturnsContent || p.OutputSchema() != nil {
		t.Errorf("ReturnsContent = %v, OutputSchema = %s", registry.Facts(p).ReturnsContent, p.OutputSchema())
	}
	s := invokeOK(t, p, nil)
	if s.Value != nil || len(s.Content) != 2 || s.Content[0] != (execution.Text{Text: "hello"}) {
		t.Errorf("success = %+v", s)
	}
}

type progressRecorder struct {
	got []string
}

func (r *progressRecorder) ReportProgress(_ context.Context, progress, total float64, msg string) {
	r.got = append(r.got, fmt.Sprintf("%g/%g %s", progress, total, msg))
}

func TestExecutionContext(t *testing.T) {
	var appLogs, clientLogs logBuffer
	app := agnara.New("app", &agnara.Options{Logger: newLogger(&appLogs)})
	cap := app.Capability(func(ec *execution.Context) (string, error) {
		ec.Progress(1, 2, "half")
		ec.Logger().Info("working", "step", 1)
		if got, ok := execution.FromContext(context.WithValue(ec, otherKey{}, 1)); !ok || got != ec {
			return "", errors.New("FromContext lost the execution context")
		}
		return ec.Principal().ID() + "@" + ec.Capability(), nil
	}, &agnara.CapabilityOptions{Name: "who"})
	p := compileOne(t, app, cap)
	var progress progressRecorder
	s := invokeOK(t, p, &execution.Invocation{
		Principal:  policy.NewPrincipal("carol", nil),
		Progress:   &progress,
		LogHandler: slog.NewJSONHandler(&clientLogs, &slog.HandlerOptions{Level: slog.LevelWarn}),
	})
	if s.Value != "carol@app.who" {
		t.Errorf("value = %v", s.Value)
	}
	if diff := cmp.Diff([]string{"1/2 half"}, progress.got); diff != "" {
		t.Error(diff)
	}
	if !strings.Contains(appLogs.String(), `"msg":"working"`) || !strings.Contains(appLogs.String(), `"capability":"app.who"`) {
		t.Errorf("app log = %s", appLogs.String())
	}
	if clientLogs.String() != "" {
		t.Errorf("the client asked for warnings only but got: %s", clientLogs.String())
	}
	// Without a reporter, progress is a no-op.
	invokeOK(t, p, nil)
	if _, ok := execution.FromContext(bg); ok {
		t.Error("FromContext found an execution context in context.Background")
	}
}

func TestStdContextIsExecutionContext(t *testing.T) {
	app := agnara.New("app", nil)
	cap := app.Capability(func(ctx context.Context) (string, error) {
		ec, ok := execution.FromContext(ctx)
		if !ok {
			return "", errors.New("no execution context")
		}
		return ec.Principal().ID(), nil
	}, &agnara.CapabilityOptions{Name: "who"})
	p := compileOne(t, app, cap)
	s := invokeOK(t, p, &execution.Invocation{Principal: policy.NewPrincipal("dan", nil)})
	if s.Value != "dan" {
		t.Errorf("value = %v", s.Value)
	}
}

// A handler that ignores its deadline and returns success after it is
// answered timeout, never a late success; the overrun is logged.
func TestLateSuccessIsATimeout(t *testing.T) {
	var logs logBuffer
	app := agnara.New("app", &agnara.Options{Logger: newLogger(&logs)})
	release := make(chan struct{})
	cap := app.Capability(func(ctx context.Context) (string, error) {
		<-ctx.Done() // the deadline passed...
		<-release    // ...and the handler keeps going, then succeeds
		return "late", nil
	}, &agnara.CapabilityOptions{Name: "late", Timeout: 5 * time.Millisecond})
	p := compileOne(t, app, cap)
	close(release)
	out, err := p.Invoke(bg, nil)
	if f := mustFailure(t, out, err, execution.Timeout); f.Details["timeout_ms"] != int64(5) {
		t.Errorf("timeout failure %v", f)
	}
	var warned bool
	for _, r := range logs.records(t) {
		if r["level"] == "WARN" && r["msg"] == "capability returned after its deadline" && r["capability"] == "app.late" {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no overrun warning in %s", logs.String())
	}
}

// otherKey is an unrelated context key.
type otherKey struct{}

// An admission from Plan.Admit carries the scope check into Invoke: the
// scopes are evaluated once, and the invocation runs as the admitted
// principal. An admission to another plan admits no one.
func TestAdmissionEvaluatesScopesOnce(t *testing.T) {
	var evaluated atomic.Int32
	implies := func(held, required string) bool {
		evaluated.Add(1)
		return held == "docs" && strings.HasPrefix(required, "docs:")
	}
	app := agnara.New("docs", &agnara.Options{Scopes: policy.Scopes{Implies: implies}})
	who := func(ctx context.Context) (string, error) {
		ec, _ := execution.FromContext(ctx)
		return ec.Principal().ID(), nil
	}
	readCap := app.Capability(who, &agnara.CapabilityOptions{Name: "read", Scopes: []string{"docs:read"}})
	otherCap := app.Capability(who, &agnara.CapabilityOptions{Name: "other", Scopes: []string{"docs:write"}})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	read, _ := plans.Plan(readCap)
	other, _ := plans.Plan(otherCap)
	alice := policy.NewPrincipal("alice", []string{"docs"})

	adm, ok := read.Admit(alice)
	if !ok {
		t.Fatal("alice not admitted")
	}
	before := evaluated.Load()
	out, err := read.Invoke(bg, &execution.Invocation{Admission: adm})
	if s := mustSuccess(t, out, err); s.Value != "alice" {
		t.Errorf("admitted invocation ran as %v, want alice", s.Value)
	}
	if n := evaluated.Load() - before; n != 0 {
		t.Errorf("Invoke evaluated the scopes %d more times after Admit", n)
	}
	// Another plan's admission is no admission: the anonymous caller is
	// checked, and refused.
	out, err = other.Invoke(bg, &execution.Invocation{Admission: adm})
	mustFailure(t, out, err, execution.Forbidden)
	if _, ok := read.Admit(policy.Anonymous()); ok {
		t.Error("the anonymous principal was admitted")
	}
	out, err = read.Invoke(bg, &execution.Invocation{Admission: execution.Admission{}})
	mustFailure(t, out, err, execution.Forbidden)
}

// TestResultCapability: a capability returning Result brings its own
// output schema, published as declared, and its outcome carries the blocks
// and the structured value as returned, blocks never nil.
func TestResultCapability(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	var next execution.Result
	app := agnara.New("r", nil)
	c := app.Capability(func(context.Context) (execution.Result, error) { return next, nil }, &agnara.CapabilityOptions{Name: "x", OutputSchema: schema})
	p := compileOne(t, app, c)
	if !registry.Facts(p).ReturnsContent || string(p.OutputSchema()) != string(schema) {
		t.Fatalf("ReturnsContent %v, OutputSchema %s", registry.Facts(p).ReturnsContent, p.OutputSchema())
	}
	for _, tc := range []struct {
		name string
		r    execution.Result
		want execution.Success
	}{
		{"blocks and structured", execution.Result{Content: []execution.Content{execution.Text{Text: "a"}}, Structured: json.RawMessage(`{"n":1}`)},
			execution.Success{Content: []execution.Content{execution.Text{Text: "a"}}, Structured: json.RawMessage(`{"n":1}`)}},
		{"nothing", execution.Result{}, execution.Success{Content: []execution.Content{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next = tc.r
			out, err := p.Invoke(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}
