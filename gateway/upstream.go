package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// importTimeout bounds one connection and its discovery.
const importTimeout = 30 * time.Second

// sessionKeepAlive is how often the gateway pings an upstream session.
const sessionKeepAlive = 30 * time.Second

// upstream follows one upstream: it connects, imports the bound tools,
// hands them to the gateway, re-imports when the upstream's catalog
// changes, and when the session ends (a stdio process exits, say) it
// reconnects with backoff, a new session whose catalog is imported anew.
type upstream struct {
	g      *Gateway
	cfg    *Upstream
	logger *slog.Logger
	limits mcpimport.Limits
	reads  map[string]mcpimport.Binding
	writes map[string]mcpimport.WriteBinding
	tasks  bool          // some binding follows remote tasks
	tried  chan struct{} // closed after the first attempt, whatever it gave
	once   sync.Once

	// features binds resources, templates and prompts (features.go), when
	// hasFeatures.
	features    mcpimport.FeatureBindings
	hasFeatures bool

	// Guarded by g.mu.
	served      served
	swaps       int
	connections int
}

// served is what the gateway serves of an upstream.
type served struct {
	state         State
	reads, writes *mcpimport.Catalog // when up; each nil without bindings of its kind
	features      *mcpimport.Catalog // resources and prompts, when up; nil without bindings
	err           string             // when down
	reason        execution.Reason   // when down
}

// endedError is why a session with an upstream ended: the gateway's words,
// answering [mcpimport.ReasonConnectionClosed] to [execution.ReasonOf].
type endedError struct{ msg string }

func (e *endedError) Error() string { return e.msg }

// FailureReason returns [mcpimport.ReasonConnectionClosed].
func (e *endedError) FailureReason() execution.Reason { return mcpimport.ReasonConnectionClosed }

// downReason is the reason an upstream is down because of err:
// err's own, or [ReasonUpstreamUnavailable] when it names none.
func downReason(err error) execution.Reason {
	if r := execution.ReasonOf(err); r != "" {
		return r
	}
	return ReasonUpstreamUnavailable
}

func newUpstream(g *Gateway, cfg *Upstream) *upstream {
	u := &upstream{
		g: g, cfg: cfg,
		logger: g.logger.With(slog.String("upstream", cfg.Name)),
		limits: mcpimport.Limits{CallTimeout: cfg.Limits.CallTimeout.D(), ObjectBytes: cfg.Limits.ObjectBytes},
		reads:  map[string]mcpimport.Binding{},
		writes: map[string]mcpimport.WriteBinding{},
		tried:  make(chan struct{}),
		served: served{state: StateStarting},
	}
	u.features, u.hasFeatures = featureBindings(cfg)
	u.limits.CallTimeout = max(u.limits.CallTimeout, 0)
	if u.limits.CallTimeout == 0 {
		u.limits.CallTimeout = mcpimport.DefaultLimits().CallTimeout
	}
	for _, t := range cfg.Tools {
		validator := g.opts.Validators[t.Name]
		if t.Write == "" {
			u.reads[t.Remote] = mcpimport.Binding{
				Name: t.Name, Title: t.Title, Description: t.Description,
				Scopes: slices.Clone(t.Scopes), ScopeValidator: validator, NoScopeValidator: validator == nil,
				ConcurrencySafe: t.ConcurrencySafe, Profile: profile(t.Profile),
			}
			if t.Task {
				b := u.reads[t.Remote]
				b.Task = &mcpimport.TaskOptions{Timeout: t.TaskTimeout.D()}
				u.reads[t.Remote] = b
				u.tasks = true
			}
			continue
		}
		if validator == nil {
			validator = anyIdentifiedCaller
		}
		u.writes[t.Remote] = mcpimport.WriteBinding{
			Name: t.Name, Title: t.Title, Description: t.Description, Effect: approval.Effect(t.Write),
			Scopes: slices.Clone(t.Scopes), ScopeValidator: validator,
			BindingID: cfg.Name, BindingRevision: bindingRevision(t),
			ScopeID: t.ApprovalScope, ScopeRevision: t.ApprovalScopeRevision,
			Profile: profile(t.Profile),
		}
	}
	return u
}

// anyIdentifiedCaller is the scope check of a write bound without one: the
// binding's scopes decide; anonymous callers never reach it (writes refuse
// them first).
func anyIdentifiedCaller(context.Context, policy.Principal, json.RawMessage) error { return nil }

// bindingRevision names a write binding's declaration: approvals record it,
// and a changed declaration is a new revision.
func bindingRevision(t Tool) string {
	b, _ := json.Marshal(t)
	sum := sha256.Sum256(b)
	return fmt.Sprintf("config-%x", sum[:8])
}

// scopes returns the bound scopes of local tool name.
func (u *upstream) scopes(name string) []string {
	for _, t := range u.cfg.Tools {
		if t.Name == name {
			return t.Scopes
		}
	}
	return nil
}

func (u *upstream) status() UpstreamStatus {
	s := UpstreamStatus{Name: u.cfg.Name, State: u.served.state, Error: u.served.err, Reason: u.served.reason,
		Connections: u.connections, Swaps: u.swaps, Tools: []string{}, Absent: []string{}, Resources: []string{}, Prompts: []string{}}
	if f := u.served.features; f != nil {
		snap := f.Snapshot()
		for _, e := range append(snap.Resources(), snap.ResourceTemplates()...) {
			s.Resources = append(s.Resources, e.Name)
		}
		for _, e := range snap.Prompts() {
			s.Prompts = append(s.Prompts, e.Name)
		}
		for _, a := range f.Absent() {
			s.Absent = append(s.Absent, a.Name+" ("+string(a.Reason)+")")
		}
	}
	for _, cat := range []*mcpimport.Catalog{u.served.reads, u.served.writes} {
		if cat == nil {
			continue
		}
		for _, e := range cat.Snapshot().Entries() {
			s.Tools = append(s.Tools, e.Name)
		}
		for _, a := range cat.Absent() {
			s.Absent = append(s.Absent, a.Name+" ("+string(a.Reason)+")")
		}
	}
	return s
}

func (u *upstream) markTried() { u.once.Do(func() { close(u.tried) }) }

// run follows the upstream until ctx is done.
func (u *upstream) run(ctx context.Context) {
	defer u.markTried()
	for attempt := 0; ; attempt++ {
		wasUp, err := u.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if wasUp {
			attempt = 0 // a session that worked starts the backoff over
		}
		reason := downReason(err)
		u.g.publish(u, served{state: StateDown, err: err.Error(), reason: reason})
		u.markTried()
		wait := u.cfg.Restart.Delay(attempt)
		u.logger.Warn("upstream down; retrying", slog.String("reason", string(reason)),
			slog.String("error", err.Error()), slog.Int("attempt", attempt+1), slog.Duration("retry_in", wait))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// transport returns how to reach the upstream, and for stdio the
// transport itself (to report the process's exit).
func (u *upstream) transport(ctx context.Context) (mcp.Transport, *stdioTransport) {
	if h := u.cfg.HTTP; h != nil {
		return &mcp.StreamableClientTransport{
			Endpoint:   h.URL,
			HTTPClient: httpClient(ctx, h, u.cfg.Limits.MessageBytes, os.LookupEnv),
			MaxRetries: -1,
		}, nil
	}
	t := &stdioTransport{upstream: u.cfg.Name, cfg: u.cfg.Stdio, logger: u.g.logger, maxLine: u.cfg.Limits.MessageBytes, lookup: os.LookupEnv}
	return t, t
}

// session makes one session and serves it until it ends or ctx is done.
// wasUp reports whether it got as far as serving a catalog.
func (u *upstream) session(ctx context.Context) (wasUp bool, err error) {
	transport, stdio := u.transport(ctx)
	var protocol string
	if u.cfg.HTTP != nil {
		// A session costs both sides less per call than 2026-07-28's
		// stateless requests (docs/PERFORMANCE.md, "Gateway").
		// Tasks are a 2026-07-28 extension.
		protocol = u.cfg.HTTP.Protocol
		if protocol == "" && !u.tasks {
			protocol = mcpimport.HTTPProtocolVersion
		}
	}
	connectCtx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	u.g.mu.Lock()
	u.connections++
	u.g.mu.Unlock()
	sess, err := mcpimport.Connect(connectCtx, u.cfg.Name, transport, &mcpimport.ConnectOptions{
		Client: &mcp.Implementation{Name: "agnara-gateway", Version: "1"},
		// Pings find a session the upstream lost, which then ends and is
		// made again.
		ClientOptions:  &mcp.ClientOptions{KeepAlive: sessionKeepAlive},
		Tasks:          u.tasks,
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: protocol},
	})
	if err != nil {
		// mcpimport keeps the transport's words out of its message (they
		// may quote the upstream); the operator needs them: "connection
		// refused", "no such file or directory".
		cause := ""
		if c := errors.Unwrap(err); c != nil {
			cause = " (" + c.Error() + ")"
		}
		if stdio != nil {
			if status, exited := stdio.exit(); exited {
				return false, fmt.Errorf("connecting: %w%s (the process exited: %s)", err, cause, status)
			}
		}
		return false, fmt.Errorf("connecting: %w%s", err, cause)
	}
	defer sess.Close()
	ended := make(chan error, 1)
	go func() { ended <- sess.ClientSession().Wait() }()

	cur, err := u.discover(connectCtx, sess)
	if err != nil {
		return false, fmt.Errorf("importing: %w", err)
	}
	u.g.publish(u, cur)
	u.markTried()
	u.logger.Info("upstream imported", slog.String("protocol", sess.ClientSession().InitializeResult().ProtocolVersion),
		slog.Any("tools", u.status().Tools), slog.Any("resources", u.status().Resources), slog.Any("prompts", u.status().Prompts),
		slog.Any("absent", u.status().Absent))
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case err := <-ended:
			msg := "the session ended"
			if stdio != nil {
				if status, exited := stdio.exit(); exited {
					msg = "the process exited (" + status + ")"
				}
			}
			if err != nil {
				msg += ": " + err.Error()
			}
			return true, &endedError{msg: msg}
		case <-cur.stale():
		case <-cur.featuresStale():
		}
		next, err := func() (served, error) {
			c, cancel := context.WithTimeout(ctx, importTimeout)
			defer cancel()
			return u.discover(c, sess)
		}()
		if err != nil {
			return true, fmt.Errorf("re-importing after a list_changed: %w", err)
		}
		renewed := true
		if cur.reads != nil {
			renewed = cur.reads.Renew(next.reads)
		}
		if cur.writes != nil {
			renewed = cur.writes.Renew(next.writes) && renewed
		}
		if cur.features != nil {
			renewed = cur.features.Renew(next.features) && renewed
		}
		if renewed {
			u.logger.Debug("the upstream catalog changed; what the gateway imports did not")
			continue
		}
		u.g.publish(u, next)
		cur = next
		u.logger.Info("upstream catalog changed; serving the new one", slog.Any("tools", u.status().Tools),
			slog.Any("resources", u.status().Resources), slog.Any("prompts", u.status().Prompts), slog.Any("absent", u.status().Absent))
	}
}

// stale is closed when the served tool catalogs go stale (reads and
// writes share the session's monitor: they go stale together); nil (never
// ready) without tools.
func (s served) stale() <-chan struct{} {
	switch {
	case s.reads != nil:
		return s.reads.Stale()
	case s.writes != nil:
		return s.writes.Stale()
	}
	return nil
}

// discover imports the bound tools on sess. A bound tool the upstream does
// not offer, or offers with a schema outside its profile, is left out alone
// (AllowAbsent) and answered with mcp_catalog_stale until it is back.
func (u *upstream) discover(ctx context.Context, sess *mcpimport.Session) (served, error) {
	s := served{state: StateUp}
	var err error
	if len(u.reads) > 0 {
		s.reads, err = mcpimport.Discover(ctx, sess, u.reads, &mcpimport.Options{Limits: u.limits, Logger: u.g.logger, AllowAbsent: true})
		if err != nil {
			return served{}, err
		}
	}
	if len(u.writes) > 0 {
		s.writes, err = mcpimport.DiscoverWrites(ctx, sess, u.writes, &mcpimport.WriteOptions{Limits: u.limits, Logger: u.g.logger, Approvals: u.g.store, AllowAbsent: true})
		if err != nil {
			return served{}, err
		}
	}
	if u.hasFeatures {
		s.features, err = mcpimport.DiscoverFeatures(ctx, sess, u.features, &mcpimport.Options{Limits: u.limits, Logger: u.g.logger, AllowAbsent: true})
		if err != nil {
			return served{}, err
		}
	}
	return s, nil
}

// profile maps a config profile name to mcpimport's.
func profile(name string) mcpimport.Profile {
	if name == "standard" {
		return mcpimport.ProfileStandard
	}
	return mcpimport.ProfileStrict
}
