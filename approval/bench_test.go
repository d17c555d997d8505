package approval_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/enginetest"
)

// BenchmarkStore runs the approval cycle a write goes through
// (Prepare → Approve → Claim → Complete) and Claim alone on each backend,
// side by side, so that PostgreSQL's cost can be read as a ratio to
// SQLite's. Both make every commit durable (SQLite synchronous=FULL,
// PostgreSQL fsync and synchronous_commit on); the PostgreSQL server is
// local (enginetest.Postgres), so a networked one adds its round trips.
// Beside the suite's backends (PgBouncer among them) it runs PostgreSQL
// directly in the query mode PgBouncer needs, postgres-describe, to tell
// the mode's cost from the pooler's (docs/scaling.md).
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	receipt := approval.Receipt{Effect: approval.EffectCommitted}
	describe, _ := backendNamed("postgres")
	describe.name = "postgres-describe"
	describe.newDB = func(t testing.TB) string {
		t.Helper()
		dsn := enginetest.Postgres(t) + pooledMode
		if err := approval.MigratePostgres(ctx, dsn); err != nil {
			t.Fatal(err)
		}
		return dsn
	}
	for _, be := range append(backends(), describe) {
		b.Run(be.name, func(b *testing.B) {
			be.hold(b)
			b.Run("cycle", func(b *testing.B) {
				s := be.fresh(b, nil)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					a, err := s.Prepare(ctx, testIntent(b, fmt.Sprint("cycle-", i), `{"id":1}`))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
						b.Fatal(err)
					}
					if _, err := s.Claim(ctx, a.ID, testBinding()); err != nil {
						b.Fatal(err)
					}
					if _, err := s.Complete(ctx, a.ID, receipt); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("claim", func(b *testing.B) {
				s := be.fresh(b, nil)
				ids := make([]string, b.N)
				for i := range ids {
					a, err := s.Prepare(ctx, testIntent(b, fmt.Sprint("claim-", i), `{"id":1}`))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
						b.Fatal(err)
					}
					ids[i] = a.ID
				}
				b.ReportAllocs()
				b.ResetTimer()
				for _, id := range ids {
					if _, err := s.Claim(ctx, id, testBinding()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
