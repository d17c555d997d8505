package mcpexpose

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WithdrawnOptions configures a withdrawn tool ([Exposure.Withdrawn]). A
// nil *WithdrawnOptions means the defaults.
type WithdrawnOptions struct {
	// Scopes a caller must all hold, by the application's scope rule
	// (agnara.Options.Scopes), to be told the failure, as
	// CapabilityOptions.Scopes are for a tool. Any other caller is answered
	// as for a tool it may not call: -32602 "unknown tool"; over HTTP with
	// tokens, the 403 insufficient_scope challenge naming them; with
	// ServerOptions.ForbiddenResult, the canonical forbidden failure.
	// Default: none, every caller is told.
	Scopes []string
}

// Withdrawn declares name as a withdrawn tool: a name the exposure no
// longer serves but keeps answering, so that its callers learn why — a
// gateway's upstream is down, or stopped offering the tool — instead of
// "unknown tool". A tools/call of it is authorized as every call is (the
// caller's identity, then Scopes) and answered with failure, projected as
// every failure is, and audited and observed as a call; nothing else
// happens: there is no handler, the arguments are not read, no rate limit
// or policy applies. A withdrawn tool is in no tools/list and in no
// subscriber's list-changed notification.
//
// Withdrawn takes no function, so nothing it declares can run: every tool
// that runs is declared with [Exposure.Tool], and tools/list shows each one
// to every caller who may call it.
//
// failure is read when Withdrawn is called; changing it later changes
// nothing. name shares the namespace of tools. An invalid or duplicate
// name, a nil failure, a failure code outside the canonical set, details
// that do not encode as JSON and an invalid scope are mistakes Compile
// reports, with the file:line of this call.
func (e *Exposure) Withdrawn(name string, failure *execution.Failure, opts *WithdrawnOptions) {
	s := site.Caller(1)
	w := &withdrawnTool{name: name, site: s}
	if opts != nil {
		w.scopes = slices.Clone(opts.Scopes)
	}
	var errs []error
	if failure == nil {
		errs = append(errs, site.Errorf(s, name, "mcpexpose.Withdrawn: nil failure"))
	} else {
		if failure.Code != execution.InternalFailure && failure.Code.String() == execution.InternalFailure.String() {
			// Only a code outside the closed set reads as internal_failure.
			errs = append(errs, site.Errorf(s, name, "mcpexpose.Withdrawn: failure code %d is not a canonical code", failure.Code))
		}
		if _, err := json.Marshal(failure.Details); err != nil {
			errs = append(errs, site.Errorf(s, name, "mcpexpose.Withdrawn: the failure's details do not encode as JSON: %v", err))
		}
		res := projection.Failure(failure)
		w.text = res.Content[0].(*mcp.TextContent).Text
		w.label = execution.LabelOf(failure)
	}
	for _, sc := range w.scopes {
		if !scopeToken.MatchString(sc) {
			errs = append(errs, site.Errorf(s, name, "invalid scope %q: a scope is one or more printable ASCII characters without spaces, '\"' or '\\'", sc))
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.frozen:
		e.errs = append(e.errs, &site.Error{Site: s, Subject: name, Err: ErrFrozen})
	case len(errs) > 0:
		e.errs = append(e.errs, errs...)
	default:
		e.withdrawn = append(e.withdrawn, w)
	}
}

// scopeToken is a scope as RFC 6749 §3.3 defines one (NQCHAR), the rule
// agnara applies to CapabilityOptions.Scopes (TestWithdrawnScopesAreCapabilityScopes).
var scopeToken = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`)

// withdrawnTool is a compiled withdrawn tool. It is immutable once
// compiled.
type withdrawnTool struct {
	name   string
	site   site.Site
	scopes []string
	rule   policy.Scopes // the application's scope rule
	text   string        // the failure, projected
	label  agnara.Label  // the failure's
	// forbidden is the projected failure a caller without the scopes gets
	// with ServerOptions.ForbiddenResult: the plan's scope guard's.
	forbidden string
	// digest names what the SDK server is given for the name (live.go).
	digest string
}

// compileWithdrawn adds the declared withdrawn tools to snap, whose tools
// are compiled, and returns the mistakes found.
func (e *Exposure) compileWithdrawn(snap *Snapshot, c *checks) []error {
	if len(e.withdrawn) == 0 {
		return nil
	}
	// The rule plans check scopes by (the application is frozen by now).
	rule := registry.Freeze[*agnara.Capability](e.app).Scopes
	var errs []error
	for _, d := range e.withdrawn {
		if !toolNamePattern.MatchString(d.name) {
			errs = append(errs, site.Errorf(d.site, d.name, "invalid tool name %q: want 1 to 64 letters, digits, '_', '.' or '-'", d.name))
			continue
		}
		if prev, dup := c.names[d.name]; dup {
			errs = append(errs, site.Errorf(d.site, d.name, "duplicate tool name (first declared at %s)", prev))
			continue
		}
		c.names[d.name] = d.site
		w := *d
		w.rule = rule
		// The words of the plan's scope guard (execution's Plan.Invoke),
		// so that a withdrawn tool answers as the tool it stands for did
		// (TestWithdrawnToolForbiddenResult).
		guard := &execution.Failure{Code: execution.Forbidden, Message: "the caller lacks a scope this capability requires",
			Details: map[string]any{"required_scopes": slices.Clone(w.scopes)}}
		w.forbidden = projection.Failure(guard).Content[0].(*mcp.TextContent).Text
		h := sha256.New()
		for _, part := range append([]string{"withdrawn", w.name, w.text}, w.scopes...) {
			h.Write([]byte(part))
			h.Write([]byte{0})
		}
		w.digest = base64.RawURLEncoding.EncodeToString(h.Sum(nil))
		snap.withdrawnList = append(snap.withdrawnList, &w)
		snap.withdrawn[w.name] = &w
	}
	return errs
}

// allows reports whether p holds the tool's scopes.
func (w *withdrawnTool) allows(p policy.Principal) bool { return w.rule.Allows(p, w.scopes) }

// sdkTool is what the SDK server holds under the name, so that a call
// reaches the tool handler, which answers it (callWithdrawn): no
// description (it is never listed) and a schema that accepts any
// arguments (they are not read).
func (w *withdrawnTool) sdkTool() *mcp.Tool {
	return &mcp.Tool{Name: w.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

// callWithdrawn answers rec's tools/call of a withdrawn tool: authorized as
// any call, then the fixed failure, finished by the route like every
// result.
func (s *server) callWithdrawn(ctx context.Context, rec *record, req *mcp.CallToolRequest) (mcp.Result, error) {
	w := rec.gone
	p, err := rec.principal()
	if err != nil {
		return nil, err
	}
	text, label := w.text, w.label
	if !w.allows(p) {
		if !s.opts.ForbiddenResult {
			s.auditAs(ctx, req, w.name, "", p, labelForbidden, nil)
			return nil, s.hiddenTool(rec, w.name, w.scopes)
		}
		text, label = w.forbidden, labelForbidden
	}
	ctx = policy.WithPrincipal(ctx, p)
	var end func(agnara.Label, error)
	if obs := s.app.Observer(); obs != nil {
		ctx, end = obs.Request(ctx, s.requestInfo("tools/call", w.name, req, p))
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
	s.auditAs(ctx, req, w.name, "", p, label, res)
	if end != nil {
		end(label, nil)
	}
	return res, nil
}
