package prommcp

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
	"github.com/prometheus/client_golang/prometheus"
)

// maxPendingCounted bounds the pending approvals a scrape counts: past it
// the gauge reads this value, which is already an alarm.
const maxPendingCounted = 10000

// scrapeTimeout bounds a store query made for a scrape.
const scrapeTimeout = 2 * time.Second

// approvalMetrics are the instruments of approval stores.
type approvalMetrics struct {
	decided, dispatched, completed, errors *prometheus.CounterVec
	// registered: [Metrics.Approvals] registered the approval series;
	// inProcess: with decisions counted by the wrappers (decided), as the
	// first store wrapped cannot count them itself.
	registered, inProcess bool
	// reuse is how long a count of decisions read from the store is
	// reused, given how long the query took; now is the clock. Tests set
	// both.
	reuse func(took time.Duration) time.Duration
	now   func() time.Time
}

func (a *approvalMetrics) init() {
	a.decided = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "approvals", Name: "decided_total",
		Help: decidedHelp}, []string{"decision"})
	a.dispatched = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "approvals", Name: "dispatched_total",
		Help: "Approved writes claimed for dispatch by this process, exactly once each."}, nil)
	a.completed = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "approvals", Name: "completed_total",
		Help: "Writes dispatched by this process whose receipt was recorded, by effect (committed, not_started, unknown)."}, []string{"effect"})
	a.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "approvals", Name: "store_errors_total",
		Help: "Approval store operations of this process that failed for the store's own reasons (not a refused transition), by operation."}, []string{"op"})
	a.decided.WithLabelValues(string(approval.StateApproved))
	a.decided.WithLabelValues(string(approval.StateRejected))
	a.dispatched.WithLabelValues()
	a.reuse, a.now = reuseCount, time.Now
}

// dispatchCollectors are the series of approved writes dispatched: only a
// process serving MCP dispatches, so [Metrics.Handler] and
// [Metrics.Approvals] register them once both are called.
func (a *approvalMetrics) dispatchCollectors() []prometheus.Collector {
	return []prometheus.Collector{a.dispatched, a.completed}
}

const decidedHelp = "Approvals decided, by decision (approved, rejected): read from the approval store, so every process sharing it reports the decisions of all (the inbox's and the command line's included)."

var (
	descPending       = prometheus.NewDesc(Namespace+"_approvals_pending", "Approvals waiting for a decision, read from the store at each scrape (at most 10000 are counted).", nil, nil)
	descOldestPending = prometheus.NewDesc(Namespace+"_approvals_oldest_pending_age_seconds",
		"How long the oldest pending approval counted has waited for a decision; 0 with none pending.", nil, nil)
	descDecided = prometheus.NewDesc(Namespace+"_approvals_decided_total", decidedHelp, []string{"decision"}, nil)
)

// decider is a store that counts its decisions: both of package
// approval's stores are.
type decider interface {
	Decided(ctx context.Context) (approved, rejected int64, err error)
}

// Approvals returns store counting the dispatches, receipts and errors
// of this process, and registers the approval series: the pending
// approvals and the decisions, both read from the first store wrapped at
// each scrape, so that every process sharing the store reports the same
// (a store that cannot count its decisions, as package approval's both
// can, has them counted as this process makes them instead); the
// dispatches and receipts once [Metrics.Handler] is called too (ADR 60).
// The returned store behaves exactly as store; closing it closes store.
// When store keeps an audit trail and an inbox's sign-ins (an
// inbox.Store, as both of package approval's stores are), so does the
// returned store; otherwise it has neither.
func (m *Metrics) Approvals(store approval.Store) approval.Store {
	s := &countedApprovals{Store: store, m: &m.approvals}
	m.onceMu.Lock()
	if !m.approvals.registered {
		cs := []prometheus.Collector{pendingCollector{s}, m.approvals.errors}
		d, ok := store.(decider)
		if ok {
			cs = append(cs, &decidedCollector{d: d, m: &m.approvals})
		} else {
			cs = append(cs, m.approvals.decided)
		}
		if m.handlerOnce {
			cs = append(cs, m.approvals.dispatchCollectors()...)
		}
		if m.register(cs...) == nil {
			m.approvals.registered, m.approvals.inProcess = true, !ok
		}
	}
	s.countDecisions = m.approvals.inProcess
	m.onceMu.Unlock()
	if in, ok := store.(inboxStore); ok {
		return &countedInbox{countedApprovals: s, in: in}
	}
	return s
}

// countedApprovals is an approval.Store counting into approvalMetrics.
type countedApprovals struct {
	approval.Store
	m *approvalMetrics
	// countDecisions: decisions are counted here, as they are made (the
	// store wrapped first cannot count them).
	countDecisions bool
}

// refusals are the errors a store returns for a transition the lifecycle
// refuses: answers, not failures of the store.
var refusals = []error{approval.ErrNotFound, approval.ErrInvalid, approval.ErrConflict, approval.ErrSelfApproval,
	approval.ErrNotAuthorized, approval.ErrNotPending, approval.ErrNotApproved, approval.ErrExpired,
	approval.ErrBindingChanged, approval.ErrAlreadyClaimed, approval.ErrNotClaimed, approval.ErrEvidenceRequired}

// failed counts err under op when it is the store's own failure.
func (s *countedApprovals) failed(op string, err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	for _, r := range refusals {
		if errors.Is(err, r) {
			return
		}
	}
	s.m.errors.WithLabelValues(op).Inc()
}

func (s *countedApprovals) Prepare(ctx context.Context, in approval.Intent) (approval.Approval, error) {
	a, err := s.Store.Prepare(ctx, in)
	s.failed("prepare", err)
	return a, err
}

func (s *countedApprovals) Get(ctx context.Context, id string) (approval.Approval, error) {
	a, err := s.Store.Get(ctx, id)
	s.failed("get", err)
	return a, err
}

func (s *countedApprovals) Latest(ctx context.Context, key string) (approval.Approval, bool, error) {
	a, ok, err := s.Store.Latest(ctx, key)
	s.failed("latest", err)
	return a, ok, err
}

func (s *countedApprovals) List(ctx context.Context, f approval.Filter) ([]approval.Approval, error) {
	as, err := s.Store.List(ctx, f)
	s.failed("list", err)
	return as, err
}

func (s *countedApprovals) Approve(ctx context.Context, id string, approver policy.Principal, note string) (approval.Approval, error) {
	a, err := s.Store.Approve(ctx, id, approver, note)
	s.failed("approve", err)
	if err == nil && s.countDecisions {
		s.m.decided.WithLabelValues(string(approval.StateApproved)).Inc()
	}
	return a, err
}

func (s *countedApprovals) Reject(ctx context.Context, id string, approver policy.Principal, note string) (approval.Approval, error) {
	a, err := s.Store.Reject(ctx, id, approver, note)
	s.failed("reject", err)
	if err == nil && s.countDecisions {
		s.m.decided.WithLabelValues(string(approval.StateRejected)).Inc()
	}
	return a, err
}

func (s *countedApprovals) Cancel(ctx context.Context, id string, by policy.Principal, note string) (approval.Approval, error) {
	a, err := s.Store.Cancel(ctx, id, by, note)
	s.failed("cancel", err)
	return a, err
}

func (s *countedApprovals) Claim(ctx context.Context, id string, current approval.Binding) (approval.Approval, error) {
	a, err := s.Store.Claim(ctx, id, current)
	s.failed("claim", err)
	if err == nil {
		s.m.dispatched.WithLabelValues().Inc()
	}
	return a, err
}

func (s *countedApprovals) Complete(ctx context.Context, id string, r approval.Receipt) (approval.Approval, error) {
	a, err := s.Store.Complete(ctx, id, r)
	s.failed("complete", err)
	if err == nil {
		s.m.completed.WithLabelValues(string(r.Effect)).Inc()
	}
	return a, err
}

func (s *countedApprovals) Reconcile(ctx context.Context, id string, approver policy.Principal, effect approval.EffectState, evidence string) (approval.Approval, error) {
	a, err := s.Store.Reconcile(ctx, id, approver, effect, evidence)
	s.failed("reconcile", err)
	return a, err
}

// pendingCollector counts a store's pending approvals at scrape time,
// and tells how long the oldest has waited.
type pendingCollector struct{ s *countedApprovals }

func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descPending
	ch <- descOldestPending
}

// Collect lists the pending approvals, newest first; when the store cannot
// answer, the gauges are left out of the scrape (a gap, not a false zero)
// and the error is counted.
func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	as, err := c.s.List(ctx, approval.Filter{State: approval.StatePending, Limit: maxPendingCounted})
	if err != nil {
		return
	}
	gauge(ch, descPending, float64(len(as)))
	oldest := 0.0
	if len(as) > 0 {
		oldest = max(0, c.s.m.now().Sub(as[len(as)-1].CreatedAt).Seconds())
	}
	gauge(ch, descOldestPending, oldest)
}

// reuseCount is how long a count of decisions that took took is reused:
// 5 s, so that two Prometheus servers scraping one process, or a scrape
// retried, cost one query; or ten times as long as the query took when
// that is longer, so that the store spends at most a tenth of its time
// counting for a process, however many approvals it holds.
func reuseCount(took time.Duration) time.Duration { return max(5*time.Second, 10*took) }

// decidedCollector reads the decisions from the store at scrape time,
// one query at a time, reusing a count as reuseCount says.
type decidedCollector struct {
	d decider
	m *approvalMetrics

	mu                 sync.Mutex
	approved, rejected int64
	until              time.Time // the count is reused until then; zero: none
}

func (c *decidedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descDecided }

// Collect reports the count, counting again once the last is stale; when
// the store cannot answer, the series are left out of the scrape (a gap,
// not a false value) and the error is counted under op "decided".
func (c *decidedCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if start := c.m.now(); c.until.IsZero() || !start.Before(c.until) {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		approved, rejected, err := c.d.Decided(ctx)
		cancel()
		if err != nil {
			c.until = time.Time{}
			c.m.errors.WithLabelValues("decided").Inc()
			return
		}
		c.approved, c.rejected = approved, rejected
		c.until = start.Add(c.m.reuse(c.m.now().Sub(start)))
	}
	counter(ch, descDecided, float64(c.approved), string(approval.StateApproved))
	counter(ch, descDecided, float64(c.rejected), string(approval.StateRejected))
}

// inboxStore is what package approval/inbox keeps its approvals in
// (inbox.Store, declared here so that metrics need not import the inbox):
// an approval store with its audit trail and sign-ins, as both of package
// approval's stores are.
type inboxStore interface {
	approval.Store
	Events(ctx context.Context, id string) ([]approval.Event, error)
	SaveSignIn(ctx context.Context, key string, in approval.SignIn) error
	LoadSignIn(ctx context.Context, key string) (approval.SignIn, error)
	EndSignIn(ctx context.Context, key string) error
}

// countedInbox is a counted store whose wrapped store is an inboxStore:
// it keeps the audit trail and the sign-ins, counting their errors, so
// that a counted store still serves package approval/inbox.
type countedInbox struct {
	*countedApprovals
	in inboxStore
}

// Events returns the wrapped store's audit trail of the approval with id.
func (s *countedInbox) Events(ctx context.Context, id string) ([]approval.Event, error) {
	evs, err := s.in.Events(ctx, id)
	s.failed("events", err)
	return evs, err
}

// SaveSignIn keeps an inbox's sign-in in the wrapped store.
func (s *countedInbox) SaveSignIn(ctx context.Context, key string, in approval.SignIn) error {
	err := s.in.SaveSignIn(ctx, key, in)
	s.failed("save_signin", err)
	return err
}

// LoadSignIn reads an inbox's sign-in from the wrapped store.
func (s *countedInbox) LoadSignIn(ctx context.Context, key string) (approval.SignIn, error) {
	in, err := s.in.LoadSignIn(ctx, key)
	s.failed("load_signin", err)
	return in, err
}

// EndSignIn ends an inbox's sign-in in the wrapped store.
func (s *countedInbox) EndSignIn(ctx context.Context, key string) error {
	err := s.in.EndSignIn(ctx, key)
	s.failed("end_signin", err)
	return err
}
