package execution_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
)

// limitedPlan compiles a get_user capability with the given limit and
// scopes, counting its handler's runs.
func limitedPlan(t *testing.T, limit agnara.RateLimit, scopes ...string) (*execution.Plan, *atomic.Int32, *logBuffer) {
	t.Helper()
	var runs atomic.Int32
	var logs logBuffer
	app := agnara.New("users", &agnara.Options{Logger: newLogger(&logs)})
	c := app.Capability(func(ctx context.Context, in GetUserInput) (User, error) {
		runs.Add(1)
		return User{ID: in.ID}, nil
	}, &agnara.CapabilityOptions{Name: "get_user", Scopes: scopes, RateLimit: limit})
	return compileOne(t, app, c), &runs, &logs
}

// mustRateLimited asserts that out is the rate-limit failure and returns
// its retry hint.
func mustRateLimited(t *testing.T, out execution.Outcome, err error) time.Duration {
	t.Helper()
	f := mustFailure(t, out, err, execution.Unavailable)
	if f.Reason != execution.ReasonRateLimited {
		t.Fatalf("reason = %q, want %q", f.Reason, execution.ReasonRateLimited)
	}
	ms, ok := f.Details["retry_after_ms"].(int64)
	if !ok || ms <= 0 {
		t.Fatalf("retry_after_ms = %#v, want a positive int64", f.Details["retry_after_ms"])
	}
	if !strings.Contains(f.Message, "retry in "+(time.Duration(ms)*time.Millisecond).String()) {
		t.Errorf("message %q does not say when to retry (%dms)", f.Message, ms)
	}
	return time.Duration(ms) * time.Millisecond
}

var userArgs = json.RawMessage(`{"id":"u1"}`)

func TestRateLimitPerPrincipal(t *testing.T) {
	p, runs, _ := limitedPlan(t, agnara.RateLimit{Rate: 2, Burst: 2})
	ada := policy.NewPrincipal("ada", nil)
	call := func(who policy.Principal) (execution.Outcome, error) {
		return p.Invoke(bg, &execution.Invocation{Principal: who, Arguments: userArgs})
	}
	for range 2 {
		out, err := call(ada)
		mustSuccess(t, out, err)
	}
	out, err := call(ada)
	if wait := mustRateLimited(t, out, err); wait > 500*time.Millisecond {
		t.Errorf("retry after %v, want at most 500ms at 2/s", wait)
	}
	if got := runs.Load(); got != 2 {
		t.Errorf("handler ran %d times, want 2: not for the refused call", got)
	}
	// Other callers have buckets of their own: another id, the same id from
	// another issuer, and the anonymous callers (who share one).
	for _, who := range []policy.Principal{
		policy.NewPrincipal("grace", nil),
		ada.WithIssuer("https://other.example"),
		policy.Anonymous(),
	} {
		out, err := call(who)
		mustSuccess(t, out, err)
	}
	anon := &execution.Invocation{Arguments: userArgs}
	ok(t, p, anon)
	refused(t, p, anon)
}

// ok, refused and failed invoke p once and assert the outcome.
func ok(t *testing.T, p *execution.Plan, inv *execution.Invocation) {
	t.Helper()
	out, err := p.Invoke(bg, inv)
	mustSuccess(t, out, err)
}

func refused(t *testing.T, p *execution.Plan, inv *execution.Invocation) time.Duration {
	t.Helper()
	out, err := p.Invoke(bg, inv)
	return mustRateLimited(t, out, err)
}

func failed(t *testing.T, p *execution.Plan, inv *execution.Invocation, code execution.Code) {
	t.Helper()
	out, err := p.Invoke(bg, inv)
	mustFailure(t, out, err, code)
}

func TestRetryHintIsEnough(t *testing.T) {
	p, _, _ := limitedPlan(t, agnara.RateLimit{Rate: 20, Burst: 1})
	inv := &execution.Invocation{Principal: policy.NewPrincipal("ada", nil), Arguments: userArgs}
	ok(t, p, inv)
	wait := refused(t, p, inv)
	if wait > 50*time.Millisecond {
		t.Fatalf("retry after %v, want at most 50ms at 20/s", wait)
	}
	time.Sleep(wait) // the hint itself is under test: retrying at it must succeed
	ok(t, p, inv)
}

// The limit is checked before the input is read: malformed calls count,
// and a caller over the limit is told so whatever it sent.
func TestRateLimitBeforeInput(t *testing.T) {
	p, runs, _ := limitedPlan(t, agnara.RateLimit{Rate: 0.001, Burst: 2})
	ada := policy.NewPrincipal("ada", nil)
	bad := &execution.Invocation{Principal: ada, Arguments: json.RawMessage(`{"bogus":1}`)}
	for range 2 {
		failed(t, p, bad, execution.InvalidInput)
	}
	refused(t, p, bad)
	refused(t, p, &execution.Invocation{Principal: ada, Arguments: userArgs})
	if runs.Load() != 0 {
		t.Errorf("handler ran %d times", runs.Load())
	}
}

// The scope guard comes first: a caller without the scopes is forbidden,
// never rate limited, and its refused calls do not use up the bucket.
func TestRateLimitAfterScopeGuard(t *testing.T) {
	p, _, _ := limitedPlan(t, agnara.RateLimit{Rate: 0.001, Burst: 2}, "users:read")
	unscoped := policy.NewPrincipal("ada", nil)
	for range 5 {
		failed(t, p, &execution.Invocation{Principal: unscoped, Arguments: userArgs}, execution.Forbidden)
	}
	scoped := &execution.Invocation{Principal: unscoped.WithScopes([]string{"users:read"}), Arguments: userArgs}
	ok(t, p, scoped)
	ok(t, p, scoped)
	refused(t, p, scoped)
}

func TestInvocationRateLimitIsTheDefault(t *testing.T) {
	ada := policy.NewPrincipal("ada", nil)
	strict := agnara.RateLimit{Rate: 0.001, Burst: 1}

	p, _, _ := limitedPlan(t, agnara.RateLimit{})
	inv := &execution.Invocation{Principal: ada, Arguments: userArgs, RateLimit: strict}
	ok(t, p, inv)
	refused(t, p, inv)
	// Without a limit anywhere, nothing is counted.
	for range 10 {
		ok(t, p, &execution.Invocation{Principal: ada, Arguments: userArgs})
	}

	// The capability's own limit wins over the default.
	own, _, _ := limitedPlan(t, agnara.RateLimit{Rate: 0.001, Burst: 3})
	inv = &execution.Invocation{Principal: ada, Arguments: userArgs, RateLimit: strict}
	for range 3 {
		ok(t, own, inv)
	}
	refused(t, own, inv)
}

// Limiter is an extension point; this one cannot count.
type brokenLimiter struct{ calls atomic.Int32 }

func (b *brokenLimiter) Allow(context.Context, string, agnara.RateLimit) (time.Duration, bool, error) {
	b.calls.Add(1)
	return 0, false, errors.New("store down")
}

// A limiter that cannot decide refuses the call: it fails closed.
func TestLimiterErrorFailsClosed(t *testing.T) {
	p, runs, logs := limitedPlan(t, agnara.RateLimit{Rate: 100, Burst: 100})
	lim := &brokenLimiter{}
	out, err := p.Invoke(bg, &execution.Invocation{Principal: policy.NewPrincipal("ada", nil), Arguments: userArgs, Limiter: lim})
	f := mustFailure(t, out, err, execution.Unavailable)
	if f.Reason != "" || f.Details != nil || strings.Contains(f.Message, "store down") {
		t.Errorf("failure = %+v, want a plain unavailable failure that does not echo the limiter's error", f)
	}
	if lim.calls.Load() != 1 || runs.Load() != 0 {
		t.Errorf("limiter asked %d times, handler ran %d times; want 1 and 0", lim.calls.Load(), runs.Load())
	}
	if !strings.Contains(logs.String(), "rate limiter unavailable") || !strings.Contains(logs.String(), "store down") {
		t.Errorf("log does not say why: %s", logs)
	}
}

// A later round of a call already counted (Invocation.Counted) is not
// counted again, and is admitted with the bucket empty; the first round of
// the next call is refused.
func TestCountedRoundIsNotCountedAgain(t *testing.T) {
	p, runs, _ := limitedPlan(t, agnara.RateLimit{Rate: 0.001, Burst: 1})
	ada := policy.NewPrincipal("ada", nil)
	ok(t, p, &execution.Invocation{Principal: ada, Arguments: userArgs})
	for range 3 {
		ok(t, p, &execution.Invocation{Principal: ada, Arguments: userArgs, Counted: true})
	}
	refused(t, p, &execution.Invocation{Principal: ada, Arguments: userArgs})
	if got := runs.Load(); got != 4 {
		t.Errorf("handler ran %d times, want 4", got)
	}
}

// The rate check execution installs for exposures (registry.RateCheck)
// limits requests that invoke no plan as Invoke limits calls: a bucket per
// name and caller, the same refusal and hint, and the limiter's error
// handed back, with the failure that fails closed.
func TestCheckRate(t *testing.T) {
	checkRate := registry.RateCheck[func(context.Context, execution.Limiter, string, policy.Principal, agnara.RateLimit) (*execution.Failure, error)]()
	l, _ := execution.NewLocalLimiter(nil)
	limit := agnara.RateLimit{Rate: 0.001, Burst: 2}
	ada, grace := policy.NewPrincipal("ada", nil), policy.NewPrincipal("grace", nil)
	check := func(name string, who policy.Principal) string {
		f, err := checkRate(bg, l, name, who, limit)
		switch {
		case err != nil:
			return "error: " + err.Error()
		case f == nil:
			return "ok"
		case f.Code == execution.Unavailable && f.Reason == execution.ReasonRateLimited && f.Details["retry_after_ms"].(int64) > 900_000:
			return "refused"
		}
		return "unexpected " + f.Error()
	}
	var got []string
	for _, call := range []struct {
		name string
		who  policy.Principal
	}{
		{"app tasks/get", ada}, {"app tasks/get", ada}, {"app tasks/get", ada},
		{"app tasks/update", ada}, {"app tasks/get", grace}, {"app tasks/get", ada.WithIssuer("https://other.example")},
	} {
		got = append(got, check(call.name, call.who))
	}
	want := []string{"ok", "ok", "refused", "ok", "ok", "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckRate (-want +got):\n%s", diff)
	}
	if f, err := checkRate(bg, nil, "", ada, agnara.RateLimit{}); f != nil || err != nil {
		t.Errorf("the zero limit: %v %v, want everything admitted", f, err)
	}
	f, err := checkRate(bg, &brokenLimiter{}, "app tasks/get", ada, limit)
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Errorf("a broken limiter: %v, want its error", err)
	}
	if f == nil || f.Code != execution.Unavailable || f.Reason != "" {
		t.Errorf("a broken limiter's failure = %+v, want a plain unavailable failure", f)
	}
	if f, err := checkRate(bg, nil, "app tasks/get", ada, limit); err == nil || f == nil || f.Code != execution.Unavailable {
		t.Errorf("no limiter: %v %v, want an error and the unavailable failure", f, err)
	}
}

func TestLocalLimiterMemoryIsBounded(t *testing.T) {
	l, err := execution.NewLocalLimiter(&execution.LocalLimiterOptions{MaxKeys: 100})
	if err != nil {
		t.Fatal(err)
	}
	limit := agnara.RateLimit{Rate: 0.001, Burst: 1}
	if _, ok, _ := l.Allow(bg, "hot", limit); !ok {
		t.Fatal("first call refused")
	}
	for i := range 10_000 {
		if _, ok, err := l.Allow(bg, "flood "+strconv.Itoa(i), limit); !ok || err != nil {
			t.Fatalf("new key %d refused: %v", i, err)
		}
		if i%50 == 0 {
			// A key in use stays: its caller remains limited.
			if _, ok, _ := l.Allow(bg, "hot", limit); ok {
				t.Fatalf("after %d other keys the hot key's bucket was forgotten", i)
			}
		}
		if n := l.Len(); n > 100 {
			t.Fatalf("limiter holds %d keys, want at most 100", n)
		}
	}
	if _, err := execution.NewLocalLimiter(&execution.LocalLimiterOptions{MaxKeys: -1}); err == nil {
		t.Error("negative MaxKeys accepted")
	}
	if _, _, err := l.Allow(bg, "k", agnara.RateLimit{Rate: 1}); err == nil {
		t.Error("a limit without burst accepted")
	}
}

// A bucket keeps its level when its key's limit changes (a server-wide
// default changed, say): the caller does not get a fresh burst.
func TestLocalLimiterTakesANewLimit(t *testing.T) {
	l, _ := execution.NewLocalLimiter(nil)
	slow, fast := agnara.RateLimit{Rate: 0.001, Burst: 1}, agnara.RateLimit{Rate: 10, Burst: 2}
	if _, ok, _ := l.Allow(bg, "k", slow); !ok {
		t.Fatal("first call refused")
	}
	wait, ok, _ := l.Allow(bg, "k", slow)
	if ok || wait < 900*time.Second {
		t.Fatalf("second call at burst 1: %v, %v; want refused for about 1000s", wait, ok)
	}
	wait, ok, _ = l.Allow(bg, "k", fast)
	if ok || wait > 100*time.Millisecond {
		t.Fatalf("under the faster limit: %v, %v; want refused, for at most 100ms", wait, ok)
	}
}

func BenchmarkInvokeRateLimited(b *testing.B) {
	app := agnara.New("users", nil)
	c := app.Capability(func(ctx context.Context, in GetUserInput) (User, error) { return User{ID: in.ID}, nil },
		&agnara.CapabilityOptions{Name: "get_user", RateLimit: agnara.RateLimit{Rate: 1e9, Burst: 1 << 30}})
	plans, err := execution.Compile(app)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := plans.Plan(c)
	inv := &execution.Invocation{Principal: policy.NewPrincipal("ada", nil), Arguments: userArgs}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Invoke(bg, inv); err != nil {
			b.Fatal(err)
		}
	}
}

// keyLimiter records the keys it is asked about, and allows every call.
type keyLimiter struct{ keys []string }

func (k *keyLimiter) Allow(_ context.Context, key string, _ agnara.RateLimit) (time.Duration, bool, error) {
	k.keys = append(k.keys, key)
	return 0, true, nil
}

// TestLimiterKeyIsThePrincipalsKey: a Limiter is asked about the
// capability and the caller's key (policy.Principal.Key), "-" for the
// anonymous callers, so the same id from another issuer has a bucket of its
// own; the bytes are those a limiter shared across an upgrade already
// holds.
func TestLimiterKeyIsThePrincipalsKey(t *testing.T) {
	p, _, _ := limitedPlan(t, agnara.RateLimit{Rate: 1, Burst: 1})
	lim := &keyLimiter{}
	ada := policy.NewPrincipal("ada", nil)
	for _, who := range []policy.Principal{ada, ada.WithIssuer("https://a.example"), ada.WithIssuer("https://b.example"), policy.Anonymous()} {
		out, err := p.Invoke(bg, &execution.Invocation{Principal: who, Arguments: userArgs, Limiter: lim})
		mustSuccess(t, out, err)
	}
	want := []string{"users.get_user 0:ada", "users.get_user 17:https://a.exampleada", "users.get_user 17:https://b.exampleada", "users.get_user -"}
	if diff := cmp.Diff(want, lim.keys); diff != "" {
		t.Errorf("limiter keys (-want +got):\n%s", diff)
	}
}
