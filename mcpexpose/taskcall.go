package mcpexpose

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// invoked is the end of one invocation.
type invoked struct {
	out execution.Outcome
	err error
}

// callTask runs a tools/call of a task tool for a client that declared the
// extension. Every check runs as for a direct call; the task is created
// when the invocation detaches (execution.Invocation.Detach), and the
// tools/call is answered with it. An invocation that ends before
// detaching — a refusal, a question asked before the task, a fast handler
// of a TaskAfterQuestions tool — is answered as a direct call is: the
// returned *mcp.CallToolResult, for the SDK to finish.
//
// A call past TaskOptions.MaxTasks or MaxTasksPerPrincipal is refused
// first, before its request state is opened or anything runs.
func (s *server) callTask(ctx context.Context, req *mcp.CallToolRequest, t *tool, p policy.Principal, adm execution.Admission, route callRoute) (mcp.Result, *mcp.CallToolResult, agnara.Label, error) {
	tr := s.tasks
	slot, refused := tr.reserve(ctx, p)
	if refused != nil {
		return nil, projection.Failure(refused), execution.LabelOf(refused), nil
	}
	started := false // the slot passes to the task's run
	defer func() {
		if !started {
			tr.release(slot)
		}
	}()
	round := new(callRound)
	if err := s.openRound(ctx, req, t, p, round); err != nil {
		return nil, nil, agnara.LabelError, err
	}
	run := &localRun{wake: make(chan struct{}, 1)}
	inv := new(execution.Invocation) // the task's: it outlives the request
	*inv = s.invocation(req, p, adm, round, route)
	inv.Progress, inv.DetachByHandler = &run.progress, t.askFirst
	// What the client supports, read now: the invocation, which may
	// outlive the request, keeps that and not the request itself.
	caps := req.ClientCapabilities()
	inv.Supports = func(k execution.InputKind) bool { return supports(caps, k) }
	// The invocation outlives the request once detached; until then the
	// request's end cancels it.
	taskCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	var rec *tasks.Task
	detached := make(chan error, 1)
	inv.Detach = func() {
		var err error
		if err = ctx.Err(); err == nil {
			rec, err = tr.create(taskCtx, t, p)
		}
		if err != nil {
			cancel(err)
		}
		detached <- err
	}
	done := make(chan invoked, 1)
	go func() {
		out, err := t.plan.Invoke(taskCtx, inv)
		done <- invoked{out, err}
	}()
	var first *invoked
	var derr error
	select {
	case r := <-done:
		select {
		case derr = <-detached: // detached, then finished at once
			first = &r
		default:
			cancel(nil)
			if r.err != nil {
				return nil, nil, execution.LabelOf(nil), r.err
			}
			if ir, ok := r.out.(*execution.InputRequired); ok {
				res, err := s.interact(ctx, req, t, round, ir)
				return nil, res, execution.LabelOf(r.out), err
			}
			res, label, err := s.result(ctx, t, r.out)
			return nil, res, label, err
		}
	case derr = <-detached:
	case <-ctx.Done():
		cancel(context.Cause(ctx))
		<-done // the handler's cleanup has run
		return nil, nil, execution.LabelOf(nil), ctx.Err()
	}
	if derr != nil {
		if first == nil {
			go func() { <-done }() // it ends: its context is cancelled
		}
		if errors.Is(derr, tasks.ErrUnavailable) {
			s.logger.LogAttrs(ctx, slog.LevelError, "task store unavailable", slog.Any("error", derr))
			return nil, nil, agnara.LabelError, errTaskStore
		}
		return nil, nil, execution.LabelOf(nil), derr
	}
	started = true
	// The run is known before the task is answered: a tasks/cancel the
	// client sends as soon as it reads the id must find it to wake
	// (taskRunner.poke), whenever its goroutine starts.
	tr.mu.Lock()
	tr.runs[rec.ID] = run
	tr.mu.Unlock()
	go tr.run(taskCtx, cancel, slot, rec, t, inv, caps, run, done, first)
	return createdResult(tr.view(rec)), nil, agnara.LabelOK, nil
}

// create stores a new working task for p.
func (tr *taskRunner) create(ctx context.Context, t *tool, p policy.Principal) (*tasks.Task, error) {
	now := tr.opts.Now()
	rec := &tasks.Task{
		ID:              randomID(18),
		PrincipalID:     p.ID(),
		PrincipalIssuer: p.Issuer(),
		Tool:            t.name,
		Status:          tasks.Working,
		CreatedAt:       now,
		UpdatedAt:       now,
		ExpiresAt:       now.Add(tr.opts.TTL),
		PollInterval:    tr.pollInterval(),
		Instance:        tr.instance,
		Heartbeat:       now,
	}
	if err := tr.store.Create(ctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// pollInterval is the polling interval suggested to clients: the
// configured one, or the interval of the tasks/get rate limit when that is
// longer, so that a client that polls a task as suggested is never
// refused.
func (tr *taskRunner) pollInterval() time.Duration {
	poll := tr.opts.PollInterval
	if l := tr.s.opts.RateLimit; !l.IsZero() {
		every := math.Ceil(float64(time.Second) / l.Rate)
		if every >= float64(tr.opts.TTL) {
			return tr.opts.TTL
		}
		poll = max(poll, time.Duration(every))
	}
	return poll
}
