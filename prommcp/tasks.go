package prommcp

import (
	"context"
	"errors"

	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/prometheus/client_golang/prometheus"
)

// taskMetrics are the instruments of task stores.
type taskMetrics struct {
	statuses, errors *prometheus.CounterVec
	registered       bool // [Metrics.Tasks] registered them
}

func (t *taskMetrics) init() {
	t.statuses = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "tasks", Name: "status_total",
		Help: "Tasks that entered each status (working at creation; input_required, completed, failed, cancelled)."}, []string{"status"})
	t.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "tasks", Name: "store_errors_total",
		Help: "Task store operations that failed because the store could not answer, by operation."}, []string{"op"})
	for _, s := range []tasks.Status{tasks.Working, tasks.InputRequired, tasks.Completed, tasks.Failed, tasks.Cancelled} {
		t.statuses.WithLabelValues(string(s))
	}
}

// Tasks returns store counting the statuses its tasks enter and its
// failures to answer, and registers the task series: until it is called
// none is exported (a process without tasks has none). The returned
// store behaves exactly as store, and
// keeps its optional interfaces: when store is a [tasks.Changes] (as
// package redistasks's is), so is the returned store, so that status
// notifications still reach listeners on other instances.
func (m *Metrics) Tasks(store tasks.Store) tasks.Store {
	c := &countedTasks{Store: store, m: &m.tasks}
	m.onceMu.Lock()
	if !m.tasks.registered && m.register(m.tasks.statuses, m.tasks.errors) == nil {
		m.tasks.registered = true
	}
	m.onceMu.Unlock()
	if ch, ok := store.(tasks.Changes); ok {
		return &countedChangingTasks{countedTasks: c, Changes: ch}
	}
	return c
}

// countedChangingTasks is a countedTasks whose store also tells other
// instances of changes.
type countedChangingTasks struct {
	*countedTasks
	tasks.Changes
}

// countedTasks is a tasks.Store counting into taskMetrics.
type countedTasks struct {
	tasks.Store
	m *taskMetrics
}

// failed counts err under op when the store could not answer.
func (s *countedTasks) failed(op string, err error) {
	if errors.Is(err, tasks.ErrUnavailable) {
		s.m.errors.WithLabelValues(op).Inc()
	}
}

func (s *countedTasks) Create(ctx context.Context, t *tasks.Task) error {
	err := s.Store.Create(ctx, t)
	s.failed("create", err)
	if err == nil {
		s.m.statuses.WithLabelValues(string(t.Status)).Inc()
	}
	return err
}

func (s *countedTasks) Get(ctx context.Context, id string) (*tasks.Task, error) {
	t, err := s.Store.Get(ctx, id)
	s.failed("get", err)
	return t, err
}

// Update counts the status the task enters, when change moves it: the
// status change saw last is the one stored (a shared store may call change
// again when another writer got there first).
func (s *countedTasks) Update(ctx context.Context, id string, change func(*tasks.Task) error) (*tasks.Task, error) {
	var before tasks.Status
	t, err := s.Store.Update(ctx, id, func(t *tasks.Task) error {
		before = t.Status
		return change(t)
	})
	s.failed("update", err)
	if err == nil && t.Status != before {
		s.m.statuses.WithLabelValues(string(t.Status)).Inc()
	}
	return t, err
}
