package mcpexpose

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCompletions is the most values one completion answer carries (the
// protocol's limit); more are reported as hasMore with their total.
const maxCompletions = 100

// Completer suggests values for one prompt argument or template variable,
// given what the user typed so far. It runs for callers who may see the
// prompt or template, with the caller's principal in ctx
// ([policy.PrincipalFrom]); it must bound its own work. An error answers
// the request with a JSON-RPC internal error and is logged, not sent.
type Completer func(ctx context.Context, req CompletionRequest) ([]string, error)

// CompletionRequest is what a [Completer] completes.
type CompletionRequest struct {
	// Argument is the argument's (or variable's) name.
	Argument string
	// Value is what the user typed so far.
	Value string
	// Arguments are the values already chosen for the other arguments, as
	// the client sent them (untrusted).
	Arguments map[string]string
}

func cloneCompleters(m map[string]Completer) map[string]Completer {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// checkCompleters refuses completers for names that are not arguments, and
// nil ones.
func checkCompleters(m map[string]Completer, names []string, what string) error {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(names, name) {
			return fmt.Errorf("completer for %q (in Complete), which is not a %s (want one of %q)", name, what, names)
		}
		if m[name] == nil {
			return fmt.Errorf("the completer for %q (in Complete) is nil", name)
		}
	}
	return nil
}

// hasCompleters reports whether some prompt or template completes.
func (s *Snapshot) hasCompleters() bool {
	for _, pr := range s.prompts {
		if len(pr.complete) > 0 {
			return true
		}
	}
	for _, t := range s.templates {
		if len(t.complete) > 0 {
			return true
		}
	}
	return false
}

// complete answers completion/complete for p. A reference to a prompt or
// template p may not see is answered as one that does not exist; an
// argument without a completer gets no values. Each request is counted
// against ServerOptions.RateLimit first (limitRequest), malformed ones too.
func (s *server) complete(ctx context.Context, e *epoch, req *mcp.CompleteRequest, p policy.Principal) (*mcp.CompleteResult, error) {
	if f := s.limitRequest(ctx, "completion/complete", p); f != nil {
		return nil, failureError(f, "method", "completion/complete")
	}
	params := req.Params
	if params == nil || params.Ref == nil || params.Argument.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs ref and argument.name"}
	}
	var completers map[string]Completer
	switch params.Ref.Type {
	case "ref/prompt":
		pr, ok := e.snap.byPrompt[params.Ref.Name]
		if !ok || !pr.plan.Allows(p) {
			return nil, unknownPrompt(params.Ref.Name)
		}
		completers = pr.complete
	case "ref/resource":
		i := slices.IndexFunc(e.snap.templates, func(t *resourceTemplate) bool { return t.def.URITemplate == params.Ref.URI })
		if i < 0 || !e.snap.templates[i].plan.Allows(p) {
			return nil, resourceNotFound(params.Ref.URI)
		}
		completers = e.snap.templates[i].complete
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown reference type %q", params.Ref.Type)}
	}
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	c := completers[params.Argument.Name]
	if c == nil {
		return res, nil
	}
	cr := CompletionRequest{Argument: params.Argument.Name, Value: params.Argument.Value}
	if params.Context != nil {
		cr.Arguments = maps.Clone(params.Context.Arguments)
	}
	values, err := c(policy.WithPrincipal(ctx, p), cr)
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelError, "completer failed", slog.String("argument", params.Argument.Name), slog.Any("error", err))
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "completion failed"}
	}
	if len(values) > maxCompletions {
		res.Completion.Total, res.Completion.HasMore = len(values), true
		values = values[:maxCompletions]
	}
	res.Completion.Values = append(res.Completion.Values, values...)
	return res, nil
}
