package redistasks_test

import (
	"context"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

type change struct{ From, ID string }

// TestChangesReachEverySubscriber: a change told through one store reaches
// the subscribers of every store on the same Redis (the teller's own
// included), in order, once Subscribe has returned; a message of another
// form on the channel is ignored, another prefix's changes are not heard,
// and a subscription whose context ended hears nothing more.
func TestChangesReachEverySubscriber(t *testing.T) {
	r := enginetest.Redis(t)
	ctx := t.Context()
	open := func(prefix string) *redistasks.Store {
		s, closeFn, err := redistasks.Open(ctx, r.URL(), &redistasks.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeFn() })
		return s
	}
	a, b, other := open("p:"), open("p:"), open("q:")
	subscribe := func(s *redistasks.Store) (chan change, context.CancelFunc) {
		got := make(chan change, 16)
		sub, cancel := context.WithCancel(ctx)
		if err := s.Subscribe(sub, func(from, id string) { got <- change{from, id} }); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cancel)
		return got, cancel
	}
	onA, _ := subscribe(a)
	onB, stopB := subscribe(b)
	onOther, _ := subscribe(other)

	raw := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer raw.Close()
	if err := raw.Publish(ctx, "p:changes", "no separator").Err(); err != nil {
		t.Fatal(err)
	}
	want := []change{{"i1", "t1"}, {"i2", "t2"}}
	for _, c := range want {
		if err := a.Changed(ctx, c.From, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	read := func(ch chan change, n int) []change {
		var out []change
		for range n {
			select {
			case c := <-ch:
				out = append(out, c)
			case <-time.After(10 * time.Second):
				t.Fatalf("only %v heard", out)
			}
		}
		return out
	}
	for name, ch := range map[string]chan change{"a": onA, "b": onB} {
		if diff := cmp.Diff(want, read(ch, 2)); diff != "" {
			t.Errorf("%s heard (-want +got):\n%s", name, diff)
		}
	}

	// b stops; the next change is heard by a only, and the other prefix
	// has heard nothing: the marker told on q: is the first it hears.
	stopB()
	for deadline := time.Now().Add(10 * time.Second); ; {
		n, err := raw.PubSubNumSub(ctx, "p:changes").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n["p:changes"] == 1 {
			break // b's connection has unsubscribed
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers on p:changes after b stopped, want 1", n["p:changes"])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := a.Changed(ctx, "i1", "t3"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]change{{"i1", "t3"}}, read(onA, 1)); diff != "" {
		t.Errorf("a heard (-want +got):\n%s", diff)
	}
	if err := other.Changed(ctx, "i9", "marker"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]change{{"i9", "marker"}}, read(onOther, 1)); diff != "" {
		t.Errorf("the other prefix heard (-want +got):\n%s", diff)
	}
	select {
	case c := <-onB:
		t.Errorf("b heard %v after its subscription ended", c)
	default:
	}
}
