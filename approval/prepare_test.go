package approval_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
)

func testPrepare(t *testing.T, b backend) {
	ctx := context.Background()
	t.Run("same key same intent returns the same approval", func(t *testing.T) {
		s := b.fresh(t, newClock())
		a, err := s.Prepare(ctx, testIntent(t, "k", `{"id":1,"title":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		// Same arguments written differently (order, whitespace, number
		// spelling, escapes): same digest, same intent.
		b, err := s.Prepare(ctx, testIntent(t, "k", `{ "title":"\u0078", "id":1.0 }`))
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != b.ID || string(b.Intent.Arguments) != `{"id":1,"title":"x"}` {
			t.Fatalf("second prepare = %s %s, want %s with the first arguments", b.ID, b.Intent.Arguments, a.ID)
		}
		evs, err := s.Events(ctx, a.ID)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events = %v, %v; want one prepared", evs, err)
		}
		all, err := s.List(ctx, approval.Filter{})
		if err != nil || len(all) != 1 {
			t.Fatalf("list = %d, %v; want 1", len(all), err)
		}
	})
	t.Run("same key, approved and claimed, returns it unchanged", func(t *testing.T) {
		s := b.fresh(t, newClock())
		in := testIntent(t, "k", `{}`)
		a, _ := s.Prepare(ctx, in)
		if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, a.ID, in.Binding); err != nil {
			t.Fatal(err)
		}
		b, err := s.Prepare(ctx, in)
		if err != nil || b.ID != a.ID || b.State != approval.StateClaimed {
			t.Fatalf("prepare after claim = %s %s, %v", b.ID, b.State, err)
		}
	})
	other := testIntent(t, "k", `{"id":2}`)
	conflicts := map[string]func(*approval.Intent){
		"arguments":        func(in *approval.Intent) { in.Arguments, in.ArgumentsDigest = other.Arguments, other.ArgumentsDigest },
		"tool":             func(in *approval.Intent) { in.Binding.Tool = "gw.delete_document" },
		"binding id":       func(in *approval.Intent) { in.Binding.ID = "other" },
		"binding revision": func(in *approval.Intent) { in.Binding.Revision = "sha256:2222" },
		"scope id":         func(in *approval.Intent) { in.Binding.ScopeID = "prod" },
		"scope revision":   func(in *approval.Intent) { in.Binding.ScopeRevision = "scope-2" },
		"effect":           func(in *approval.Intent) { in.Binding.Effect = approval.EffectDestructive },
		"requester":        func(in *approval.Intent) { in.PrincipalID = "eve" },
		"requester issuer": func(in *approval.Intent) { in.PrincipalIssuer = "https://other.example" },
	}
	for name, change := range conflicts {
		t.Run("same key different "+name+" conflicts", func(t *testing.T) {
			t.Parallel()
			s := b.fresh(t, newClock())
			in := testIntent(t, "k", `{"id":1}`)
			if _, err := s.Prepare(ctx, in); err != nil {
				t.Fatal(err)
			}
			change(&in)
			_, err := s.Prepare(ctx, in)
			wantErr(t, err, approval.ErrConflict)
		})
	}
	t.Run("summary is not identity", func(t *testing.T) {
		s := b.fresh(t, newClock())
		in := testIntent(t, "k", `{}`)
		a, _ := s.Prepare(ctx, in)
		in.Summary = "something else"
		b, err := s.Prepare(ctx, in)
		if err != nil || b.ID != a.ID || b.Intent.Summary != "Update document" {
			t.Fatalf("= %+v, %v", b, err)
		}
	})
	for _, final := range []string{"expired", "canceled", "expired after approval"} {
		t.Run("after "+final+" a new approval", func(t *testing.T) {
			c := newClock()
			s := b.fresh(t, c)
			in := testIntent(t, "k", `{}`)
			a, _ := s.Prepare(ctx, in)
			switch final {
			case "expired":
				c.Add(25 * time.Hour)
			case "canceled":
				if _, err := s.Cancel(ctx, a.ID, requester, ""); err != nil {
					t.Fatal(err)
				}
			case "expired after approval":
				if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
					t.Fatal(err)
				}
				c.Add(2 * time.Hour)
			}
			b, err := s.Prepare(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if b.ID == a.ID || b.State != approval.StatePending {
				t.Fatalf("prepare after %s = %s %s; want a new pending approval", final, b.ID, b.State)
			}
			old := mustState(t, s, a.ID, map[bool]approval.State{true: approval.StateCanceled, false: approval.StateExpired}[final == "canceled"])
			latest, ok, err := s.Latest(ctx, "k")
			if err != nil || !ok || latest.ID != b.ID {
				t.Fatalf("latest = %s %v %v, want %s (old %s)", latest.ID, ok, err, b.ID, old.ID)
			}
		})
	}
	t.Run("after rejection the rejected one", func(t *testing.T) {
		s := b.fresh(t, newClock())
		in := testIntent(t, "k", `{}`)
		a, _ := s.Prepare(ctx, in)
		if _, err := s.Reject(ctx, a.ID, approver, "no"); err != nil {
			t.Fatal(err)
		}
		b, err := s.Prepare(ctx, in)
		if err != nil || b.ID != a.ID || b.State != approval.StateRejected || b.Note != "no" {
			t.Fatalf("= %s %s %q, %v", b.ID, b.State, b.Note, err)
		}
	})
	t.Run("latest of an unknown key", func(t *testing.T) {
		s := b.fresh(t, newClock())
		if _, ok, err := s.Latest(ctx, "nope"); ok || err != nil {
			t.Fatalf("= %v, %v", ok, err)
		}
	})
	t.Run("concurrent prepares of one key make one approval", func(t *testing.T) {
		db := b.newDB(t)
		s1, s2 := b.open(t, db, nil), b.open(t, db, nil)
		in := testIntent(t, "k", `{"id":7}`)
		ids := make([]string, 16)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				s := s1
				if i%2 == 1 {
					s = s2
				}
				a, err := s.Prepare(ctx, in)
				if err != nil {
					t.Error(err)
				}
				ids[i] = a.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("ids = %v, want all equal", ids)
			}
		}
	})
}

func testPrepareRefusesInvalidIntents(t *testing.T, b backend) {
	s := b.fresh(t, newClock())
	big := make([]byte, 0, approval.MaxArguments+16)
	big = append(big, `{"s":"`...)
	for len(big) < approval.MaxArguments {
		big = append(big, 'a')
	}
	big = append(big, `"}`...)
	tests := map[string]func(*approval.Intent){
		"no tool":             func(in *approval.Intent) { in.Binding.Tool = "" },
		"no binding id":       func(in *approval.Intent) { in.Binding.ID = "" },
		"no revision":         func(in *approval.Intent) { in.Binding.Revision = "" },
		"no scope id":         func(in *approval.Intent) { in.Binding.ScopeID = "" },
		"no scope revision":   func(in *approval.Intent) { in.Binding.ScopeRevision = "" },
		"bad effect":          func(in *approval.Intent) { in.Binding.Effect = "read" },
		"anonymous requester": func(in *approval.Intent) { in.PrincipalID = "" },
		"no key":              func(in *approval.Intent) { in.IdempotencyKey = "" },
		"digest mismatch":     func(in *approval.Intent) { in.Arguments = json.RawMessage(`{"id":2}`) },
		"no digest":           func(in *approval.Intent) { in.ArgumentsDigest = "" },
		"not json":            func(in *approval.Intent) { in.Arguments = json.RawMessage(`{"id":`) },
		"duplicate names":     func(in *approval.Intent) { in.Arguments = json.RawMessage(`{"id":1,"id":1}`) },
		"too large": func(in *approval.Intent) {
			*in = testIntent(t, "k", string(big))
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			in := testIntent(t, "k", `{"id":1}`)
			change(&in)
			_, err := s.Prepare(context.Background(), in)
			wantErr(t, err, approval.ErrInvalid)
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		in := testIntent(t, "limit", string(big[:approval.MaxArguments-2])+`"}`)
		if _, err := s.Prepare(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	})
	for _, args := range []string{``, `null`, ` null `} {
		t.Run("arguments "+args+" are {}", func(t *testing.T) {
			in := testIntent(t, "empty", args)
			a, err := s.Prepare(context.Background(), in)
			if err != nil || string(a.Intent.Arguments) != "{}" {
				t.Fatalf("= %s, %v", a.Intent.Arguments, err)
			}
		})
	}
	t.Run("the confirmation path's digest is the store's", func(t *testing.T) {
		// Confirmation evidence and sealed request state are bound to
		// execution.ArgumentsDigest of the arguments as the client sent
		// them; an approval prepared from the same call under another
		// spelling must carry that very digest.
		sent := json.RawMessage(` {"n": 10E-1, "s": "\u0061"} `)
		evidence, err := execution.ArgumentsDigest(sent)
		if err != nil {
			t.Fatal(err)
		}
		in := testIntent(t, "confirm", `{"s":"a","n":1}`)
		if in.ArgumentsDigest != evidence {
			t.Fatalf("intent digest %s, confirmation digest %s", in.ArgumentsDigest, evidence)
		}
		in.Arguments = sent // the digest stays the one computed from the other spelling
		a, err := s.Prepare(context.Background(), in)
		if err != nil || a.Intent.ArgumentsDigest != evidence {
			t.Fatalf("prepare = %s, %v; want digest %s", a.Intent.ArgumentsDigest, err, evidence)
		}
	})
	all, err := s.List(context.Background(), approval.Filter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("refused intents were recorded: %d approvals, %v", len(all), err)
	}
}
