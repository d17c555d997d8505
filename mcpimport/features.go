package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"mime"
	"slices"
	"strings"

	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Discovery reasons of [DiscoverFeatures], besides those tools share
// ([BindingInvalid], [ProtocolUnsupported], [DiscoveryFailed],
// [CatalogTooLarge], [DescriptionTooLarge]).
const (
	// ResourceMissing: a bound resource or resource template is not in
	// the remote server's lists (or the server offers no resources).
	ResourceMissing execution.Reason = "mcp_resource_missing"
	// PromptMissing: a bound prompt is not in the remote server's list (or
	// the server offers no prompts).
	PromptMissing execution.Reason = "mcp_prompt_missing"
	// ResourceDuplicate: the remote server lists a resource URI, or a
	// resource template, twice.
	ResourceDuplicate execution.Reason = "mcp_resource_duplicate"
	// PromptDuplicate: the remote server lists a prompt name twice.
	PromptDuplicate execution.Reason = "mcp_prompt_duplicate"
	// DefinitionUnsupported: a selected resource, template or prompt
	// cannot be imported as defined: a media type that is not one, or
	// that its binding does not accept; prompt arguments with names that
	// are not ones, repeated, or too many.
	DefinitionUnsupported execution.Reason = "mcp_definition_unsupported"
)

// ReasonResourceNotFound is the call failure reason of a read the remote
// server answered with "resource not found" (JSON-RPC -32002, or -32602
// as SEP-2164 has it): the canonical not_found, which mcpexpose answers as
// it answers a resource that does not exist.
const ReasonResourceNotFound execution.Reason = "mcp_resource_not_found"

// FeatureBindings are the host's explicit declarations of the resources,
// resource templates and prompts of a remote server it imports: the
// server features besides tools. Each map is keyed by what the remote
// server lists: a resource's URI, a template's URI template, a prompt's
// name. Nothing unbound is imported, listed or read.
type FeatureBindings struct {
	// Resources bind resources at fixed URIs, by remote URI.
	Resources map[string]ResourceBinding
	// ResourceTemplates bind resource templates, by remote URI template
	// (RFC 6570); [ResourceBinding].URI is then the local URI template.
	ResourceTemplates map[string]ResourceBinding
	// Prompts bind prompts, by remote prompt name.
	Prompts map[string]PromptBinding
}

// DiscoverFeatures lists the resources, resource templates and prompts of
// the remote server on sess (resources/list, resources/templates/list,
// prompts/list, every page, each only when something of its kind is bound
// and the server offers that kind) and imports those bindings select. The
// catalog it returns has no tools: its snapshot has schema version
// [FeatureSnapshotSchemaVersion], with the imported definitions in
// [Snapshot.Resources], [Snapshot.ResourceTemplates] and
// [Snapshot.Prompts], all of them covered by the revision digest, so that
// a changed definition is noticed as a changed tool is. Register them with
// [Catalog.RegisterResources] and [Catalog.RegisterPrompts].
//
// Each read (resources/read) and get (prompts/get) is one request on the
// session, within Limits.CallTimeout; its answer is checked (see
// [Catalog.RegisterResources], [Catalog.RegisterPrompts]) and a failure
// ends in a canonical failure carrying its reason, never in what the
// remote server said. A resources/list_changed or prompts/list_changed
// makes the catalog stale ([Catalog.Stale]); rediscover and swap, or
// [Catalog.Renew], as for tools.
//
// Errors are as for [Discover], with [ResourceMissing], [PromptMissing],
// [ResourceDuplicate], [PromptDuplicate] and [DefinitionUnsupported]
// besides. With [Options.AllowAbsent], a selected definition that is
// missing, unsupported or whose description is past the limit is left out
// alone ([Catalog.Absent]).
func DiscoverFeatures(ctx context.Context, sess *Session, bindings FeatureBindings, opts *Options) (*Catalog, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	sels, err := bindings.selections()
	if err != nil {
		return nil, err
	}
	limits, err := o.Limits.resolve()
	if err != nil {
		return nil, err
	}
	if sess == nil {
		return nil, newError(BindingInvalid, "", "discovery needs a connected session (see Connect)")
	}
	var errs []error

	w := sess.mon.featureWatch()
	if err := w.check(sess.cs); err != nil {
		return nil, err
	}
	listed, err := listFeatures(ctx, sess.cs, sels, limits)
	if err != nil {
		return nil, err
	}
	c := &Catalog{session: sess.cs, authorize: sess.authorize, monitor: sess.mon, limits: limits, logger: o.Logger}
	c.valid.Store(&validity{gen: w.gen, stale: w.stale})
	snap := &Snapshot{schemaVersion: FeatureSnapshotSchemaVersion, serverID: sess.serverID, protocolVersion: w.version}
	for _, s := range sels {
		var ferrs []error
		switch s.kind {
		case promptKind:
			var p *prompt
			if def, ok := listed.prompts[s.remote]; ok {
				p, ferrs = newPrompt(c, s, def, limits)
			} else {
				ferrs = []error{featureError(promptKind, PromptMissing, s.remote, "the remote server does not list this prompt")}
			}
			if p != nil {
				c.prompts = append(c.prompts, p)
			}
		default:
			var r *resource
			if def, ok := listed.resources[s.remote]; ok && s.kind == resourceKind {
				r, ferrs = newResource(c, s, def, limits)
			} else if def, ok := listed.templates[s.remote]; ok && s.kind == templateKind {
				r, ferrs = newResource(c, s, def, limits)
			} else {
				ferrs = []error{featureError(s.kind, ResourceMissing, s.remote, "the remote server does not list this %s", s.kind)}
			}
			if r != nil {
				c.resources = append(c.resources, r)
			}
		}
		switch {
		case len(ferrs) > 0 && o.AllowAbsent:
			err := errors.Join(ferrs...)
			c.absent = append(c.absent, Absence{Name: s.name, RemoteName: s.remote, Reason: execution.ReasonOf(err), Err: err})
		case len(ferrs) > 0:
			errs = append(errs, ferrs...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(c.resources, func(a, b *resource) int { return strings.Compare(a.entry.Name, b.entry.Name) })
	slices.SortFunc(c.prompts, func(a, b *prompt) int { return strings.Compare(a.entry.Name, b.entry.Name) })
	slices.SortFunc(c.absent, func(a, b Absence) int { return strings.Compare(a.Name, b.Name) })
	snap.resources, snap.templates, snap.prompts = []ResourceEntry{}, []ResourceEntry{}, []PromptEntry{}
	for _, r := range c.resources {
		if r.kind == templateKind {
			snap.templates = append(snap.templates, r.entry)
		} else {
			snap.resources = append(snap.resources, r.entry)
		}
	}
	for _, p := range c.prompts {
		snap.prompts = append(snap.prompts, p.entry)
	}
	if err := snap.seal(); err != nil {
		return nil, newError(DefinitionUnsupported, "", "the snapshot has no canonical form: %v", err)
	}
	c.snap = snap
	return c, nil
}

// Check reports every mistake of the bindings themselves, as
// [DiscoverFeatures] would before listing anything: a local name that is
// not one, a missing title, a URI that is not absolute, a URI template
// that does not parse or whose local form has other variables, a media
// type that is not one, a local name, URI or URI template bound twice, no
// bindings at all. Each is an [*Error] with reason [BindingInvalid] whose
// Tool is the binding's key; they are joined. It contacts nothing.
func (b FeatureBindings) Check() error {
	_, err := b.selections()
	return err
}

// selections checks the bindings and returns what discovery needs of them,
// resources, then templates, then prompts, each sorted by remote key.
func (b FeatureBindings) selections() ([]featureSelection, error) {
	var errs []error
	var sels []featureSelection
	for _, group := range []struct {
		kind     featureKind
		bindings map[string]ResourceBinding
	}{{resourceKind, b.Resources}, {templateKind, b.ResourceTemplates}} {
		for _, remote := range slices.Sorted(maps.Keys(group.bindings)) {
			rb := group.bindings[remote]
			sel, err := rb.selection(group.kind, remote)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			sels = append(sels, sel)
		}
	}
	for _, remote := range slices.Sorted(maps.Keys(b.Prompts)) {
		pb := b.Prompts[remote]
		if err := pb.check(remote); err != nil {
			errs = append(errs, err)
			continue
		}
		sels = append(sels, pb.selection(remote))
	}
	if len(errs) == 0 && len(sels) == 0 {
		errs = append(errs, newError(BindingInvalid, "", "no bindings: a catalog imports only the resources and prompts the host binds"))
	}
	errs = append(errs, checkLocals(sels)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return sels, nil
}

// featureError is an [*Error] about the remote resource, template or
// prompt remote.
func featureError(kind featureKind, reason execution.Reason, remote string, format string, args ...any) *Error {
	e := newError(reason, remote, format, args...)
	e.what = kind.String()
	return e
}

// featureKind is what a feature binding binds.
type featureKind uint8

const (
	resourceKind featureKind = iota
	templateKind
	promptKind
)

func (k featureKind) String() string {
	switch k {
	case resourceKind:
		return "resource"
	case templateKind:
		return "resource template"
	}
	return "prompt"
}

// featureSelection is one bound resource, template or prompt, as discovery
// sees it.
type featureSelection struct {
	kind        featureKind
	remote      string // the remote URI, URI template or prompt name
	name        string // the local name
	uri         string // resources and templates: the local URI (template)
	title       string
	description string
	scopes      []string
	mimeTypes   []string // resources and templates: accepted media types, normalized
}

// checkLocals refuses two bindings of one local name (they become
// capabilities of one application), and two of one local URI or URI
// template.
func checkLocals(sels []featureSelection) []error {
	var errs []error
	names, uris := map[string]string{}, map[string]string{}
	for _, s := range sels {
		if prev, dup := names[s.name]; dup {
			errs = append(errs, featureError(s.kind, BindingInvalid, s.remote, "local name %q is also bound to %s", s.name, quote(prev)))
		}
		names[s.name] = s.remote
		if s.kind == promptKind {
			continue
		}
		key := s.kind.String() + " " + s.uri
		if prev, dup := uris[key]; dup {
			errs = append(errs, featureError(s.kind, BindingInvalid, s.remote, "local %s %q is also bound to %s", s.kind, s.uri, quote(prev)))
		}
		uris[key] = s.remote
	}
	return errs
}

// listedFeatures is what the remote server lists, by remote key.
type listedFeatures struct {
	resources map[string]*mcp.Resource
	templates map[string]*mcp.ResourceTemplate
	prompts   map[string]*mcp.Prompt
}

// listFeatures reads the lists of the kinds bound (each only when the
// server offers its kind: a server without resources lists none), every
// page, within the limits; the three lists share CatalogBytes.
func listFeatures(ctx context.Context, cs *mcp.ClientSession, sels []featureSelection, limits Limits) (listedFeatures, error) {
	var out listedFeatures
	bound := map[featureKind]bool{}
	for _, s := range sels {
		bound[s.kind] = true
	}
	var caps mcp.ServerCapabilities
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = *ir.Capabilities
	}
	budget := &listBudget{bytes: limits.CatalogBytes}
	var err error
	if bound[resourceKind] && caps.Resources != nil {
		out.resources, err = listPages(ctx, limits, budget, resourceKind, "resources", limits.Resources, ResourceDuplicate,
			func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
				res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Resources, res.NextCursor, nil
			}, func(r *mcp.Resource) string { return r.URI })
		if err != nil {
			return out, err
		}
	}
	if bound[templateKind] && caps.Resources != nil {
		out.templates, err = listPages(ctx, limits, budget, templateKind, "resource templates", limits.Resources, ResourceDuplicate,
			func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
				res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.ResourceTemplates, res.NextCursor, nil
			}, func(t *mcp.ResourceTemplate) string { return t.URITemplate })
		if err != nil {
			return out, err
		}
	}
	if bound[promptKind] && caps.Prompts != nil {
		out.prompts, err = listPages(ctx, limits, budget, promptKind, "prompts", limits.Prompts, PromptDuplicate,
			func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
				res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Prompts, res.NextCursor, nil
			}, func(p *mcp.Prompt) string { return p.Name })
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// listBudget is the bytes the lists of one discovery may still take.
type listBudget struct{ bytes int }

// listPages reads every page of one list: at most limits.Pages pages and
// max entries, within the budget, each key once.
func listPages[T any](ctx context.Context, limits Limits, budget *listBudget, kind featureKind, what string, max int, dup execution.Reason,
	page func(context.Context, string) ([]*T, string, error), key func(*T) string) (map[string]*T, error) {
	out := map[string]*T{}
	cursor := ""
	for n := 1; ; n++ {
		if n > limits.Pages {
			return nil, newError(CatalogTooLarge, "", "the %s list has more than %d pages", what, limits.Pages)
		}
		entries, next, err := page(ctx, cursor)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &Error{Reason: DiscoveryFailed, msg: "listing the " + what + " failed", cause: err}
		}
		for _, e := range entries {
			if e == nil {
				return nil, newError(DiscoveryFailed, "", "the %s list holds a null entry", what)
			}
			if len(out) >= max {
				return nil, newError(CatalogTooLarge, "", "the server lists more than %d %s", max, what)
			}
			b, err := json.Marshal(e)
			if err != nil {
				return nil, &Error{Reason: DiscoveryFailed, Tool: key(e), what: kind.String(), msg: "the definition cannot be encoded", cause: err}
			}
			if budget.bytes -= len(b); budget.bytes < 0 {
				return nil, newError(CatalogTooLarge, "", "the resources and prompts listed are larger than %d bytes", limits.CatalogBytes)
			}
			k := key(e)
			if _, seen := out[k]; seen {
				return nil, featureError(kind, dup, k, "the server lists this twice among its %s", what)
			}
			out[k] = e
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}

// featureFailures are the fixed messages of failed reads and gets: the
// reasons are those of tool calls, the words are about what was read.
var featureFailures = map[execution.Reason]string{
	ReasonInvalidArguments:  "the remote server did not accept these arguments",
	ReasonCatalogStale:      "the remote server's resources or prompts changed; this one is unavailable until they are discovered again",
	ReasonConnectionClosed:  "the connection to the remote server is closed",
	ReasonTimeout:           "the remote server did not answer in time",
	ReasonProtocolError:     "the remote server answered with a protocol error",
	ReasonTransportError:    "the remote server could not be reached",
	ReasonResultInvalid:     "the remote server's answer does not match what was bound",
	ReasonResultUnsupported: "the remote server's answer holds content that cannot be passed on",
	ReasonResultTooLarge:    "the remote server's answer is too large",
	ReasonResourceNotFound:  "the remote server has no such resource",

	ReasonCredentialRefused:     credentialRefusedMessage,
	ReasonCredentialUnavailable: credentialUnavailableMessage,
}

// featureFailure returns the canonical failure of a failed read or get.
func featureFailure(r execution.Reason) *execution.Failure {
	return execution.Fail(Canonical(r), featureFailures[r], nil).WithReason(r)
}

// failFeature logs a failed read or get at debug level and returns its
// canonical failure. what is "resource" or "prompt", remote its remote
// URI, template or name.
func (c *Catalog) failFeature(ctx context.Context, what, remote string, reason execution.Reason, cause error) error {
	if c.logger.Enabled(ctx, slog.LevelDebug) {
		attrs := []slog.Attr{
			slog.String("server", c.snap.serverID),
			slog.String(what, remote),
			slog.String("reason", string(reason)),
		}
		if cause != nil {
			attrs = append(attrs, slog.String("cause", cause.Error()))
		}
		c.logger.LogAttrs(ctx, slog.LevelDebug, "mcpimport: "+what+" failed", attrs...)
	}
	return featureFailure(reason)
}

// featureReason names the failure of a read or get that returned err;
// for a read, "not found" (-32002, or -32602 as SEP-2164 answers it) is
// [ReasonResourceNotFound].
func featureReason(ctx context.Context, err error, read bool) execution.Reason {
	r := classify(ctx, err)
	var wire *jsonrpc.Error
	if read && (r == ReasonInvalidArguments || errors.As(err, &wire) && wire.Code == -32002) {
		return ReasonResourceNotFound
	}
	return r
}

// mediaType returns the media type s names ("type/subtype", in lower
// case, without parameters), or false when s is not one.
func mediaType(s string) (string, bool) {
	mt, _, err := mime.ParseMediaType(s)
	if err != nil {
		return "", false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" || strings.Contains(sub, "/") {
		return "", false
	}
	return mt, true
}

// accepts reports whether the media type mt is one of accepted ("type/*"
// accepts every subtype); an empty list accepts every type.
func accepts(accepted []string, mt string) bool {
	if len(accepted) == 0 {
		return true
	}
	for _, a := range accepted {
		if a == mt || strings.HasSuffix(a, "/*") && (a == "*/*" || strings.HasPrefix(mt, a[:len(a)-1])) {
			return true
		}
	}
	return false
}

// Snapshot documents of resources and prompts (schema version 3).

type resourceDoc struct {
	Description       string    `json:"description"`
	LocalName         string    `json:"localName"`
	LocalURI          string    `json:"localUri,omitempty"`
	LocalURITemplate  string    `json:"localUriTemplate,omitempty"`
	MIMEType          string    `json:"mimeType"`
	MIMETypes         []string  `json:"mimeTypes"`
	Policy            policyDoc `json:"policy"`
	RemoteName        string    `json:"remoteName"`
	RemoteURI         string    `json:"remoteUri,omitempty"`
	RemoteURITemplate string    `json:"remoteUriTemplate,omitempty"`
}

type promptDoc struct {
	Arguments   []promptArgumentDoc `json:"arguments"`
	Description string              `json:"description"`
	LocalName   string              `json:"localName"`
	Policy      policyDoc           `json:"policy"`
	RemoteName  string              `json:"remoteName"`
}

type promptArgumentDoc struct {
	Description string `json:"description"`
	Name        string `json:"name"`
	Required    bool   `json:"required"`
}

// featureDocs adds a version 3 snapshot's resources, templates and prompts
// to its document.
func (s *Snapshot) featureDocs(doc *snapshotDoc) {
	if s.schemaVersion != FeatureSnapshotSchemaVersion {
		return
	}
	resources := func(entries []ResourceEntry, template bool) *[]resourceDoc {
		docs := make([]resourceDoc, len(entries))
		for i, e := range entries {
			d := resourceDoc{
				Description: e.Description, LocalName: e.Name, MIMEType: e.MIMEType,
				MIMETypes: append([]string{}, e.MIMETypes...), Policy: policyDoc{Mode: ModeRead, Title: e.Title},
				RemoteName: e.RemoteName,
			}
			if template {
				d.LocalURITemplate, d.RemoteURITemplate = e.URI, e.RemoteURI
			} else {
				d.LocalURI, d.RemoteURI = e.URI, e.RemoteURI
			}
			docs[i] = d
		}
		return &docs
	}
	doc.Resources = resources(s.resources, false)
	doc.ResourceTemplates = resources(s.templates, true)
	prompts := make([]promptDoc, len(s.prompts))
	for i, e := range s.prompts {
		args := make([]promptArgumentDoc, len(e.Arguments))
		for j, a := range e.Arguments {
			args[j] = promptArgumentDoc{Description: a.Description, Name: a.Name, Required: a.Required}
		}
		prompts[i] = promptDoc{Arguments: args, Description: e.Description, LocalName: e.Name,
			Policy: policyDoc{Mode: ModeRead, Title: e.Title}, RemoteName: e.RemoteName}
	}
	doc.Prompts = &prompts
}
