package mcpexpose

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// ResourceOptions configures one resource: a capability read at a fixed
// URI. A nil *ResourceOptions is a mistake, reported by Compile: a
// resource needs its URI.
//
// What the capability returns is the resource's contents: a string is text,
// a []byte is binary (a blob), []execution.Content gives each
// execution.Resource, Text or Image block as one content of its own, and any
// other value is its JSON encoding. The capability takes no required
// input: a read passes no arguments.
type ResourceOptions struct {
	// URI is the resource's absolute URI, unique within the exposure, such
	// as "users://stats".
	URI string
	// Name is the resource's name. Default: the capability's name.
	Name string
	// MIMEType is the contents' media type. Default: "text/plain" for
	// text, "application/octet-stream" for binary contents,
	// "application/json" for JSON.
	MIMEType string
}

// ResourceTemplateOptions configures one resource template: a capability
// read at every URI an RFC 6570 URI template matches, whose variables are
// the fields of the capability's input (by their JSON names). Reading
// "users://u-42" from "users://{id}" invokes the capability with
// {"id": "u-42"}; a variable of a number, integer or boolean field is
// converted first. Contents are as for [ResourceOptions]. A nil
// *ResourceTemplateOptions is a mistake: a template needs its URITemplate.
type ResourceTemplateOptions struct {
	// URITemplate is the RFC 6570 template, unique within the exposure.
	// Every variable must be an input field, and every required input field
	// a variable.
	URITemplate string
	// Name is the template's name. Default: the capability's name.
	Name string
	// MIMEType is the contents' media type, as for ResourceOptions.
	MIMEType string
	// Complete suggests values for variables, by variable name, answering
	// completion/complete for this template (see [Completer]).
	Complete map[string]Completer
}

// featureKind is what a feature declaration declares.
type featureKind uint8

const (
	resourceKind featureKind = iota
	templateKind
	promptKind
)

// featureDecl is one resource, template or prompt declaration.
type featureDecl struct {
	kind     featureKind
	cap      *agnara.Capability
	site     site.Site
	nilOpts  bool
	resource ResourceOptions
	template ResourceTemplateOptions
	prompt   PromptOptions
}

// Resource declares c as a resource at a fixed URI (see [ResourceOptions]).
func (e *Exposure) Resource(c *agnara.Capability, opts *ResourceOptions) {
	d := featureDecl{kind: resourceKind, cap: c, site: site.Caller(1), nilOpts: opts == nil}
	if opts != nil {
		d.resource = *opts
	}
	e.declare(d, "mcpexpose.Resource", d.resource.URI)
}

// ResourceTemplate declares c as a resource template (see
// [ResourceTemplateOptions]).
func (e *Exposure) ResourceTemplate(c *agnara.Capability, opts *ResourceTemplateOptions) {
	d := featureDecl{kind: templateKind, cap: c, site: site.Caller(1), nilOpts: opts == nil}
	if opts != nil {
		d.template = *opts
		d.template.Complete = cloneCompleters(opts.Complete)
	}
	e.declare(d, "mcpexpose.ResourceTemplate", d.template.URITemplate)
}

func (e *Exposure) declare(d featureDecl, what, subject string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d.cap == nil {
		e.errs = append(e.errs, site.Errorf(d.site, what, "nil capability"))
		return
	}
	if subject == "" {
		subject = d.cap.Identity()
	}
	if e.frozen {
		e.errs = append(e.errs, &site.Error{Site: d.site, Subject: subject, Err: ErrFrozen})
		return
	}
	e.features = append(e.features, d)
}

// readable is what resources and templates share: the plan read, its
// arguments and the contents' declared media type.
type readable struct {
	name   string
	site   site.Site
	plan   *execution.Plan
	args   []argument
	mime   string
	digest string
}

// resource is one compiled resource.
type resource struct {
	readable
	uri string
	def mcp.Resource
}

// resourceTemplate is one compiled resource template.
type resourceTemplate struct {
	readable
	tmpl     *uritemplate.Template
	def      mcp.ResourceTemplate
	complete map[string]Completer
}

// compileFeatures compiles the resource, template and prompt declarations
// into snap, returning every mistake.
func (e *Exposure) compileFeatures(plans *execution.Plans, appFailed bool, snap *Snapshot, c *checks) []error {
	var errs []error
	// What was declared, compiled or not: a duplicate is reported whatever
	// else is wrong with either declaration.
	uris := map[string]site.Site{}
	templates := map[string]site.Site{}
	prompts := map[string]site.Site{}
	for _, d := range e.features {
		subject := d.cap.Identity()
		fail := func(format string, args ...any) {
			errs = append(errs, site.Errorf(d.site, subject, format, args...))
		}
		if d.cap.App() != e.app {
			fail("capability %s belongs to application %q, not %q", d.cap, d.cap.App().Name(), e.app.Name())
			continue
		}
		if err := c.describe(d.cap, d.site, subject, "a resource or prompt"); err != nil {
			errs = append(errs, err)
		}
		// Without a plan (the capability has a mistake of its own, reported
		// with the application's), the checks below still run.
		p, ok := plans.Plan(d.cap)
		if !ok && !appFailed {
			fail("no plan for capability %s: it was registered after the application was compiled", d.cap)
			continue
		}
		switch d.kind {
		case resourceKind:
			if d.nilOpts || d.resource.URI == "" {
				fail("a resource needs ResourceOptions.URI")
				continue
			}
			subject = d.resource.URI
			if err := checkURI(d.resource.URI); err != nil {
				fail("%v", err)
				continue
			}
			if prev, dup := uris[d.resource.URI]; dup {
				fail("duplicate resource URI (first declared at %s)", prev)
				continue
			}
			uris[d.resource.URI] = d.site
			if p == nil {
				continue
			}
			r, err := newResource(d, p)
			if err != nil {
				fail("%v", err)
				continue
			}
			snap.resources = append(snap.resources, r)
			snap.byURI[r.uri] = r
		case templateKind:
			if d.nilOpts || d.template.URITemplate == "" {
				fail("a resource template needs ResourceTemplateOptions.URITemplate")
				continue
			}
			subject = d.template.URITemplate
			if prev, dup := templates[d.template.URITemplate]; dup {
				fail("duplicate resource template (first declared at %s)", prev)
				continue
			}
			templates[d.template.URITemplate] = d.site
			if p == nil {
				continue
			}
			t, err := newResourceTemplate(d, p)
			if err != nil {
				fail("%v", err)
				continue
			}
			snap.templates = append(snap.templates, t)
		case promptKind:
			name := d.prompt.Name
			if name == "" {
				name = d.cap.Identity()
			}
			subject = name
			if !toolNamePattern.MatchString(name) {
				fail("invalid prompt name %q: want 1 to 64 letters, digits, '_', '.' or '-'", name)
				continue
			}
			if prev, dup := prompts[name]; dup {
				fail("duplicate prompt name (first declared at %s)", prev)
				continue
			}
			prompts[name] = d.site
			if p == nil {
				continue
			}
			pr, err := newPrompt(d, name, p)
			if err != nil {
				fail("%v", err)
				continue
			}
			snap.prompts = append(snap.prompts, pr)
			snap.byPrompt[name] = pr
		}
	}
	return errs
}

// schemePrefix is how an absolute URI (or URI template) begins.
var schemePrefix = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// checkURI refuses a URI that is not absolute.
func checkURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid resource URI %q: %v", raw, err)
	}
	if u.Scheme == "" {
		return fmt.Errorf("resource URI %q is not absolute: it needs a scheme, such as \"users://\"", raw)
	}
	return nil
}

func newResource(d featureDecl, p *execution.Plan) (*resource, error) {
	o := d.resource
	args, err := inputArguments(p.InputSchema())
	if err != nil {
		return nil, err
	}
	for _, a := range args {
		if a.required {
			return nil, fmt.Errorf("input field %q is required, but a resource at a fixed URI is read without arguments: make it optional, or declare a ResourceTemplate with a {%s} variable", a.name, a.name)
		}
	}
	r := &resource{readable: readable{name: orDefault(o.Name, d.cap.Name()), site: d.site, plan: p, args: args, mime: o.MIMEType}, uri: o.URI}
	c := p.Capability().Options()
	r.def = mcp.Resource{URI: o.URI, Name: r.name, Title: c.Title, Description: c.Description, MIMEType: o.MIMEType}
	r.digest = featureDigest(p, &r.def)
	return r, nil
}

func newResourceTemplate(d featureDecl, p *execution.Plan) (*resourceTemplate, error) {
	o := d.template
	tmpl, err := uritemplate.New(o.URITemplate)
	if err != nil {
		return nil, fmt.Errorf("invalid URI template %q: %v", o.URITemplate, err)
	}
	if !schemePrefix.MatchString(o.URITemplate) {
		return nil, fmt.Errorf("URI template %q is not absolute: it needs a scheme, such as \"users://{id}\"", o.URITemplate)
	}
	args, err := inputArguments(p.InputSchema())
	if err != nil {
		return nil, err
	}
	vars := tmpl.Varnames()
	for _, v := range vars {
		if !slices.ContainsFunc(args, func(a argument) bool { return a.name == v }) {
			return nil, fmt.Errorf("template variable {%s} is not a field of the input of %s", v, d.cap)
		}
	}
	for _, a := range args {
		if a.required && !slices.Contains(vars, a.name) {
			return nil, fmt.Errorf("input field %q is required but not a variable of %q: no read could supply it", a.name, o.URITemplate)
		}
	}
	if err := checkCompleters(o.Complete, vars, "template variable"); err != nil {
		return nil, err
	}
	t := &resourceTemplate{readable: readable{name: orDefault(o.Name, d.cap.Name()), site: d.site, plan: p, args: args, mime: o.MIMEType}, tmpl: tmpl, complete: o.Complete}
	c := p.Capability().Options()
	t.def = mcp.ResourceTemplate{URITemplate: o.URITemplate, Name: t.name, Title: c.Title, Description: c.Description, MIMEType: o.MIMEType}
	t.digest = featureDigest(p, &t.def)
	return t, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// featureDigest names what a resource, template or prompt is, as a tool's
// digest does: its plan's identity and scopes and its published definition.
func featureDigest(p *execution.Plan, def any) string {
	b, _ := json.Marshal(def) // SDK definitions of strings
	h := sha256.New()
	for _, part := range append([]string{p.Identity()}, p.Scopes()...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Resources projects every resource to an SDK definition, in declaration
// order, as fresh copies, followed by the views of tools ([ToolOptions].UI).
func (s *Snapshot) Resources() []*mcp.Resource {
	out := make([]*mcp.Resource, len(s.resources), len(s.resources)+len(s.uis))
	for i, r := range s.resources {
		def := r.def
		out[i] = &def
	}
	for _, v := range s.uis {
		out = append(out, v.project())
	}
	return out
}

// ResourceTemplates projects every resource template to an SDK definition,
// in declaration order, as fresh copies.
func (s *Snapshot) ResourceTemplates() []*mcp.ResourceTemplate {
	out := make([]*mcp.ResourceTemplate, len(s.templates))
	for i, t := range s.templates {
		def := t.def
		out[i] = &def
	}
	return out
}

// lookupResource finds what serves uri: a resource at that URI, else the
// first template, in declaration order, that matches it, with its
// variables.
func (s *Snapshot) lookupResource(uri string) (*readable, map[string]string, bool) {
	if r, ok := s.byURI[uri]; ok {
		return &r.readable, nil, true
	}
	for _, t := range s.templates {
		if vals := t.tmpl.Match(uri); vals != nil {
			vars := make(map[string]string, len(vals))
			for _, name := range t.tmpl.Varnames() {
				if v := vals.Get(name); v.Valid() {
					vars[name] = v.String()
				}
			}
			return &t.readable, vars, true
		}
	}
	return nil, nil, false
}

// canRead reports whether p may read uri in s.
func (s *Snapshot) canRead(p policy.Principal, uri string) bool {
	if v, ok := s.byUI[uri]; ok {
		return v.visibleTo(p)
	}
	r, _, ok := s.lookupResource(uri)
	return ok && r.plan.Allows(p)
}

// resourceNotFound is the answer for a resource that does not exist or that
// the caller may not see: the same, so that one cannot be told from the
// other (SEP-2164).
func resourceNotFound(uri string) error { return mcp.ResourceNotFoundError(uri) }

// listResources answers resources/list for p.
func (s *server) listResources(e *epoch, req mcp.Request, p policy.Principal) (mcp.Result, error) {
	if params, _ := req.GetParams().(*mcp.ListResourcesParams); params != nil && params.Cursor != "" {
		return nil, errCursor
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, r := range e.snap.resources {
		if r.plan.Allows(p) {
			def := r.def
			res.Resources = append(res.Resources, &def)
		}
	}
	res.Resources = append(res.Resources, e.snap.visibleUIs(p)...)
	res.Cacheable = e.cacheable()
	return res, nil
}

// listResourceTemplates answers resources/templates/list for p.
func (s *server) listResourceTemplates(e *epoch, req mcp.Request, p policy.Principal) (mcp.Result, error) {
	if params, _ := req.GetParams().(*mcp.ListResourceTemplatesParams); params != nil && params.Cursor != "" {
		return nil, errCursor
	}
	res := &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}}
	for _, t := range e.snap.templates {
		if t.plan.Allows(p) {
			def := t.def
			res.ResourceTemplates = append(res.ResourceTemplates, &def)
		}
	}
	res.Cacheable = e.cacheable()
	return res, nil
}

// cacheable is the cache hint of every list: never fresh (ttlMs 0, a swap
// may change it), private when what a caller sees depends on who it is.
func (e *epoch) cacheable() mcp.Cacheable {
	c := mcp.Cacheable{TTLMs: 0, CacheScope: "public"}
	if e.private {
		c.CacheScope = "private"
	}
	return c
}

// readResource answers resources/read for p: the contents of the resource
// or template match, or, for one that does not exist or that p may not
// see, the same -32602 error.
func (s *server) readResource(ctx context.Context, e *epoch, req *mcp.ReadResourceRequest, p policy.Principal) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	if v, ok := e.snap.byUI[uri]; ok {
		return s.readUI(ctx, req, v, p) // a tool's view (apps.go)
	}
	r, vars, ok := e.snap.lookupResource(uri)
	if !ok {
		return nil, resourceNotFound(uri)
	}
	adm, admitted := r.plan.Admit(p)
	if !admitted {
		return nil, resourceNotFound(uri)
	}
	out, err := s.invokeFeature(ctx, req, featureCall{
		method: "resources/read", target: uri, digest: r.digest, plan: r.plan, adm: adm, p: p,
		args: argumentsJSON(r.args, vars), state: req.Params.RequestState, responses: req.Params.InputResponses,
	})
	if err != nil {
		return nil, err
	}
	if out.asked != nil {
		return readFinished(req, &mcp.ReadResourceResult{InputRequests: out.asked, RequestState: out.state}, r.mime)
	}
	switch o := out.outcome.(type) {
	case execution.Success:
		contents, err := resourceContents(uri, r.mime, o)
		if err != nil {
			s.logger.LogAttrs(ctx, slog.LevelError, "resource contents cannot be projected", slog.String("resource", r.name), slog.Any("error", err))
			return nil, failureError(execution.Fail(execution.InternalFailure, "", nil), "uri", uri)
		}
		res := &mcp.ReadResourceResult{Contents: contents}
		res.TTLMs, res.CacheScope = 0, "public"
		if len(r.plan.Scopes()) > 0 {
			res.CacheScope = "private"
		}
		return readFinished(req, res, r.mime)
	case *execution.Failure:
		if o.Code == execution.NotFound {
			// "No such user" is no such resource, answered as one.
			return nil, resourceNotFound(uri)
		}
		return nil, failureError(o, "uri", uri)
	}
	return nil, failureError(execution.Fail(execution.InternalFailure, "", nil), "uri", uri)
}

// resourceContents projects a successful read.
func resourceContents(uri, mime string, out execution.Success) ([]*mcp.ResourceContents, error) {
	if out.Content != nil {
		var cs []*mcp.ResourceContents
		for _, c := range out.Content {
			switch c := c.(type) {
			case execution.Resource:
				cs = append(cs, &mcp.ResourceContents{URI: orDefault(c.URI, uri), MIMEType: orDefault(c.MIMEType, mime), Text: c.Text, Blob: c.Blob})
			case execution.Text:
				cs = append(cs, &mcp.ResourceContents{URI: uri, MIMEType: orDefault(mime, "text/plain"), Text: c.Text})
			case execution.Image:
				cs = append(cs, &mcp.ResourceContents{URI: uri, MIMEType: orDefault(c.MIMEType, mime), Blob: c.Data})
			case execution.Audio:
				cs = append(cs, &mcp.ResourceContents{URI: uri, MIMEType: orDefault(c.MIMEType, mime), Blob: c.Data})
			default:
				return nil, fmt.Errorf("%w: %T is not resource contents", projection.ErrProjection, c)
			}
		}
		if len(cs) == 0 {
			return nil, fmt.Errorf("%w: no contents", projection.ErrProjection) // SEP-2164: never an empty list
		}
		return cs, nil
	}
	switch v := out.Value.(type) {
	case string:
		return []*mcp.ResourceContents{{URI: uri, MIMEType: orDefault(mime, "text/plain"), Text: v}}, nil
	case []byte:
		return []*mcp.ResourceContents{{URI: uri, MIMEType: orDefault(mime, "application/octet-stream"), Blob: v}}, nil
	}
	text, err := projection.Sorted(out.Value)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", projection.ErrProjection, err)
	}
	if n := projection.Nesting(mustParse(text), 0); n > projection.MaxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", projection.ErrProjection, projection.MaxDepth)
	}
	return []*mcp.ResourceContents{{URI: uri, MIMEType: orDefault(mime, "application/json"), Text: string(text)}}, nil
}

func mustParse(b []byte) any {
	var v any
	_ = json.Unmarshal(b, &v) // b was just encoded
	return v
}

// failureError is a canonical failure as a JSON-RPC error of resources/read
// or prompts/get, which have no error results: -32602 for what the caller
// can fix (its input, its rights, the state it asked about), -32603 for the
// rest. data names the target under key and carries the failure's JSON
// ({code, reason, message, details}), as a tool's error result does.
func failureError(f *execution.Failure, key, target string) error {
	if f.Code == execution.InternalFailure {
		f = execution.Fail(execution.InternalFailure, "", nil)
	}
	body := map[string]any{key: target, "code": f.Code, "message": f.Message}
	if f.Reason != "" {
		body["reason"] = f.Reason
	}
	if len(f.Details) > 0 {
		body["details"] = f.Details
	}
	data, err := projection.Sorted(body)
	if err != nil {
		delete(body, "details")
		data, _ = projection.Sorted(body)
	}
	code := int64(jsonrpc.CodeInternalError)
	switch f.Code {
	case execution.InvalidInput, execution.Forbidden, execution.NotFound, execution.Conflict, execution.InteractionRequired:
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: f.Message, Data: data}
}

// subscribe guards resources/subscribe: a caller subscribes only to what it
// may read; anything else is answered as a missing resource.
func (s *server) checkSubscribe(e *epoch, uri string, p policy.Principal) error {
	if !e.snap.canRead(p, uri) {
		return resourceNotFound(uri)
	}
	return nil
}

// subscribeHandler accepts what the middleware let through.
func subscribeHandler(context.Context, *mcp.SubscribeRequest) error     { return nil }
func unsubscribeHandler(context.Context, *mcp.UnsubscribeRequest) error { return nil }

// resourceUpdated tells the sessions subscribed to uri that it changed.
func (s *server) resourceUpdated(ctx context.Context, uri string) error {
	if uri == "" {
		return errors.New("mcpexpose: ResourceUpdated: empty URI")
	}
	s.listens.updated(uri) // the listens the edge holds
	return s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// ResourceUpdated tells the clients subscribed to uri that it changed (see
// [Handler.ResourceUpdated]).
func (l *Live) ResourceUpdated(ctx context.Context, uri string) error {
	return l.s.resourceUpdated(ctx, uri)
}
