package mcpexpose

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PromptOptions configures one prompt: a capability whose result is the
// prompt's messages ([]execution.Message; []execution.Content or a string
// for messages that are all the user's) and whose input fields are the
// prompt's arguments, by their JSON names, with their descriptions, required
// unless omitempty. Arguments arrive as strings; one for a number, integer
// or boolean field is converted first. A nil *PromptOptions means the
// defaults.
type PromptOptions struct {
	// Name is the prompt's wire name, as for [ToolOptions.Name], unique
	// among the exposure's prompts. Default: the capability's identity.
	Name string
	// Complete suggests values for arguments, by argument name, answering
	// completion/complete for this prompt (see [Completer]).
	Complete map[string]Completer
}

// Prompt declares c as a prompt (see [PromptOptions]).
func (e *Exposure) Prompt(c *agnara.Capability, opts *PromptOptions) {
	d := featureDecl{kind: promptKind, cap: c, site: site.Caller(1)}
	if opts != nil {
		d.prompt = *opts
		d.prompt.Complete = cloneCompleters(opts.Complete)
	}
	e.declare(d, "mcpexpose.Prompt", d.prompt.Name)
}

// prompt is one compiled prompt.
type prompt struct {
	name     string
	site     site.Site
	plan     *execution.Plan
	args     []argument
	def      mcp.Prompt
	digest   string
	complete map[string]Completer
}

func newPrompt(d featureDecl, name string, p *execution.Plan) (*prompt, error) {
	if !registry.Facts(p).ReturnsContent && p.OutputSchema() == nil {
		return nil, fmt.Errorf("a prompt's capability must return its messages ([]execution.Message, []execution.Content or string), not only an error")
	}
	args, err := inputArguments(p.InputSchema())
	if err != nil {
		return nil, err
	}
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.name
	}
	if err := checkCompleters(d.prompt.Complete, names, "prompt argument"); err != nil {
		return nil, err
	}
	pr := &prompt{name: name, site: d.site, plan: p, args: args, complete: d.prompt.Complete}
	o := p.Capability().Options()
	pr.def = mcp.Prompt{Name: name, Title: o.Title, Description: o.Description}
	for _, a := range args {
		pr.def.Arguments = append(pr.def.Arguments, &mcp.PromptArgument{Name: a.name, Description: a.description, Required: a.required})
	}
	pr.digest = featureDigest(p, &pr.def)
	return pr, nil
}

// project returns a detached copy of the prompt's definition.
func (pr *prompt) project() *mcp.Prompt {
	def := pr.def
	def.Arguments = make([]*mcp.PromptArgument, len(pr.def.Arguments))
	for i, a := range pr.def.Arguments {
		c := *a
		def.Arguments[i] = &c
	}
	if len(def.Arguments) == 0 {
		def.Arguments = nil
	}
	return &def
}

// Prompts projects every prompt to an SDK definition, in declaration
// order, as fresh copies.
func (s *Snapshot) Prompts() []*mcp.Prompt {
	out := make([]*mcp.Prompt, len(s.prompts))
	for i, pr := range s.prompts {
		out[i] = pr.project()
	}
	return out
}

func unknownPrompt(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
}

// listPrompts answers prompts/list for p.
func (s *server) listPrompts(e *epoch, req mcp.Request, p policy.Principal) (mcp.Result, error) {
	if params, _ := req.GetParams().(*mcp.ListPromptsParams); params != nil && params.Cursor != "" {
		return nil, errCursor
	}
	res := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
	for _, pr := range e.snap.prompts {
		if pr.plan.Allows(p) {
			res.Prompts = append(res.Prompts, pr.project())
		}
	}
	res.Cacheable = e.cacheable()
	return res, nil
}

// getPrompt answers prompts/get for p: the prompt's messages, or, for a
// prompt that does not exist or that p may not see, the same -32602 error.
func (s *server) getPrompt(ctx context.Context, e *epoch, req *mcp.GetPromptRequest, p policy.Principal) (*mcp.GetPromptResult, error) {
	name := req.Params.Name
	pr, ok := e.snap.byPrompt[name]
	if !ok {
		return nil, unknownPrompt(name)
	}
	adm, admitted := pr.plan.Admit(p)
	if !admitted {
		return nil, unknownPrompt(name)
	}
	out, err := s.invokeFeature(ctx, req, featureCall{
		method: "prompts/get", target: name, digest: pr.digest, plan: pr.plan, adm: adm, p: p,
		args: argumentsJSON(pr.args, req.Params.Arguments), state: req.Params.RequestState, responses: req.Params.InputResponses,
	})
	if err != nil {
		return nil, err
	}
	if out.asked != nil {
		return promptFinished(req, &mcp.GetPromptResult{InputRequests: out.asked, RequestState: out.state}), nil
	}
	switch o := out.outcome.(type) {
	case execution.Success:
		msgs, err := promptMessages(o)
		if err != nil {
			s.logger.LogAttrs(ctx, slog.LevelError, "prompt messages cannot be projected", slog.String("prompt", name), slog.Any("error", err))
			return nil, failureError(execution.Fail(execution.InternalFailure, "", nil), "name", name)
		}
		return promptFinished(req, &mcp.GetPromptResult{Description: pr.def.Description, Messages: msgs}), nil
	case *execution.Failure:
		return nil, failureError(o, "name", name)
	}
	return nil, failureError(execution.Fail(execution.InternalFailure, "", nil), "name", name)
}

// promptMessages projects a prompt capability's result.
func promptMessages(out execution.Success) ([]*mcp.PromptMessage, error) {
	var msgs []execution.Message
	switch v := out.Value.(type) {
	case nil:
		for _, c := range out.Content {
			msgs = append(msgs, execution.Message{Role: execution.User, Content: c})
		}
	case []execution.Message:
		msgs = v
	case string:
		msgs = []execution.Message{{Role: execution.User, Content: execution.Text{Text: v}}}
	default:
		return nil, fmt.Errorf("%w: a prompt returns []execution.Message, []execution.Content or string, not %T", projection.ErrProjection, out.Value)
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: a prompt without messages", projection.ErrProjection)
	}
	res := make([]*mcp.PromptMessage, len(msgs))
	for i, m := range msgs {
		if m.Role != execution.User && m.Role != execution.Assistant {
			return nil, fmt.Errorf("%w: message %d has role %q, want user or assistant", projection.ErrProjection, i, m.Role)
		}
		if m.Content == nil {
			return nil, fmt.Errorf("%w: message %d has no content", projection.ErrProjection, i)
		}
		res[i] = &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: projection.Content([]execution.Content{m.Content})[0]}
	}
	return res, nil
}
