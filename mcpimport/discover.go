package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/canonjson"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Options configures [Discover]. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Limits bound what the remote server may send. Default: [DefaultLimits]().
	Limits Limits
	// Logger receives a warn record, "mcpimport: remote tool failed", for
	// each call the remote server failed with an explanation (an isError
	// result, a JSON-RPC error), holding the remote's text (its first 512
	// bytes, invisible characters escaped), which the caller never sees;
	// and debug records about other failed calls (reasons and causes).
	// Arguments are never logged. Default: a logger that discards
	// everything.
	Logger *slog.Logger
	// AllowAbsent makes discovery succeed when some bound tools cannot be
	// imported: not listed ([ToolMissing]), a schema outside the profile
	// ([SchemaUnsupported]), a description past the limit
	// ([DescriptionTooLarge]) or a view that cannot be imported
	// ([UIUnsupported]). Such a tool is left out of the catalog (and
	// its snapshot and digest) and reported by [Catalog.Absent]; it is never
	// imported in a weakened form. Every other problem still fails
	// discovery. Default: false, every bound tool must import.
	AllowAbsent bool
}

// Catalog is the result of one discovery: a [Snapshot] of the imported tools,
// and the means to call them on the session they were discovered on. Register
// its tools with an application to serve them as ordinary capabilities.
//
// A Catalog's tools never change. When the remote catalog changes (a
// tools/list_changed notification reached the monitor), every call of it
// fails with [ReasonCatalogStale]; the host discovers again and either swaps
// catalogs (and whatever serves them) at a safe point or, when the new
// catalog is identical, renews this one ([Catalog.Renew]). A catalog never
// gains tools.
//
// A Catalog is safe for concurrent use.
type Catalog struct {
	snap    *Snapshot
	session *mcp.ClientSession
	tasks   *taskRegistry // nil unless the session follows remote tasks
	monitor *Monitor
	valid   atomic.Pointer[validity]
	absent  []Absence // bound tools left out (AllowAbsent), sorted by local name
	limits  Limits
	logger  *slog.Logger
	store   approval.Store // write catalogs only
	// authorize is the session's ConnectOptions.Authorizer, or nil.
	authorize Authorizer
	// credential is the session's ConnectOptions.Credential.
	credential string
	tools      []*tool // in snapshot order
	// Catalogs of resources and prompts (DiscoverFeatures) only, in
	// snapshot order.
	resources []*resource
	prompts   []*prompt
}

// tool is one imported tool, ready to call.
type tool struct {
	cat    *Catalog
	entry  Entry
	sel    selection
	output *jsonschema.Schema // nil without an output schema
	turn   chan struct{}      // nil when concurrency-safe; else a one-slot semaphore
}

// Discover lists the tools of the remote server on sess (every page) and
// imports those that bindings select, keyed by remote tool name. The
// session's server id is recorded in the snapshot.
//
// The host owns the session (see [Connect]): it closes it, after which every
// call of the catalog fails with [ReasonConnectionClosed]. Discover makes
// only tools/list requests.
//
// Discover returns every problem it finds, joined, each an [*Error] with its
// reason (see [execution.ReasonOf]), and no catalog: a binding that names a tool the server
// does not list, a selected schema outside the profile (see the package
// documentation), a catalog past the limits. With [Options.AllowAbsent], the
// first three leave that tool alone out of the catalog instead (see
// [Catalog.Absent]). Unselected tools are not checked beyond the catalog
// limits, and never registered.
func Discover(ctx context.Context, sess *Session, bindings map[string]Binding, opts *Options) (*Catalog, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var errs []error
	sels := make([]selection, 0, len(bindings))
	for _, remote := range slices.Sorted(maps.Keys(bindings)) {
		b := bindings[remote]
		if e := b.check(remote); e != nil {
			errs = append(errs, e)
			continue
		}
		sels = append(sels, b.selection(remote))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return discover(ctx, sess, sels, o, SnapshotSchemaVersion, nil)
}

// selection is one bound remote tool, read or write, as discovery sees it.
type selection struct {
	remote      string
	entry       Entry // every field but those discovery fills in from the remote tool
	description string
	scopes      []string
	validator   ScopeValidator
	task        *TaskOptions // nil: no tasks; resolved by discover
}

// discover is the discovery both entry points share.
func discover(ctx context.Context, sess *Session, sels []selection, o Options, version int, store approval.Store) (*Catalog, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	limits, err := o.Limits.resolve()
	if err != nil {
		return nil, err
	}
	if sess == nil {
		return nil, newError(BindingInvalid, "", "discovery needs a connected session (see Connect)")
	}
	session, monitor, serverID := sess.cs, sess.mon, sess.serverID
	if len(sels) == 0 {
		return nil, newError(BindingInvalid, "", "no bindings: a catalog imports only tools the host binds")
	}
	var errs []error
	locals := map[string]string{}
	for _, s := range sels {
		if prev, dup := locals[s.entry.Name]; dup {
			errs = append(errs, newError(BindingInvalid, s.remote, "local name %q is also bound to remote tool %s", s.entry.Name, quote(prev)))
		}
		locals[s.entry.Name] = s.remote
	}
	for i, s := range sels {
		if s.task == nil {
			continue
		}
		if sess.tasks == nil {
			errs = append(errs, newError(BindingInvalid, s.remote, "the binding follows remote tasks: connect its session with ConnectOptions.Tasks"))
			continue
		}
		o, err := s.task.resolve(s.remote, limits)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sels[i].task = &o
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	w := monitor.watch()
	if err := w.check(session); err != nil {
		return nil, err
	}

	listed, err := list(ctx, session, limits)
	if err != nil {
		return nil, err
	}

	c := &Catalog{
		session:    session,
		authorize:  sess.authorize,
		credential: sess.credential,
		tasks:      sess.tasks,
		monitor:    monitor,
		limits:     limits,
		logger:     o.Logger,
		store:      store,
	}
	c.valid.Store(&validity{gen: w.gen, stale: w.stale})
	snap := &Snapshot{schemaVersion: version, serverID: serverID, protocolVersion: w.version}
	uis := &uiReader{session: session, limits: limits, read: map[string]uiRead{}}
	for _, s := range sels {
		var terrs []error
		var t *tool
		if def, ok := listed[s.remote]; ok {
			t, terrs = newTool(c, s, def, limits)
			if len(terrs) == 0 {
				var err error
				if t.entry.UI, err = importUI(ctx, uis, s.remote, def); err != nil {
					if execution.ReasonOf(err) != UIUnsupported {
						return nil, err // the read failed: the session, not the tool
					}
					terrs = []error{err}
				}
			}
		} else {
			terrs = []error{newError(ToolMissing, s.remote, "the remote server does not list this tool")}
		}
		switch {
		case len(terrs) > 0 && o.AllowAbsent:
			err := errors.Join(terrs...)
			c.absent = append(c.absent, Absence{Name: s.entry.Name, RemoteName: s.remote, Reason: execution.ReasonOf(err), Err: err})
		case len(terrs) > 0:
			errs = append(errs, terrs...)
		default:
			c.tools = append(c.tools, t)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(c.tools, func(a, b *tool) int { return strings.Compare(a.entry.Name, b.entry.Name) })
	slices.SortFunc(c.absent, func(a, b Absence) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range c.tools {
		snap.entries = append(snap.entries, t.entry)
	}
	if err := snap.seal(); err != nil {
		return nil, newError(SchemaUnsupported, "", "the snapshot has no canonical form: %v", err)
	}
	c.snap = snap
	return c, nil
}

// check refuses a monitor state that discovery cannot start from.
func (w watch) check(session *mcp.ClientSession) error {
	switch {
	case w.closed:
		return newError(ProtocolUnsupported, "", "the monitor is closed")
	case w.version == "":
		return newError(ProtocolUnsupported, "", "the monitor has accepted no protocol version: call AcceptProtocolVersion with the negotiated version first")
	}
	if ir := session.InitializeResult(); ir == nil || ir.ProtocolVersion != w.version {
		return newError(ProtocolUnsupported, "", "the session did not negotiate the protocol version the monitor accepted (%s)", w.version)
	}
	return nil
}

// list reads every page of the remote catalog within the limits.
func list(ctx context.Context, session *mcp.ClientSession, limits Limits) (map[string]*mcp.Tool, error) {
	tools := map[string]*mcp.Tool{}
	var (
		cursor string
		bytes  int
		count  int
	)
	for page := 1; ; page++ {
		if page > limits.Pages {
			return nil, newError(CatalogTooLarge, "", "the catalog has more than %d pages", limits.Pages)
		}
		res, err := session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &Error{Reason: DiscoveryFailed, msg: "tools/list failed", cause: err}
		}
		for _, t := range res.Tools {
			count++
			if count > limits.Tools {
				return nil, newError(CatalogTooLarge, "", "the catalog lists more than %d tools", limits.Tools)
			}
			b, err := json.Marshal(t)
			if err != nil {
				return nil, &Error{Reason: DiscoveryFailed, Tool: t.Name, msg: "the tool definition cannot be encoded", cause: err}
			}
			bytes += len(b)
			if bytes > limits.CatalogBytes {
				return nil, newError(CatalogTooLarge, "", "the catalog is larger than %d bytes", limits.CatalogBytes)
			}
			if _, dup := tools[t.Name]; dup {
				return nil, newError(ToolDuplicate, t.Name, "the catalog lists this tool twice")
			}
			tools[t.Name] = t
		}
		if res.NextCursor == "" {
			return tools, nil
		}
		cursor = res.NextCursor
	}
}

// newTool checks one selected remote tool against the profile and limits.
func newTool(c *Catalog, s selection, def *mcp.Tool, limits Limits) (*tool, []error) {
	var errs []error
	remote := s.remote
	if len(def.Description) > limits.DescriptionBytes {
		errs = append(errs, newError(DescriptionTooLarge, remote, "the description is larger than %d bytes", limits.DescriptionBytes))
	}
	profile := s.entry.Profile
	in, err := remoteSchema(remote, "input", def.InputSchema, limits, profile)
	if err != nil {
		errs = append(errs, err)
	}
	var out json.RawMessage
	if def.OutputSchema != nil {
		if out, err = remoteSchema(remote, "output", def.OutputSchema, limits, profile); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	t := &tool{cat: c, sel: s, entry: s.entry}
	t.entry.RemoteName = remote
	t.entry.Description = def.Description
	t.entry.InputSchema = in
	t.entry.OutputSchema = out
	if def.Annotations != nil {
		// Kept for hosts that compare them (the gateway pins them); they
		// grant nothing and stay out of the digest.
		raw, err := json.Marshal(def.Annotations)
		if err == nil {
			raw, err = canonjson.Canonicalize(raw)
		}
		if err != nil {
			return nil, []error{newError(DiscoveryFailed, remote, "the tool's annotations cannot be encoded")}
		}
		t.entry.Annotations = raw
	}
	if !t.entry.ConcurrencySafe {
		t.turn = make(chan struct{}, 1)
	}
	if out != nil {
		v, err := schemacheck.Compile(out)
		if err != nil { // checkSchema compiled it already
			return nil, []error{newError(SchemaUnsupported, remote, "output schema does not compile")}
		}
		t.output = v
	}
	return t, nil
}

// remoteSchema returns a selected schema in canonical form, checked against
// the binding's profile and the size limit.
func remoteSchema(remote, which string, schema any, limits Limits, profile Profile) (json.RawMessage, *Error) {
	if schema == nil {
		return nil, newError(SchemaUnsupported, remote, "the tool has no %s schema", which)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, newError(SchemaUnsupported, remote, "the %s schema cannot be encoded", which)
	}
	canon, err := canonjson.Canonicalize(raw)
	if err != nil {
		return nil, newError(SchemaUnsupported, remote, "the %s schema has no canonical form", which)
	}
	check, name := checkSchema, ""
	if profile == ProfileStandard {
		check, name = checkStandardSchema, " (standard profile)"
	}
	if err := check(canon, limits.SchemaBytes); err != nil {
		return nil, newError(SchemaUnsupported, remote, "%s schema%s: %v", which, name, err)
	}
	return canon, nil
}

// importUI reads the view the listed tool def links, if any (ui.go).
func importUI(ctx context.Context, uis *uiReader, remote string, def *mcp.Tool) (*UI, error) {
	uri, err := uiLink(remote, def)
	if err != nil {
		return nil, err
	}
	if uri == "" {
		return nil, nil
	}
	return uis.ui(ctx, remote, uri)
}

// Snapshot returns the catalog's snapshot.
func (c *Catalog) Snapshot() *Snapshot { return c.snap }
