// Package tasks holds the state of long-running tool calls served through
// the MCP tasks extension (io.modelcontextprotocol/tasks): the [Task]
// record, the [Store] that shares it between the instances of a server, and
// an in-memory store for one process.
//
// The store is deliberately small — create, get, and an atomic
// read-modify-write — so that every rule about tasks (who may see one, how
// answers and cancellation reach the instance running it, when a silent
// instance is declared dead) has one owner, package mcpexpose, whatever the
// store. Package redistasks shares tasks between instances through Redis.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"
)

// Status is a task's status, as the extension names it.
type Status string

// The statuses of the extension. Completed, Failed and Cancelled are
// terminal: a task that reached one never changes again.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is final.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Task is the shared record of one task. Only package mcpexpose interprets
// it; stores keep it as it is given (JSON-encoded, for shared stores).
type Task struct {
	ID string `json:"id"`
	// PrincipalID and PrincipalIssuer name the caller that created the
	// task: no one else is told it exists.
	PrincipalID     string `json:"principal"`
	PrincipalIssuer string `json:"issuer,omitempty"`
	// Tool is the wire name of the tool called.
	Tool          string    `json:"tool"`
	Status        Status    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	// ExpiresAt is when the store forgets the task (CreatedAt + its TTL).
	ExpiresAt time.Time `json:"expiresAt"`
	// PollInterval is the polling interval suggested to clients.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// Result is the final tools/call result of a Completed task; Error
	// the JSON-RPC error object of a Failed one.
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	// InputRequests are the questions still unanswered, keyed, as sent to
	// clients, while the task is InputRequired.
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Responses are the answers received and not yet taken by the instance
	// running the task.
	Responses map[string]json.RawMessage `json:"responses,omitempty"`
	// CancelRequested records a tasks/cancel not yet acted on.
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// Instance identifies the instance running the task, and Heartbeat is
	// when it last said it still does.
	Instance  string    `json:"instance,omitempty"`
	Heartbeat time.Time `json:"heartbeat"`
}

// clone returns a deep copy of t.
func (t *Task) clone() *Task {
	c := *t
	c.Result = cloneRaw(t.Result)
	c.Error = cloneRaw(t.Error)
	c.InputRequests = cloneMap(t.InputRequests)
	c.Responses = cloneMap(t.Responses)
	return &c
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

func cloneMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	c := maps.Clone(m)
	for k, v := range c {
		c[k] = cloneRaw(v)
	}
	return c
}

// Errors a Store reports.
var (
	// ErrNotFound: no such task, or it expired.
	ErrNotFound = errors.New("tasks: no such task")
	// ErrExists: Create was given an id already stored.
	ErrExists = errors.New("tasks: task id already exists")
	// ErrUnavailable wraps every failure of a shared store to answer
	// (network, timeout, bad record). Callers fail closed on it.
	ErrUnavailable = errors.New("tasks: task store unavailable")
)

// Store keeps tasks until they expire (their ExpiresAt). Implementations
// must be safe for concurrent use, by every instance of a server when
// shared.
type Store interface {
	// Create stores a new task; it returns once a Get of its id, on any
	// instance, finds it (the extension's durable creation).
	Create(ctx context.Context, t *Task) error
	// Get returns a copy of the task with id, or ErrNotFound.
	Get(ctx context.Context, id string) (*Task, error)
	// Update applies change to the stored task atomically and stores the
	// result, which it returns. change may be called more than once (a
	// shared store retries when another writer got there first) and must
	// depend on nothing but its argument. An error from change is returned
	// as is and nothing is stored; ErrNotFound when the task is gone.
	Update(ctx context.Context, id string, change func(*Task) error) (*Task, error)
}

// Changes is implemented by a [Store] shared between instances that can
// also tell every instance when a task changed, so that a change made
// through one instance (a task's runner asking, finishing; a tasks/update
// through another) reaches the clients listening for it on any other
// (notifications/tasks on a subscriptions/listen stream). A store without
// it serves one process, whose own changes need no telling.
//
// What is told is a task id and who told it, never the task: a listener's
// instance reads the task from the store and checks who may see it, as
// tasks/get does. Telling is best effort: a change told while an instance
// was not subscribed (its connection to the store dropped) does not reach
// that instance's listeners, who still see it by polling tasks/get.
type Changes interface {
	// Changed tells every subscribed instance, this one included, that
	// the task with id changed; from identifies the instance telling.
	Changed(ctx context.Context, from, id string) error
	// Subscribe calls f with every change told by any instance until ctx
	// ends, one call at a time. It returns once subscribed, so that a
	// change told after it returns is not missed, or the error that
	// prevented it.
	Subscribe(ctx context.Context, f func(from, id string)) error
}
