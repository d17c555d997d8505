package redistasks_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
)

// TestStoreOnEachDeployment: on Sentinel and on a Cluster, tasks (whose
// keys land in different slots) are created once, read and updated from
// another instance's store, and a change told on one is heard by the
// other's subscriber (on a Cluster, pub/sub spans the nodes).
func TestStoreOnEachDeployment(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"sentinel", func(t *testing.T) string { return enginetest.RedisSentinel(t).URL() }},
		{"cluster", func(t *testing.T) string { return enginetest.RedisCluster(t).URL() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			ctx := t.Context()
			open := func() *redistasks.Store {
				s, closeFn, err := redistasks.Open(ctx, url, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { closeFn() })
				return s
			}
			a, b := open(), open()
			heard := make(chan change, 16)
			sub, cancel := context.WithCancel(ctx)
			defer cancel()
			if err := b.Subscribe(sub, func(from, id string) { heard <- change{from, id} }); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			for i := range 10 {
				task := &tasks.Task{ID: fmt.Sprint("task-", i), PrincipalID: "alice", Tool: "t", Status: tasks.Working,
					CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Minute)}
				if err := a.Create(ctx, task); err != nil {
					t.Fatal(err)
				}
				if err := b.Create(ctx, task); !errors.Is(err, tasks.ErrExists) {
					t.Fatalf("second Create = %v, want ErrExists", err)
				}
				got, err := b.Update(ctx, task.ID, func(t *tasks.Task) error { t.StatusMessage = "half"; return nil })
				if err != nil || got.StatusMessage != "half" {
					t.Fatalf("Update on another store = %v, %v", got, err)
				}
				if got, err := a.Get(ctx, task.ID); err != nil || got.StatusMessage != "half" {
					t.Fatalf("Get = %v, %v; want the update", got, err)
				}
				if err := a.Changed(ctx, "i1", task.ID); err != nil {
					t.Fatal(err)
				}
				select {
				case c := <-heard:
					if c != (change{"i1", task.ID}) {
						t.Fatalf("heard %v, want %s", c, task.ID)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("the change of %s was not heard", task.ID)
				}
			}
		})
	}
}
