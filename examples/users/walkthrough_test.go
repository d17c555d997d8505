package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/examples/internal/userservice"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// session compiles the users application and walks through a short session
// in process, printing each outcome.
func session(ctx context.Context, w io.Writer, logger *slog.Logger, store *userservice.Store) error {
	app, caps := userservice.NewApp(store, &agnara.Options{Version: "0.1.0", Logger: logger})
	defer app.Close()
	plans, err := execution.Compile(app)
	if err != nil {
		return err
	}
	plan := func(c *agnara.Capability) *execution.Plan {
		p, _ := plans.Plan(c)
		return p
	}
	reader := policy.NewPrincipal("reader", []string{"users:read"})
	admin := policy.NewPrincipal("admin", []string{"users:read", "users:write", "users:admin"})

	steps := []struct {
		what      string
		plan      *execution.Plan
		principal policy.Principal
		args      string
		confirmed bool
	}{
		{"admin creates Ada", plan(caps.Create), admin, `{"name":"Ada","email":"ada@example.com"}`, false},
		{"admin creates a user with bad input", plan(caps.Create), admin, `{"name":"","email":"not-an-email","role":"root"}`, false},
		{"reader may not create users", plan(caps.Create), reader, `{"name":"Bob","email":"bob@example.com"}`, false},
		{"reader gets user 1", plan(caps.Get), reader, `{"id":"1"}`, false},
		{"reader lists users", plan(caps.List), reader, `{}`, false},
		{"admin deletes user 1 without confirming", plan(caps.Delete), admin, `{"id":"1"}`, false},
		{"admin deletes user 1, confirmed", plan(caps.Delete), admin, `{"id":"1"}`, true},
		{"reader gets user 1 again", plan(caps.Get), reader, `{"id":"1"}`, false},
	}
	for _, s := range steps {
		inv := &execution.Invocation{Principal: s.principal, Arguments: json.RawMessage(s.args)}
		if s.confirmed {
			// An MCP adapter passes the client's answer to the confirmation
			// question, after its sealed request state proved the question
			// was asked for these very arguments.
			inv.Answers = map[string]execution.Answer{execution.ConfirmKey: {
				Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":true}`),
			}}
		}
		out, err := s.plan.Invoke(ctx, inv)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s (%s %s)\n  -> %s\n", s.what, s.plan.Identity(), s.args, describe(out))
	}
	return nil
}

func describe(out execution.Outcome) string {
	switch o := out.(type) {
	case execution.Success:
		if o.Value == nil {
			return "ok"
		}
		b, _ := json.Marshal(o.Value)
		return "ok " + string(b)
	case *execution.InputRequired:
		b, _ := json.Marshal(map[string]any{"input_required": o.Requests})
		return string(b)
	case *execution.Failure:
		m := map[string]any{"code": o.Code, "message": o.Message}
		if o.Details != nil {
			m["details"] = o.Details
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	return fmt.Sprintf("%v", out)
}
