package mcpimport

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PromptBinding is the host's explicit declaration for one remote prompt
// it imports: under which local name and title it is got, and which scopes
// a caller must hold.
type PromptBinding struct {
	// Name is the local capability name (a letter followed by at most 31
	// letters, digits, '_' or '-'), unique among the catalog's resources,
	// templates and prompts. mcpexpose publishes the prompt under the
	// capability's identity, "<app>.<name>". Required.
	Name string
	// Title is published as the prompt's title. Required.
	Title string
	// Description, when set, is published instead of the remote
	// description, which is still part of the snapshot and its digest.
	// Default: the remote description, else Title.
	Description string
	// Scopes are the local scopes a caller must hold, all of them, to see
	// the prompt listed or get it.
	Scopes []string
}

// PromptEntry is one imported prompt in a [Snapshot]: the host's
// declarations and the remote definition, covered by the snapshot's digest.
type PromptEntry struct {
	// Name is the local name.
	Name string
	// RemoteName is the remote prompt's name: the binding's key.
	RemoteName string
	// Title is the binding's title.
	Title string
	// Description is the remote description, as listed.
	Description string
	// Arguments are the remote prompt's arguments, in its order.
	Arguments []PromptArgument
}

// PromptArgument is one argument of an imported prompt, as the remote
// server lists it.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// maxPromptArguments is the most arguments an imported prompt may have.
const maxPromptArguments = 64

// promptArgumentName is what an imported prompt's argument may be called:
// it becomes a property of the capability's input schema.
var promptArgumentName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// prompt is one imported prompt, ready to get.
type prompt struct {
	cat         *Catalog
	entry       PromptEntry
	input       json.RawMessage // the capability's input schema: the arguments
	description string          // the binding's
	scopes      []string
}

// check reports what is wrong with the binding of remote prompt name.
func (b *PromptBinding) check(remote string) *Error {
	switch {
	case remote == "":
		return newError(BindingInvalid, "", "a prompt binding has an empty remote prompt name")
	case !localNamePattern.MatchString(b.Name):
		return featureError(promptKind, BindingInvalid, remote, "local name %q: want a letter followed by at most 31 letters, digits, '_' or '-'", b.Name)
	case strings.TrimSpace(b.Title) == "":
		return featureError(promptKind, BindingInvalid, remote, "the binding has no title")
	}
	return nil
}

func (b *PromptBinding) selection(remote string) featureSelection {
	return featureSelection{kind: promptKind, remote: remote, name: b.Name, title: b.Title, description: b.Description, scopes: slices.Clone(b.Scopes)}
}

// newPrompt checks one selected remote prompt against the limits.
func newPrompt(c *Catalog, s featureSelection, def *mcp.Prompt, limits Limits) (*prompt, []error) {
	var errs []error
	if len(def.Description) > limits.DescriptionBytes {
		errs = append(errs, featureError(promptKind, DescriptionTooLarge, s.remote, "the description is larger than %d bytes", limits.DescriptionBytes))
	}
	if len(def.Arguments) > maxPromptArguments {
		errs = append(errs, featureError(promptKind, DefinitionUnsupported, s.remote, "the prompt has %d arguments, more than %d", len(def.Arguments), maxPromptArguments))
	}
	args := make([]PromptArgument, 0, len(def.Arguments))
	seen := map[string]bool{}
	for i, a := range def.Arguments {
		switch {
		case a == nil:
			errs = append(errs, featureError(promptKind, DefinitionUnsupported, s.remote, "argument %d is null", i))
			continue
		case !promptArgumentName.MatchString(a.Name):
			errs = append(errs, featureError(promptKind, DefinitionUnsupported, s.remote, "argument name %s: want 1 to 64 letters, digits, '_', '.' or '-'", quote(a.Name)))
		case seen[a.Name]:
			errs = append(errs, featureError(promptKind, DefinitionUnsupported, s.remote, "argument %q is listed twice", a.Name))
		case len(a.Description) > limits.DescriptionBytes:
			errs = append(errs, featureError(promptKind, DescriptionTooLarge, s.remote, "the description of argument %q is larger than %d bytes", a.Name, limits.DescriptionBytes))
		}
		seen[a.Name] = true
		args = append(args, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	p := &prompt{cat: c, description: s.description, scopes: s.scopes, input: argumentsSchema(args)}
	p.entry = PromptEntry{Name: s.name, RemoteName: s.remote, Title: s.title, Description: def.Description, Arguments: args}
	return p, nil
}

// argumentsSchema is the input schema of a prompt's capability: one string
// property per argument, in the remote order, with its description,
// required as the remote server says.
func argumentsSchema(args []PromptArgument) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(a.Name)
		b.Write(name)
		b.WriteString(`:{"type":"string"`)
		if a.Description != "" {
			desc, _ := json.Marshal(a.Description) // a string: it encodes
			b.WriteString(`,"description":`)
			b.Write(desc)
		}
		b.WriteByte('}')
		if a.Required {
			required = append(required, a.Name)
		}
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		req, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(req)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes()
}

// RegisterPrompts registers every prompt of the catalog with app, each as
// a read-only capability named by its binding, whose input fields are the
// prompt's arguments (strings), guarded by the binding's scopes, and
// returns them in snapshot order, for the host to declare to its exposure
// (for mcpexpose, Exposure.Prompt).
//
// A get sends one prompts/get with the arguments given and checks the
// answer: one or more messages, at most Limits.ContentBlocks, each of role
// user or assistant with one content block of text, an image (image/*),
// audio (audio/*), an embedded resource (text or a blob, at a URI) or a
// resource link (a URI and a name), all of them within Limits.ObjectBytes.
// Embedded resources and links keep the remote URIs they name; nothing
// else of the remote answer is passed on (its description is the
// binding's, annotations are dropped). Anything else fails closed with a
// call reason ([ReasonResultInvalid], [ReasonResultUnsupported],
// [ReasonResultTooLarge], [ReasonInvalidArguments] when the remote server
// refuses the arguments).
func (c *Catalog) RegisterPrompts(app *agnara.App) []*agnara.Capability {
	out := make([]*agnara.Capability, 0, len(c.prompts))
	for _, p := range c.prompts {
		out = append(out, app.Capability(p.get, &agnara.CapabilityOptions{
			Name:        p.entry.Name,
			Title:       p.entry.Title,
			Description: cmp.Or(p.description, p.entry.Description, p.entry.Title),
			Scopes:      slices.Clone(p.scopes),
			InputSchema: slices.Clone(p.input),
			Annotations: agnara.ReadOnly,
		}))
	}
	return out
}

var _ func(context.Context, json.RawMessage) ([]execution.Message, error) = (*prompt)(nil).get

// get is the capability of an imported prompt: args are its arguments,
// already valid against its input schema.
func (p *prompt) get(ctx context.Context, args json.RawMessage) ([]execution.Message, error) {
	c := p.cat
	gen := c.valid.Load().gen
	if code, ok := c.monitor.currentFeatures(gen); !ok {
		return nil, c.failFeature(ctx, "prompt", p.entry.RemoteName, code, nil)
	}
	if len(args) > c.limits.ObjectBytes {
		return nil, c.failFeature(ctx, "prompt", p.entry.RemoteName, ReasonInvalidArguments, nil)
	}
	var values map[string]string
	if err := json.Unmarshal(args, &values); err != nil {
		return nil, c.failFeature(ctx, "prompt", p.entry.RemoteName, ReasonInvalidArguments, err)
	}
	if code, err := c.authorizedFor(ctx); code != "" || err != nil {
		if code == "" {
			code = ReasonCredentialRefused // a read or get cannot ask its caller
		}
		return nil, c.failFeature(ctx, "prompt", p.entry.RemoteName, code, err)
	}
	gctx, cancel := context.WithTimeout(ctx, c.limits.CallTimeout)
	defer cancel()
	res, err := c.session.GetPrompt(gctx, &mcp.GetPromptParams{Name: p.entry.RemoteName, Arguments: values})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if code, ok := c.monitor.currentFeatures(gen); !ok {
		return nil, c.failFeature(ctx, "prompt", p.entry.RemoteName, code, nil)
	}
	if err != nil {
		return nil, c.failFeature(ctx, "prompt", p.entry.RemoteName, featureReason(gctx, err, false), err)
	}
	msgs, code := p.messages(res)
	if code != "" {
		return nil, c.failFeature(ctx, "prompt", p.entry.RemoteName, code, nil)
	}
	return msgs, nil
}

// messages checks the remote answer to a get and returns its messages, or
// names why they cannot be passed on.
func (p *prompt) messages(res *mcp.GetPromptResult) ([]execution.Message, execution.Reason) {
	limits := p.cat.limits
	switch {
	case res == nil:
		return nil, ReasonProtocolError
	case len(res.InputRequests) > 0 || res.RequestState != "":
		return nil, ReasonResultUnsupported // no questions are relayed for prompts
	case len(res.Messages) == 0:
		return nil, ReasonResultInvalid
	case len(res.Messages) > limits.ContentBlocks:
		return nil, ReasonResultTooLarge
	}
	out := make([]execution.Message, 0, len(res.Messages))
	size := 0
	for _, m := range res.Messages {
		if m == nil || m.Role != "user" && m.Role != "assistant" {
			return nil, ReasonResultInvalid
		}
		// A message holds one content block, checked as a tool result's are.
		content, n, code := contentOf(m.Content, limits)
		if code != "" {
			return nil, code
		}
		if size += n; size > limits.ObjectBytes {
			return nil, ReasonResultTooLarge
		}
		out = append(out, execution.Message{Role: execution.Role(m.Role), Content: content})
	}
	return out, ""
}

// Prompts returns the imported prompts, sorted by local name: none unless
// the snapshot is of resources and prompts
// ([FeatureSnapshotSchemaVersion]).
func (s *Snapshot) Prompts() []PromptEntry {
	out := make([]PromptEntry, len(s.prompts))
	for i, e := range s.prompts {
		e.Arguments = slices.Clone(e.Arguments)
		out[i] = e
	}
	return out
}
