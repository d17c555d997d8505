package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
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
	// optional holds the local names of the bindings that may be absent.
	optional map[string]bool
	// retry wakes a failed upstream ([Gateway.Reload]).
	retry chan struct{}

	// features binds resources, templates and prompts (features.go), when
	// hasFeatures.
	features    mcpimport.FeatureBindings
	hasFeatures bool

	// exchange gets each caller's token for an HTTP upstream with
	// credentials "token_exchange" (exchange.go), consent each caller's
	// grant for one with "consent" (consent.go); nil otherwise.
	exchange *exchanger
	consent  *consentClient

	// Guarded by g.mu.
	served      served
	swaps       int
	connections int
	held        map[string]Change // served tools whose definition is not the pinned one, by local name
	warned      map[string]string // what was logged of each held tool
}

// served is what the gateway serves of an upstream.
type served struct {
	state         State
	reads, writes *mcpimport.Catalog // when up; each nil without bindings of its kind
	features      *mcpimport.Catalog // resources and prompts, when up; nil without bindings
	err           string             // when down or failed
	reason        execution.Reason   // when down or failed
}

// catalogs returns the tool catalogs served, reads first.
func (s served) catalogs() []*mcpimport.Catalog {
	var out []*mcpimport.Catalog
	for _, c := range []*mcpimport.Catalog{s.reads, s.writes} {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
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

		optional: map[string]bool{},
		retry:    make(chan struct{}, 1),
		warned:   map[string]string{},
	}
	u.features, u.hasFeatures = featureBindings(cfg)
	if h := cfg.HTTP; h != nil && h.Credentials == CredentialsTokenExchange {
		secret, _ := os.LookupEnv(h.TokenExchange.ClientSecretEnv) // New checked it is set
		as := &http.Client{Transport: LimitBodies(mcpimport.HTTPClient(nil).Transport, exchangeBodyLimit+1), Timeout: exchangeTimeout}
		u.exchange = newExchanger(cfg.Name, h, secret, as, g.subjects, u.logger)
	}
	if h := cfg.HTTP; h != nil && h.Credentials == CredentialsConsent && g.conn != nil {
		secret, _ := os.LookupEnv(h.Consent.ClientSecretEnv)
		as := &http.Client{Transport: LimitBodies(mcpimport.HTTPClient(nil).Transport, 1<<20), Timeout: 30 * time.Second}
		u.consent = newConsentClient(g.conn, cfg.Name, h, secret, as, u.logger)
		g.conn.clients[cfg.Name] = u.consent
	}
	u.limits.CallTimeout = max(u.limits.CallTimeout, 0)
	if u.limits.CallTimeout == 0 {
		u.limits.CallTimeout = mcpimport.DefaultLimits().CallTimeout
	}
	for _, t := range cfg.Tools {
		if cfg.optional(t) {
			u.optional[t.Name] = true
		}
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
			BindingID: cfg.Name, BindingRevision: bindingRevision(t, cfg),
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
//
// Whose authority the write reaches its upstream with is part of it when
// it is not the gateway's own (the revisions of those predate the
// choice): an approval given for a write as the gateway does not let it go
// as the caller, nor the other way round.
func bindingRevision(t Tool, u *Upstream) string {
	b, _ := json.Marshal(t)
	if h := u.HTTP; h != nil && h.Credentials != "" && h.Credentials != CredentialsGateway {
		b = append(b, "\x00credentials="+h.Credentials...)
	}
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
		Connections: u.connections, Swaps: u.swaps, Tools: []string{}, Absent: []string{}, Resources: []string{}, Prompts: []string{}, Held: []Change{}}
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
	for _, cat := range u.served.catalogs() {
		for _, e := range cat.Snapshot().Entries() {
			if h, ok := u.held[e.Name]; ok {
				h.Fields = slices.Clone(h.Fields)
				s.Held = append(s.Held, h)
				continue
			}
			s.Tools = append(s.Tools, e.Name)
		}
		for _, a := range cat.Absent() {
			s.Absent = append(s.Absent, a.Name+" ("+string(a.Reason)+")")
		}
	}
	slices.SortFunc(s.Held, func(a, b Change) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// statusNow is status, with g.mu taken.
func (u *upstream) statusNow() UpstreamStatus {
	u.g.mu.Lock()
	defer u.g.mu.Unlock()
	return u.status()
}

// hold compares every tool u's catalogs import with its pin in lock, and
// returns those that are not to be served, by local name. It logs each
// tool it newly holds (or holds for a new reason, or whose definition
// changed again) once, as a warning naming what changed, never the
// upstream's words; and, at info, each it serves again. A tool it held
// that is not imported now (the upstream is down) is logged again only if
// it comes back with another definition. Must be called with g.mu held.
func (u *upstream) hold(lock *Lock) map[string]Change {
	held := map[string]Change{}
	imported := map[string]bool{}
	for _, cat := range u.served.catalogs() {
		for _, e := range cat.Snapshot().Entries() {
			imported[e.Name] = true
			var pin *Pin
			if p, ok := lock.Pin(e.Name); ok {
				pin = &p
			}
			c := compare(pin, Pin{Upstream: u.cfg.Name, Entry: e})
			if c.Reason == "" {
				continue
			}
			held[e.Name] = c
			live, _ := e.Identity() // discovery's entries have one
			key := string(c.Reason) + " " + live + " " + strings.Join(c.Fields, ",")
			if u.warned[e.Name] == key {
				continue
			}
			u.warned[e.Name] = key
			msg := "bound tool held: its definition differs from the one the lock file pins; it is not served until an operator reviews and accepts it (agnara gateway diff, then accept)"
			if c.Reason == ReasonDefinitionUnaccepted {
				msg = "bound tool held: the lock file pins no definition for it; it is not served until an operator reviews and accepts one (agnara gateway diff, then accept)"
			}
			u.logger.Warn(msg, slog.String("tool", e.Name), slog.String("remote", e.RemoteName), slog.String("reason", string(c.Reason)),
				slog.Any("changed", c.Fields), slog.String("identity", live))
		}
	}
	for name := range u.warned {
		// A tool not imported now (its upstream down, or failed) is not
		// served either: what was logged of it stands until it is.
		if _, still := held[name]; !still && imported[name] {
			delete(u.warned, name)
			u.logger.Info("bound tool served: its definition is the one the lock file pins", slog.String("tool", name))
		}
	}
	return held
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
		reason, permanent := classify(err)
		if permanent {
			// A wake-up sent before this failure is not for it
			// (Reload wakes failed upstreams only).
			select {
			case <-u.retry:
			default:
			}
			// Logged before it is published: whoever sees the state can
			// read the line that explains it.
			u.logger.Error("upstream failed: refused for a reason a new session cannot mend; its tools are withdrawn and it is not retried until the gateway is reloaded (SIGHUP)",
				slog.String("reason", string(reason)), slog.String("error", err.Error()))
			u.g.publish(u, served{state: StateFailed, err: err.Error(), reason: reason})
			u.markTried()
			select {
			case <-ctx.Done():
				return
			case <-u.retry:
			}
			u.logger.Info("retrying the failed upstream")
			attempt = -1
			continue
		}
		wait := u.cfg.Restart.Delay(attempt)
		u.logger.Warn("upstream down; retrying", slog.String("reason", string(reason)),
			slog.String("error", err.Error()), slog.Int("attempt", attempt+1), slog.Duration("retry_in", wait))
		u.g.publish(u, served{state: StateDown, err: err.Error(), reason: reason})
		u.markTried()
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
			HTTPClient: httpClient(ctx, h, u.cfg.Limits.MessageBytes, os.LookupEnv, u.source()),
			MaxRetries: -1,
		}, nil
	}
	t := &stdioTransport{upstream: u.cfg.Name, cfg: u.cfg.Stdio, logger: u.g.logger, maxLine: u.cfg.Limits.MessageBytes, lookup: os.LookupEnv}
	return t, t
}

// connect makes one session with the upstream: the handshake within
// connectCtx, the session (and the HTTP client's tokens) for as long as ctx
// lives. stdio is the stdio transport, to report its process's exit; nil
// for HTTP.
func (u *upstream) connect(ctx, connectCtx context.Context) (sess *mcpimport.Session, stdio *stdioTransport, err error) {
	transport, stdio := u.transport(ctx)
	var protocol string
	if u.cfg.HTTP != nil {
		// The newest revision the upstream offers unless the config names
		// one (docs/PERFORMANCE.md, "Gateway"). Tasks are a 2026-07-28
		// extension: the SDK's default asks for it.
		protocol = u.cfg.HTTP.Protocol
		if protocol == "" && !u.tasks {
			protocol = mcpimport.HTTPProtocolVersion
		}
	}
	sess, err = mcpimport.Connect(connectCtx, u.cfg.Name, transport, &mcpimport.ConnectOptions{
		Client: &mcp.Implementation{Name: "agnara-gateway", Version: "1"},
		// Pings find a session the upstream lost, which then ends and is
		// made again.
		ClientOptions:  &mcp.ClientOptions{KeepAlive: sessionKeepAlive},
		Tasks:          u.tasks,
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: protocol},
		Authorizer:     u.authorizer(),
		Credential:     u.credentials(),
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
				return nil, stdio, fmt.Errorf("connecting: %w%s (the process exited: %s)", err, cause, status)
			}
		}
		return nil, stdio, fmt.Errorf("connecting: %w%s", err, cause)
	}
	if v := sess.ProtocolVersion(); u.source() != nil && v != mcpversion.Modern {
		// A handshake-era session belongs upstream to the identity that
		// opened it, the gateway's: no caller's token may ride on it.
		sess.Close()
		return nil, nil, &revisionError{fmt.Sprintf("connecting: the upstream speaks %s, and credentials %s needs %s, where every request stands alone; use credentials: gateway for it", v, u.credentials(), mcpversion.Modern)}
	}
	return sess, stdio, nil
}

// session makes one session and serves it until it ends or ctx is done.
// wasUp reports whether it got as far as serving a catalog.
func (u *upstream) session(ctx context.Context) (wasUp bool, err error) {
	connectCtx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	u.g.mu.Lock()
	u.connections++
	u.g.mu.Unlock()
	sess, stdio, err := u.connect(ctx, connectCtx)
	if err != nil {
		return false, err
	}
	defer sess.Close()
	ended := make(chan error, 1)
	go func() { ended <- sess.ClientSession().Wait() }()

	cur, err := u.discover(connectCtx, sess)
	if err != nil {
		return false, fmt.Errorf("importing: %w", err)
	}
	u.g.publish(u, cur)
	st := u.statusNow()
	u.logger.Info("upstream imported", slog.String("protocol", sess.ClientSession().InitializeResult().ProtocolVersion),
		slog.Any("tools", st.Tools), slog.Any("resources", st.Resources), slog.Any("prompts", st.Prompts),
		slog.Any("absent", st.Absent), slog.Any("held", heldNames(st.Held)))
	// Tried once the import is logged: Start returns (and the gateway
	// says it serves) after the line that says what it imported.
	u.markTried()
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
		// Annotations are outside the digest Renew compares, but pinned.
		renewed := sameAnnotations(cur, next)
		if renewed && cur.reads != nil {
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
		st := u.statusNow()
		u.logger.Info("upstream catalog changed; serving the new one", slog.Any("tools", st.Tools),
			slog.Any("resources", st.Resources), slog.Any("prompts", st.Prompts), slog.Any("absent", st.Absent),
			slog.Any("held", heldNames(st.Held)))
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

// discover imports the bound tools on sess, as the contract says: a
// strict binding that cannot be imported (not listed, a schema outside its
// profile, a description past the limit) fails the import with its own
// reason; an optional one is left out alone and withdrawn with its reason
// until a later import brings it.
func (u *upstream) discover(ctx context.Context, sess *mcpimport.Session) (served, error) {
	s, err := u.importAll(ctx, sess)
	if err != nil {
		return served{}, err
	}
	var strict []error
	for _, cat := range s.catalogs() {
		for _, a := range cat.Absent() {
			if !u.optional[a.Name] {
				strict = append(strict, a.Err)
			}
		}
	}
	if len(strict) > 0 {
		return served{}, fmt.Errorf("a strict binding cannot be imported: %w", errors.Join(strict...))
	}
	return s, nil
}

// importAll imports the bound tools on sess, leaving out every one that
// cannot be imported (AllowAbsent): [upstream.discover] decides what its
// absence means; [Inspect] reports it.
func (u *upstream) importAll(ctx context.Context, sess *mcpimport.Session) (served, error) {
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

// sameAnnotations reports whether two imports list the same annotations
// for every tool.
func sameAnnotations(a, b served) bool {
	ann := func(s served) map[string]string {
		m := map[string]string{}
		for _, cat := range s.catalogs() {
			for _, e := range cat.Snapshot().Entries() {
				m[e.Name] = string(e.Annotations)
			}
		}
		return m
	}
	return maps.Equal(ann(a), ann(b))
}

func heldNames(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name + " (" + string(c.Reason) + ")"
	}
	return out
}

// profile maps a config profile name to mcpimport's.
func profile(name string) mcpimport.Profile {
	if name == "standard" {
		return mcpimport.ProfileStandard
	}
	return mcpimport.ProfileStrict
}
