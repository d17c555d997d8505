package prommcp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// countingDecider answers Decided with its counts, taking took on the
// test's clock, or err; it counts the queries.
type countingDecider struct {
	clock              *time.Time
	approved, rejected int64
	took               time.Duration
	err                error
	queries            int
}

func (d *countingDecider) Decided(context.Context) (int64, int64, error) {
	d.queries++
	*d.clock = d.clock.Add(d.took)
	return d.approved, d.rejected, d.err
}

// TestDecisionCountReused: a count of decisions is reused for 5 s, or
// for ten times as long as its query took when that is longer, so that
// scrapes cost the store little whatever it holds; a store that cannot
// answer leaves the series out and is counted, and is asked again at the
// next scrape.
func TestDecisionCountReused(t *testing.T) {
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	m := &approvalMetrics{}
	m.init()
	m.now = func() time.Time { return clock }
	d := &countingDecider{clock: &clock, approved: 3, rejected: 1}
	c := &decidedCollector{d: d, m: m}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)

	type scrape struct {
		series  int // of agnara_approvals_decided_total
		queries int // so far
		errors  float64
	}
	steps := []struct {
		name    string
		advance time.Duration
		took    time.Duration
		err     error
		want    scrape
	}{
		{"the first scrape counts", 0, 0, nil, scrape{2, 1, 0}},
		{"4.9 s later the count is reused", 4900 * time.Millisecond, 0, nil, scrape{2, 1, 0}},
		{"5 s after it, it is counted again, in 2 s", 100 * time.Millisecond, 2 * time.Second, nil, scrape{2, 2, 0}},
		{"a count that took 2 s is reused for 20 s", 17900 * time.Millisecond, 0, nil, scrape{2, 2, 0}},
		{"20 s after it, the store fails", 100 * time.Millisecond, 0, errors.New("database is locked"), scrape{0, 3, 1}},
		{"the next scrape asks again", 0, 0, nil, scrape{2, 4, 1}},
	}
	for _, st := range steps {
		clock = clock.Add(st.advance)
		d.took, d.err = st.took, st.err
		families, err := reg.Gather()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		n := 0
		for _, f := range families {
			n += len(f.GetMetric())
		}
		var errs dto.Metric
		if err := m.errors.WithLabelValues("decided").Write(&errs); err != nil {
			t.Fatal(err)
		}
		got := scrape{n, d.queries, errs.GetCounter().GetValue()}
		if diff := cmp.Diff(st.want, got, cmp.AllowUnexported(scrape{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
	}
}

// TestOldestPendingAge: the age of the oldest pending approval is read
// with the pending count, from the approvals' creation times; 0 once none
// waits.
func TestOldestPendingAge(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	storeClock := t0
	store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), &approval.Options{Clock: func() time.Time { return storeClock }})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	m.approvals.now = func() time.Time { return t0.Add(10 * time.Minute) }
	counted := m.Approvals(store)
	ctx := context.Background()
	var ids []string
	for i, key := range []string{"k1", "k2"} {
		storeClock = t0.Add(time.Duration(i) * time.Minute)
		a, err := counted.Prepare(ctx, testIntent(t, key))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	approver := policy.NewPrincipal("bob", []string{approval.DefaultApproverScope})
	for _, st := range []struct {
		approve      string // before the scrape, when not empty
		pending, age float64
	}{
		{"", 2, 600},
		{ids[0], 1, 540},
		{ids[1], 0, 0},
	} {
		if st.approve != "" {
			if _, err := counted.Approve(ctx, st.approve, approver, ""); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]float64{}
		families, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			switch f.GetName() {
			case "agnara_approvals_pending", "agnara_approvals_oldest_pending_age_seconds":
				got[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		want := map[string]float64{"agnara_approvals_pending": st.pending, "agnara_approvals_oldest_pending_age_seconds": st.age}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after approving %q (-want +got):\n%s", st.approve, diff)
		}
	}
}

// testIntent is an intent of requester alice under key.
func testIntent(t *testing.T, key string) approval.Intent {
	t.Helper()
	args := json.RawMessage(`{"doc":"q3"}`)
	digest, err := execution.ArgumentsDigest(args)
	if err != nil {
		t.Fatal(err)
	}
	return approval.Intent{
		Binding: approval.Binding{Tool: "gw.update_document", ID: "documents", Revision: "sha256:" + strings.Repeat("1", 64),
			ScopeID: "documents", ScopeRevision: "1", Effect: approval.EffectWrite},
		PrincipalID: "alice", Arguments: args, ArgumentsDigest: digest, IdempotencyKey: key, Summary: "Update document",
	}
}
