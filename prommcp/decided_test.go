package prommcp_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/prommcp"
	"github.com/google/go-cmp/cmp"
)

// TestDecisionsCountedWhereStored: decisions are read from the approval
// store, so that every process sharing it reports all of them: a gateway's
// metrics count the decisions the command line makes through a store of
// its own (approval.Store directly, as `agnara approvals approve` does),
// and an inbox's metrics on a third store instance report the same; a
// decision made through a counted store is counted once. On one SQLite
// file shared by three store instances, and on PostgreSQL.
func TestDecisionsCountedWhereStored(t *testing.T) {
	for _, b := range []struct {
		name string
		db   func(t *testing.T) string
		open func(t *testing.T, db string) approval.Store
	}{{
		name: "sqlite",
		db:   func(t *testing.T) string { return filepath.Join(t.TempDir(), "approvals.db") },
		open: func(t *testing.T, db string) approval.Store {
			s, err := approval.OpenSQLite(db, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}, {
		name: "postgres",
		db: func(t *testing.T) string {
			dsn := enginetest.Postgres(t)
			if err := approval.MigratePostgres(context.Background(), dsn); err != nil {
				t.Fatal(err)
			}
			return dsn
		},
		open: func(t *testing.T, db string) approval.Store {
			s, err := approval.OpenPostgres(context.Background(), db, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}} {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := b.db(t)
			process := func() (approval.Store, *fixture) {
				m, err := prommcp.New(nil)
				if err != nil {
					t.Fatal(err)
				}
				prommcp.CountDecisionsAtEachScrape(m)
				s := b.open(t, db)
				t.Cleanup(func() { s.Close() })
				ms := httptest.NewServer(m.HTTPHandler())
				t.Cleanup(ms.Close)
				return m.Approvals(s), &fixture{metrics: ms.URL}
			}
			gateway, gatewayMetrics := process()
			_, inboxMetrics := process()
			cli := b.open(t, db) // the command line: a store, no metrics
			t.Cleanup(func() { cli.Close() })

			var ids []string
			for _, key := range []string{"k1", "k2", "k3"} {
				a, err := gateway.Prepare(ctx, intent(t, key))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, a.ID)
			}
			steps := []struct {
				name               string
				do                 func() error
				approved, rejected float64
			}{
				{"none decided", func() error { return nil }, 0, 0},
				{"the command line approves", func() error { _, err := cli.Approve(ctx, ids[0], approver, ""); return err }, 1, 0},
				{"the command line rejects", func() error { _, err := cli.Reject(ctx, ids[1], approver, ""); return err }, 1, 1},
				{"the gateway's own store approves", func() error { _, err := gateway.Approve(ctx, ids[2], approver, ""); return err }, 2, 1},
				{"an approved write is canceled", func() error { _, err := cli.Cancel(ctx, ids[0], approver, ""); return err }, 2, 1},
			}
			for _, st := range steps {
				if err := st.do(); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				want := map[string]float64{
					`agnara_approvals_decided_total{decision="approved"}`: st.approved,
					`agnara_approvals_decided_total{decision="rejected"}`: st.rejected,
				}
				for who, f := range map[string]*fixture{"gateway": gatewayMetrics, "inbox": inboxMetrics} {
					scraped := f.scrape(t)
					got := map[string]float64{}
					for k := range want {
						if v, ok := scraped[k]; ok {
							got[k] = v
						}
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s: the %s's scrape (-want +got):\n%s", st.name, who, diff)
					}
				}
			}
		})
	}
}

// exported returns the agnara_ series m's registry gathers, sorted.
func exported(t *testing.T, m *prommcp.Metrics) []string {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), prommcp.Namespace+"_") {
			names = append(names, f.GetName())
		}
	}
	slices.Sort(names)
	return names
}

// TestEachPartExportsItsSeries: a Metrics exports only the series of what
// it was given: the build alone; an approval store's pending approvals and
// decisions (an inbox); the calls, rounds, refusals and load of an MCP
// handler, and the dispatches of approved writes once both a handler and
// an approval store are given, in either order (a gateway); a task
// store's statuses.
func TestEachPartExportsItsSeries(t *testing.T) {
	build := []string{"agnara_build_info"}
	approvals := []string{"agnara_approvals_decided_total", "agnara_approvals_oldest_pending_age_seconds", "agnara_approvals_pending"}
	server := []string{"agnara_mcp_rate_limited_total", "agnara_mcp_refused_total", "agnara_mcp_replay_store_errors_total",
		"agnara_mcp_request_state_refused_total", "agnara_mcp_sessions", "agnara_mcp_sessions_max", "agnara_mcp_streams", "agnara_mcp_streams_max"}
	dispatch := []string{"agnara_approvals_dispatched_total"}
	tasksSeries := []string{"agnara_tasks_status_total"}
	join := func(sets ...[]string) []string {
		out := slices.Concat(sets...)
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name  string
		parts []string
		want  []string
	}{
		{"nothing", nil, build},
		{"an inbox: an approval store", []string{"approvals"}, join(build, approvals)},
		{"a server: a handler", []string{"handler"}, join(build, server)},
		{"a server with tasks", []string{"handler", "tasks"}, join(build, server, tasksSeries)},
		{"a gateway: approvals, then the handler", []string{"approvals", "handler"}, join(build, approvals, server, dispatch)},
		{"the handler, then approvals", []string{"handler", "approvals"}, join(build, approvals, server, dispatch)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := prommcp.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.parts {
				switch p {
				case "approvals":
					s, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					m.Approvals(s)
				case "handler":
					if err := m.Handler(load{}); err != nil {
						t.Fatal(err)
					}
				case "tasks":
					m.Tasks(tasks.NewMemory(nil))
				}
			}
			if diff := cmp.Diff(tc.want, exported(t, m)); diff != "" {
				t.Errorf("exported series (-want +got):\n%s", diff)
			}
		})
	}
}

// load is a handler's load, for a Metrics that needs one.
type load struct{}

func (load) Load() mcpexpose.Load { return mcpexpose.Load{} }
