package mcpimport

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// ResourceBinding is the host's explicit declaration for one remote
// resource, or resource template, it imports: under which local name,
// URI and title it is read, which scopes a caller must hold, and which
// media types its contents may have. A resource is a read by nature; the
// remote server's annotations grant nothing.
type ResourceBinding struct {
	// Name is the local capability name (a letter followed by at most 31
	// letters, digits, '_' or '-'), unique among the catalog's resources,
	// templates and prompts, and published as the resource's name.
	// Required.
	Name string
	// URI is the local URI the resource is read at, or for a template the
	// local RFC 6570 URI template, which must have the same variables as
	// the remote one. A local URI must be absolute. Default: the remote
	// URI (template).
	URI string
	// Title is published as the resource's title. Required.
	Title string
	// Description, when set, is published instead of the remote
	// description, which is still part of the snapshot and its digest.
	// Default: the remote description, else Title.
	Description string
	// Scopes are the local scopes a caller must hold, all of them, to see
	// the resource listed or read it.
	Scopes []string
	// MIMETypes are the media types the contents may have ("text/plain",
	// or "text/*" for any subtype): a content of another type, or of none
	// (neither the content nor the definition names one), fails the read
	// with [ReasonResultUnsupported], and a definition that declares
	// another type is not imported ([DefinitionUnsupported]). Default:
	// every well-formed type.
	MIMETypes []string
}

// ResourceEntry is one imported resource or resource template in a
// [Snapshot]: the host's declarations and the remote definition, all of it
// covered by the snapshot's digest. For a template, URI and RemoteURI are
// URI templates.
type ResourceEntry struct {
	// Name is the local name.
	Name string
	// URI is the local URI (template).
	URI string
	// RemoteURI is the remote URI (template): the binding's key.
	RemoteURI string
	// RemoteName is the remote definition's name, as listed.
	RemoteName string
	// Title is the binding's title.
	Title string
	// Description is the remote description, as listed.
	Description string
	// MIMEType is the media type the remote definition declares, or "".
	MIMEType string
	// MIMETypes are the media types the binding accepts, in lower case,
	// sorted; empty when it accepts every type.
	MIMETypes []string
}

// Resource is an imported resource or resource template registered with
// an application by [Catalog.RegisterResources]: its capability, and what
// to declare it as to an exposure (for mcpexpose, Exposure.Resource with
// URI, or Exposure.ResourceTemplate with URITemplate, and Name and
// MIMEType as they are).
type Resource struct {
	// Capability reads the resource.
	Capability *agnara.Capability
	// URI is a resource's local URI; "" for a template.
	URI string
	// URITemplate is a template's local URI template; "" for a resource.
	URITemplate string
	// Name is the local name.
	Name string
	// MIMEType is the media type the remote definition declares, or "".
	MIMEType string
}

// resource is one imported resource or template, ready to read.
type resource struct {
	cat         *Catalog
	kind        featureKind
	entry       ResourceEntry
	remote      *uritemplate.Template // templates only
	vars        []string              // templates: the variables, in template order
	input       json.RawMessage       // templates: the capability's input schema
	description string                // the binding's
	scopes      []string
}

// acceptedType is how a binding names an accepted media type.
var acceptedType = regexp.MustCompile(`^([a-z0-9][a-z0-9!#$&^_.+-]*/([a-z0-9][a-z0-9!#$&^_.+-]*|\*)|\*/\*)$`)

// selection checks the binding of remote, a URI (kind resourceKind) or a
// URI template (templateKind), and returns what discovery needs of it.
func (b *ResourceBinding) selection(kind featureKind, remote string) (featureSelection, *Error) {
	fail := func(format string, args ...any) (featureSelection, *Error) {
		return featureSelection{}, featureError(kind, BindingInvalid, remote, format, args...)
	}
	switch {
	case remote == "":
		return fail("a %s binding has an empty remote key", kind)
	case !localNamePattern.MatchString(b.Name):
		return fail("local name %q: want a letter followed by at most 31 letters, digits, '_' or '-'", b.Name)
	case strings.TrimSpace(b.Title) == "":
		return fail("the binding has no title")
	}
	local := cmp.Or(b.URI, remote)
	if kind == resourceKind {
		for _, u := range []string{remote, local} {
			if p, err := url.Parse(u); err != nil || p.Scheme == "" {
				return fail("%q is not an absolute URI", u)
			}
		}
	} else {
		rt, err := templateOf(remote)
		if err != nil {
			return fail("remote URI template: %v", err)
		}
		lt, err := templateOf(local)
		if err != nil {
			return fail("local URI template %q: %v", local, err)
		}
		if rv, lv := varSet(rt), varSet(lt); !slices.Equal(rv, lv) {
			return fail("local URI template %q has the variables %v, the remote one %v: they must be the same", local, lv, rv)
		}
	}
	accepted := make([]string, 0, len(b.MIMETypes))
	for _, m := range b.MIMETypes {
		m = strings.ToLower(strings.TrimSpace(m))
		if !acceptedType.MatchString(m) {
			return fail("MIMETypes: %q is not a media type (want type/subtype or type/*, without parameters)", m)
		}
		accepted = append(accepted, m)
	}
	slices.Sort(accepted)
	return featureSelection{
		kind: kind, remote: remote, name: b.Name, uri: local, title: b.Title,
		description: b.Description, scopes: slices.Clone(b.Scopes), mimeTypes: slices.Compact(accepted),
	}, nil
}

// templateOf parses an absolute URI template.
func templateOf(s string) (*uritemplate.Template, error) {
	t, err := uritemplate.New(s)
	if err != nil {
		return nil, err
	}
	if p, err := url.Parse(strings.SplitN(s, "{", 2)[0]); err != nil || p.Scheme == "" {
		return nil, errNotAbsolute
	}
	return t, nil
}

var errNotAbsolute = errors.New(`not absolute: it needs a scheme, such as "docs://{id}"`)

// varSet returns a template's variables, sorted, each once.
func varSet(t *uritemplate.Template) []string {
	return slices.Compact(slices.Sorted(slices.Values(t.Varnames())))
}

// newResource checks one selected remote definition (a *mcp.Resource or
// *mcp.ResourceTemplate) against the binding and the limits.
func newResource[D *mcp.Resource | *mcp.ResourceTemplate](c *Catalog, s featureSelection, def D, limits Limits) (*resource, []error) {
	var name, description, declared string
	switch d := any(def).(type) {
	case *mcp.Resource:
		name, description, declared = d.Name, d.Description, d.MIMEType
	case *mcp.ResourceTemplate:
		name, description, declared = d.Name, d.Description, d.MIMEType
	}
	var errs []error
	if len(description) > limits.DescriptionBytes {
		errs = append(errs, featureError(s.kind, DescriptionTooLarge, s.remote, "the description is larger than %d bytes", limits.DescriptionBytes))
	}
	if declared != "" {
		mt, ok := mediaType(declared)
		switch {
		case !ok:
			errs = append(errs, featureError(s.kind, DefinitionUnsupported, s.remote, "the declared media type %s is not one", quote(declared)))
		case !accepts(s.mimeTypes, mt):
			errs = append(errs, featureError(s.kind, DefinitionUnsupported, s.remote, "the declared media type %s is not among those the binding accepts (%s)", quote(declared), strings.Join(s.mimeTypes, ", ")))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	r := &resource{cat: c, kind: s.kind, description: s.description, scopes: s.scopes}
	r.entry = ResourceEntry{
		Name: s.name, URI: s.uri, RemoteURI: s.remote, RemoteName: name, Title: s.title,
		Description: description, MIMEType: declared, MIMETypes: slices.Clone(s.mimeTypes),
	}
	if s.kind == templateKind {
		r.remote, _ = uritemplate.New(s.remote) // the binding's check parsed it
		r.vars = varSet(r.remote)
		r.input = variablesSchema(r.vars)
	}
	return r, nil
}

// variablesSchema is the input schema of a template's capability: one
// optional string property per variable (RFC 6570 leaves any variable
// undefined; the remote server decides what it needs).
func variablesSchema(vars []string) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, v := range vars {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(v)
		b.Write(name)
		b.WriteString(`:{"type":"string"}`)
	}
	b.WriteString(`},"additionalProperties":false}`)
	return b.Bytes()
}

// RegisterResources registers every resource and resource template of the
// catalog with app, each as a read-only capability named by its binding,
// guarded by the binding's scopes, and returns them in snapshot order, for
// the host to declare to its exposure. A template's capability takes the
// template's variables as string arguments (by their names); mcpexpose
// passes those it matched in the URI read.
//
// A read sends one resources/read of the remote URI (a template's
// expanded with the variables), and checks the answer: one or more
// contents, at most Limits.ContentBlocks, each at the URI read, with text
// or a blob (not both), its media type (the content's, else the
// definition's) well-formed and accepted by the binding, all of them
// within Limits.ObjectBytes. Each becomes an execution.Resource without a
// URI, so that it is published at the local URI read. Anything else fails
// closed with a call reason ([ReasonResultInvalid],
// [ReasonResultUnsupported], [ReasonResultTooLarge], or
// [ReasonResourceNotFound] when the remote server has no such resource).
func (c *Catalog) RegisterResources(app *agnara.App) []Resource {
	out := make([]Resource, 0, len(c.resources))
	for _, r := range c.resources {
		opts := &agnara.CapabilityOptions{
			Name:        r.entry.Name,
			Title:       r.entry.Title,
			Description: cmp.Or(r.description, r.entry.Description, r.entry.Title),
			Scopes:      slices.Clone(r.scopes),
			Annotations: agnara.ReadOnly,
		}
		res := Resource{Name: r.entry.Name, MIMEType: r.entry.MIMEType}
		if r.kind == templateKind {
			opts.InputSchema = slices.Clone(r.input)
			res.Capability = app.Capability(r.readTemplate, opts)
			res.URITemplate = r.entry.URI
		} else {
			res.Capability = app.Capability(r.readFixed, opts)
			res.URI = r.entry.URI
		}
		out = append(out, res)
	}
	return out
}

var (
	_ func(context.Context) ([]execution.Content, error)                  = (*resource)(nil).readFixed
	_ func(context.Context, json.RawMessage) ([]execution.Content, error) = (*resource)(nil).readTemplate
)

// readFixed is the capability of a resource at a fixed URI.
func (r *resource) readFixed(ctx context.Context) ([]execution.Content, error) {
	return r.read(ctx, r.entry.RemoteURI)
}

// readTemplate is the capability of a template: args are its variables,
// already valid against its input schema (strings, no others).
func (r *resource) readTemplate(ctx context.Context, args json.RawMessage) ([]execution.Content, error) {
	if len(args) > r.cat.limits.ObjectBytes {
		return nil, r.cat.failFeature(ctx, "resource", r.entry.RemoteURI, ReasonInvalidArguments, nil)
	}
	var vars map[string]string
	if err := json.Unmarshal(args, &vars); err != nil {
		return nil, r.cat.failFeature(ctx, "resource", r.entry.RemoteURI, ReasonInvalidArguments, err)
	}
	values := uritemplate.Values{}
	for _, v := range r.vars {
		if s, ok := vars[v]; ok {
			values.Set(v, uritemplate.String(s))
		}
	}
	uri, err := r.remote.Expand(values)
	if err != nil {
		return nil, r.cat.failFeature(ctx, "resource", r.entry.RemoteURI, ReasonInvalidArguments, err)
	}
	return r.read(ctx, uri)
}

// read reads the remote URI uri and checks its contents.
func (r *resource) read(ctx context.Context, uri string) ([]execution.Content, error) {
	c := r.cat
	gen := c.valid.Load().gen // the answer counts only if the catalog stays valid from here on
	if code, ok := c.monitor.currentFeatures(gen); !ok {
		return nil, c.failFeature(ctx, "resource", r.entry.RemoteURI, code, nil)
	}
	if code, err := c.authorizedFor(ctx); code != "" || err != nil {
		if code == "" {
			code = ReasonCredentialRefused // a read or get cannot ask its caller
		}
		return nil, c.failFeature(ctx, "resource", r.entry.RemoteURI, code, err)
	}
	rctx, cancel := context.WithTimeout(ctx, c.limits.CallTimeout)
	defer cancel()
	res, err := c.session.ReadResource(rctx, &mcp.ReadResourceParams{URI: uri})
	if ctx.Err() != nil {
		return nil, ctx.Err() // the caller went away, or its own deadline passed
	}
	if code, ok := c.monitor.currentFeatures(gen); !ok {
		return nil, c.failFeature(ctx, "resource", r.entry.RemoteURI, code, nil)
	}
	if err != nil {
		return nil, c.failFeature(ctx, "resource", r.entry.RemoteURI, featureReason(rctx, err, true), err)
	}
	out, code := r.contents(res, uri)
	if code != "" {
		return nil, c.failFeature(ctx, "resource", r.entry.RemoteURI, code, nil)
	}
	return out, nil
}

// contents checks the remote answer to a read of uri and returns its
// contents, or names why it cannot be passed on.
func (r *resource) contents(res *mcp.ReadResourceResult, uri string) ([]execution.Content, execution.Reason) {
	limits := r.cat.limits
	switch {
	case res == nil:
		return nil, ReasonProtocolError
	case len(res.InputRequests) > 0 || res.RequestState != "":
		return nil, ReasonResultUnsupported // no questions are relayed for reads
	case len(res.Contents) == 0:
		return nil, ReasonResultInvalid
	case len(res.Contents) > limits.ContentBlocks:
		return nil, ReasonResultTooLarge
	}
	out := make([]execution.Content, 0, len(res.Contents))
	size := 0
	for _, rc := range res.Contents {
		switch {
		case rc == nil, rc.URI != uri, rc.Text != "" && rc.Blob != nil:
			// Contents at another URI are another resource: one the
			// host did not bind.
			return nil, ReasonResultInvalid
		}
		declared := cmp.Or(rc.MIMEType, r.entry.MIMEType)
		if declared != "" {
			mt, ok := mediaType(declared)
			if !ok {
				return nil, ReasonResultInvalid
			}
			if !accepts(r.entry.MIMETypes, mt) {
				return nil, ReasonResultUnsupported
			}
		} else if len(r.entry.MIMETypes) > 0 {
			return nil, ReasonResultUnsupported // untyped contents cannot be checked against the binding
		}
		if size += len(rc.Text) + len(rc.Blob); size > limits.ObjectBytes {
			return nil, ReasonResultTooLarge
		}
		out = append(out, execution.Resource{MIMEType: declared, Text: rc.Text, Blob: slices.Clone(rc.Blob)})
	}
	return out, ""
}

// Resources returns the imported resources at fixed URIs, sorted by local
// name: none unless the snapshot is of resources and prompts
// ([FeatureSnapshotSchemaVersion]).
func (s *Snapshot) Resources() []ResourceEntry { return cloneResourceEntries(s.resources) }

// ResourceTemplates returns the imported resource templates, sorted by
// local name, as [Snapshot.Resources] does resources.
func (s *Snapshot) ResourceTemplates() []ResourceEntry { return cloneResourceEntries(s.templates) }

func cloneResourceEntries(entries []ResourceEntry) []ResourceEntry {
	out := make([]ResourceEntry, len(entries))
	for i, e := range entries {
		e.MIMETypes = slices.Clone(e.MIMETypes)
		out[i] = e
	}
	return out
}
