package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

// Review is how the definitions the upstreams of a config offer now
// compare with its lock file: what `agnara gateway diff` prints, and what
// `agnara gateway accept` pins ([Review.Accept]). [Inspect] makes one.
//
// A Review is immutable and safe for concurrent use.
type Review struct {
	lock     *Lock            // as read; empty when there was no file
	changes  []Change         // every bound tool, in config order
	live     map[string]Pin   // by local name: what the upstreams offer now
	bound    map[string]bool  // local names the config binds
	problems map[string]error // by local name: why no live definition was read
}

// Inspect connects to every upstream of cfg at once, imports its bound
// tools as the gateway would (the same bindings, limits and credentials),
// and compares each with the pin in the lock file cfg.Lock names; a
// missing lock file pins nothing. Nothing is called: writes are imported
// without an approval store (unless opts.Approvals is set), and every
// session is closed, every stdio process stopped, before Inspect returns.
//
// Inspect sees what its own sessions are offered. A running gateway
// serves a tool only when its own session offers the definition pinned,
// so an upstream that shows one definition to Inspect and another to the
// gateway gets nothing served that nobody accepted.
//
// An upstream that cannot be reached or imported gives each of its tools
// a [Change] with the reason ([Review.Problem] says why); a binding that
// cannot be imported, one with the binding's reason. Inspect fails only
// for a config [New] refuses and an unreadable lock file.
func Inspect(ctx context.Context, cfg Config, opts *Options) (*Review, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Reload = nil
	if o.Approvals == nil {
		o.Approvals = closedStore{}
	}
	g, err := New(cfg, &o)
	if err != nil {
		return nil, err
	}
	lock, err := ReadLock(g.cfg.Lock)
	if errors.Is(err, fs.ErrNotExist) {
		lock, err = &Lock{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gateway: lock file: %w", err)
	}
	type result struct {
		s   served
		err error
	}
	results := make([]result, len(g.ups))
	var wg sync.WaitGroup
	for i, u := range g.ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].s, results[i].err = u.inspect(ctx)
		}()
	}
	wg.Wait()

	r := &Review{lock: lock, live: map[string]Pin{}, bound: map[string]bool{}, problems: map[string]error{}}
	for i, u := range g.ups {
		res := results[i]
		entries := map[string]Pin{}
		absent := map[string]error{}
		for _, cat := range res.s.catalogs() {
			for _, e := range cat.Snapshot().Entries() {
				entries[e.Name] = Pin{Upstream: u.cfg.Name, Entry: e}
			}
			for _, a := range cat.Absent() {
				absent[a.Name] = a.Err
			}
		}
		for _, t := range u.cfg.Tools {
			r.bound[t.Name] = true
			c := Change{Upstream: u.cfg.Name, Name: t.Name, Remote: t.Remote}
			live, ok := entries[t.Name]
			switch {
			case res.err != nil:
				c.Reason, _ = classify(res.err)
				r.problems[t.Name] = res.err
			case !ok:
				c.Reason = downReason(absent[t.Name])
				r.problems[t.Name] = absent[t.Name]
			default:
				r.live[t.Name] = live
				var pin *Pin
				if p, ok := lock.Pin(t.Name); ok {
					pin = &p
				}
				c = compare(pin, live)
			}
			r.changes = append(r.changes, c)
		}
	}
	return r, nil
}

// inspect makes one session, imports the bound tools leaving out what
// cannot be imported, and closes the session.
func (u *upstream) inspect(ctx context.Context) (served, error) {
	connectCtx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	sess, _, err := u.connect(ctx, connectCtx)
	if err != nil {
		return served{}, err
	}
	defer sess.Close()
	s, err := u.importAll(connectCtx, sess)
	if err != nil {
		return served{}, fmt.Errorf("importing: %w", err)
	}
	return s, nil
}

// Changes returns how each bound tool compares with its pin, in config
// order (upstreams, then their bindings). A Change with an empty Reason is
// a tool whose pin is its live definition.
func (r *Review) Changes() []Change {
	out := make([]Change, len(r.changes))
	for i, c := range r.changes {
		c.Fields = append([]string(nil), c.Fields...)
		out[i] = c
	}
	return out
}

// Live returns the definition the upstream of local tool name offers now,
// and false when none could be read.
func (r *Review) Live(name string) (Pin, bool) {
	p, ok := r.live[name]
	if !ok {
		return Pin{}, false
	}
	return clonePin(p), true
}

// Lock returns the lock file as read: an empty one when there was none.
func (r *Review) Lock() *Lock { return r.lock }

// Problem returns why the live definition of local tool name could not be
// read (its upstream's error, or why its binding could not import it), or
// nil. The error holds the upstream's transport words and mcpimport's, for
// the operator; no secret.
func (r *Review) Problem(name string) error { return r.problems[name] }

// Unbound returns the lock's pins of local names the config no longer
// binds: [Review.Accept] drops them.
func (r *Review) Unbound() []Pin {
	var out []Pin
	for _, p := range r.lock.Pins() {
		if !r.bound[p.Entry.Name] {
			out = append(out, p)
		}
	}
	return out
}

// Accept returns the lock the reviewed lock file becomes when the live
// definitions of the named tools (of every bound tool, when no name is
// given) are pinned: each such tool with a live definition is pinned with
// it; a bound tool without one keeps the pin it has, if any; the pins of
// tools the config no longer binds are dropped. A name the config does not
// bind, or whose live definition could not be read, is an error, and
// nothing is accepted. Write the result with [Lock.WriteFile]; a running
// gateway serves it after [Gateway.Reload].
func (r *Review) Accept(names ...string) (*Lock, error) {
	accept := map[string]bool{}
	var errs []error
	for _, n := range names {
		switch {
		case !r.bound[n]:
			errs = append(errs, fmt.Errorf("%q binds no tool of the config", n))
		case r.problems[n] != nil:
			errs = append(errs, fmt.Errorf("%q: its definition could not be read, so there is none to accept: %w", n, r.problems[n]))
		}
		accept[n] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var pins []Pin
	for _, c := range r.changes {
		live, ok := r.live[c.Name]
		if ok && (len(names) == 0 || accept[c.Name]) {
			pins = append(pins, live)
			continue
		}
		if p, ok := r.lock.Pin(c.Name); ok {
			pins = append(pins, p)
		}
	}
	return NewLock(pins)
}

// closedStore is the approval store of an inspection: writes are imported
// to read their definitions, never called, so every method answers
// approval.ErrClosed.
type closedStore struct{}

var _ approval.Store = closedStore{}

func (closedStore) Prepare(context.Context, approval.Intent) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Get(context.Context, string) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Latest(context.Context, string) (approval.Approval, bool, error) {
	return approval.Approval{}, false, approval.ErrClosed
}

func (closedStore) List(context.Context, approval.Filter) ([]approval.Approval, error) {
	return nil, approval.ErrClosed
}

func (closedStore) Approve(context.Context, string, policy.Principal, string) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Reject(context.Context, string, policy.Principal, string) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Cancel(context.Context, string, policy.Principal, string) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Claim(context.Context, string, approval.Binding) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Complete(context.Context, string, approval.Receipt) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Reconcile(context.Context, string, policy.Principal, approval.EffectState, string) (approval.Approval, error) {
	return approval.Approval{}, approval.ErrClosed
}

func (closedStore) Close() error { return nil }
