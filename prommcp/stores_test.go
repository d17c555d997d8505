package prommcp_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
	"github.com/agnara-go/agnara/policy"
	"github.com/agnara-go/agnara/prommcp"
	"github.com/google/go-cmp/cmp"
)

// TestStoreErrors: a store that cannot answer is counted under the
// operation, and an answer that refuses (not found) is not; a scrape
// whose pending count fails leaves the gauge out rather than report 0.
func TestStoreErrors(t *testing.T) {
	m, err := prommcp.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{}
	ms := httptest.NewServer(m.HTTPHandler())
	t.Cleanup(ms.Close)
	f.metrics = ms.URL
	ctx := context.Background()

	sqlite, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	approvals := m.Approvals(sqlite)
	if _, err := approvals.Get(ctx, "apv_missing"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("Get of a missing approval: %v", err)
	}
	if _, ok := f.scrape(t)[`agnara_approvals_pending{}`]; !ok {
		t.Error("agnara_approvals_pending is not in the scrape while the store answers")
	}
	sqlite.Close()
	if _, err := approvals.Get(ctx, "apv_missing"); err == nil {
		t.Fatal("Get on a closed store succeeded")
	}

	r := enginetest.Redis(t)
	redis, closeRedis, err := redistasks.Open(ctx, r.URL(), &redistasks.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeRedis() })
	ts := m.Tasks(redis)
	if _, err := ts.Get(ctx, "missing"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Get of a missing task: %v", err)
	}
	r.Stop()
	if _, err := ts.Get(ctx, "missing"); !errors.Is(err, tasks.ErrUnavailable) {
		t.Fatalf("Get with Redis stopped: %v, want ErrUnavailable", err)
	}

	got := f.scrape(t)
	if _, ok := got[`agnara_approvals_pending{}`]; ok {
		t.Error("agnara_approvals_pending is in the scrape while the store cannot answer")
	}
	// The pending count that failed is counted as a list error, seen by
	// the next scrape (a scrape collects its series concurrently).
	again := f.scrape(t)
	gotErrs := map[string]bool{}
	for _, k := range []string{`agnara_approvals_store_errors_total{op="get"}`, `agnara_approvals_store_errors_total{op="list"}`, `agnara_tasks_store_errors_total{op="get"}`} {
		gotErrs[k] = again[k] >= 1
	}
	if diff := cmp.Diff(map[string]bool{
		`agnara_approvals_store_errors_total{op="get"}`:  true,
		`agnara_approvals_store_errors_total{op="list"}`: true,
		`agnara_tasks_store_errors_total{op="get"}`:      true,
	}, gotErrs); diff != "" {
		t.Errorf("store errors counted (-want +got):\n%s", diff)
	}
	if a, ts := again[`agnara_approvals_store_errors_total{op="get"}`], again[`agnara_tasks_store_errors_total{op="get"}`]; a != 1 || ts != 1 {
		t.Errorf("get errors: approvals %v, tasks %v; want 1 each: a refusal (not found) is no store error", a, ts)
	}
}

// TestTasksKeepsChanges: a Redis task store wrapped for metrics still
// tells other instances of changes (tasks.Changes), so that status
// notifications reach listeners everywhere; a store without it gains
// nothing.
func TestTasksKeepsChanges(t *testing.T) {
	m, err := prommcp.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Tasks(tasks.NewMemory(nil)).(tasks.Changes); ok {
		t.Error("the wrapped memory store claims tasks.Changes, which the memory store lacks")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	redis, closeRedis, err := redistasks.Open(ctx, enginetest.Redis(t).URL(), &redistasks.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeRedis() })
	ch, ok := m.Tasks(redis).(tasks.Changes)
	if !ok {
		t.Fatal("the wrapped Redis store lost tasks.Changes: status notifications would stay on one instance")
	}
	heard := make(chan string, 1)
	subCtx, stop := context.WithCancel(ctx)
	defer stop()
	if err := ch.Subscribe(subCtx, func(from, id string) { heard <- from + "/" + id }); err != nil {
		t.Fatal(err)
	}
	if err := ch.Changed(ctx, "instance-a", "task-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-heard:
		if got != "instance-a/task-1" {
			t.Errorf("heard %q, want instance-a/task-1", got)
		}
	case <-ctx.Done():
		t.Fatal("a change told through the wrapped store never reached its subscriber")
	}
}

// TestApprovalsKeepSignIns: an approval store wrapped for metrics still
// keeps an inbox's sign-ins (and its audit trail), so that a counted
// store serves package approval/inbox.
func TestApprovalsKeepSignIns(t *testing.T) {
	m, err := prommcp.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	sqlite, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlite.Close() })
	counted, ok := m.Approvals(sqlite).(inbox.Store)
	if !ok {
		t.Fatal("the counted store is not an inbox.Store: the inbox could not use it")
	}
	ctx := context.Background()
	in := approval.SignIn{Approver: policy.NewPrincipal("alice", []string{"approvals:decide"}), Expires: time.Now().Add(time.Hour).UTC().Truncate(time.Second)}
	if err := counted.SaveSignIn(ctx, "k1", in); err != nil {
		t.Fatal(err)
	}
	got, err := counted.LoadSignIn(ctx, "k1")
	if err != nil || got.Approver.ID() != "alice" || !got.Expires.Equal(in.Expires) {
		t.Fatalf("LoadSignIn = %+v, %v; want what was saved, %+v", got, err, in)
	}
	if err := counted.EndSignIn(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if _, err := counted.LoadSignIn(ctx, "k1"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("an ended sign-in loads with %v, want ErrNotFound", err)
	}

	// A store with neither an audit trail nor sign-ins is not made to
	// look like an inbox's store, whose methods would then fail.
	bare := struct{ approval.Store }{sqlite}
	if _, ok := m.Approvals(bare).(inbox.Store); ok {
		t.Error("a counted store without an audit trail or sign-ins passes for an inbox.Store")
	}
}
