package mcpexpose

import (
	"context"
	"slices"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var errMissingParams = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing params"}

// serveFeature answers the lists itself, per caller, and guards reads,
// prompts, completions and subscriptions with the same scope predicate as
// tools/list and tools/call; a read or a prompt runs here too, and its
// result is finished as the SDK finishes a handler's (finished.go). A method of a kind the snapshot has none of is
// answered as the server's features say: prompts/list of a server without
// prompts is still an empty list, since a swap may add some.
func (s *server) serveFeature(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if !s.invoke {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + " is not served here: this server is for discovery only"}
	}
	rec, release := s.recordOf(ctx, method, req)
	defer release()
	p, err := rec.principal()
	if err != nil {
		return nil, err
	}
	e := s.acquire()
	defer s.release(e)
	// Everything runs on this snapshot, as p.
	onSnapshot := *rec
	onSnapshot.e = e
	if !e.snap.offers(method) && !s.opts.Swappable {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method \"" + method + "\" is not offered by this server"}
	}
	var end func(agnara.Label, error)
	if obs := s.app.Observer(); obs != nil {
		info := agnara.RequestInfo{Method: method, Tool: featureTarget(req), PrincipalID: p.ID()}
		ctx, end = obs.Request(ctx, info)
	}
	res, err := s.dispatchFeature(policy.WithPrincipal(ctx, p), method, req, &onSnapshot, next)
	if end != nil {
		end(labelOf(err), err)
	}
	return res, err
}

func (s *server) dispatchFeature(ctx context.Context, method string, req mcp.Request, rec *record, next mcp.MethodHandler) (mcp.Result, error) {
	e, p := rec.e, rec.caller
	switch method {
	case "resources/list":
		return s.listResources(e, req, p)
	case "resources/templates/list":
		return s.listResourceTemplates(e, req, p)
	case "prompts/list":
		return s.listPrompts(e, req, p)
	case "completion/complete":
		r, _ := req.(*mcp.CompleteRequest)
		if r == nil {
			return nil, errMissingParams
		}
		return s.complete(ctx, e, r, p)
	case "resources/read":
		r, _ := req.(*mcp.ReadResourceRequest)
		if r == nil || r.Params == nil {
			return nil, errMissingParams
		}
		return s.readResource(ctx, e, r, p)
	case "prompts/get":
		r, _ := req.(*mcp.GetPromptRequest)
		if r == nil || r.Params == nil {
			return nil, errMissingParams
		}
		return s.getPrompt(ctx, e, r, p)
	case "resources/subscribe":
		r, _ := req.(*mcp.SubscribeRequest)
		if r == nil || r.Params == nil {
			return nil, errMissingParams
		}
		if err := s.checkSubscribe(e, r.Params.URI, p); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	case "resources/unsubscribe":
		return next(ctx, method, req)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method \"" + method + "\" is not offered by this server"}
}

// checkListen guards the resource subscriptions of a subscriptions/listen
// as resources/subscribe is guarded.
func (s *server) checkListen(req mcp.Request, p policy.Principal) error {
	r, _ := req.(*mcp.SubscriptionsListenRequest)
	if r == nil || r.Params == nil || r.Params.Notifications == nil {
		return nil // the SDK refuses it
	}
	e := s.cur.Load()
	for _, uri := range r.Params.Notifications.ResourceSubscriptions {
		if err := s.checkSubscribe(e, uri, p); err != nil {
			return err
		}
	}
	return nil
}

// featureTarget names what a request reads, gets or completes, for the
// observer.
func featureTarget(req mcp.Request) string {
	switch r := req.(type) {
	case *mcp.ReadResourceRequest:
		if r.Params != nil {
			return r.Params.URI
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return r.Params.Name
		}
	}
	return ""
}

// offers reports whether the snapshot has something the method serves.
func (s *Snapshot) offers(method string) bool {
	switch method {
	case "prompts/list", "prompts/get":
		return len(s.prompts) > 0
	case "completion/complete":
		return s.hasCompleters()
	}
	return len(s.resources)+len(s.templates)+len(s.uis) > 0
}

// featureCapabilities adds to caps what the snapshot offers besides tools.
func featureCapabilities(caps *mcp.ServerCapabilities, snap *Snapshot, swappable bool) {
	if len(snap.resources)+len(snap.templates)+len(snap.uis) > 0 {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: swappable, Subscribe: true}
	}
	if len(snap.uis) > 0 || swappable {
		// MCP Apps (apps.go): declared only by a server with a view, or
		// one a swap may give views (a gateway, built before its
		// upstreams are imported): a client learns the capabilities at
		// initialize only.
		caps.AddExtension(uiExtension, map[string]any{})
	}
	if len(snap.prompts) > 0 {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: swappable}
	}
	if snap.hasCompleters() {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
}

// registerFeatures makes the SDK server hold what snap exposes besides
// tools, each with a handler that returns what serveFeature computed, and
// lets go of what snap no longer has and no epoch in use has either.
// s.swapMu is held, or the server is being built. It reports whether the
// resources and the prompts the SDK holds changed.
func (s *server) registerFeatures(snap *Snapshot) (resChanged, promptsChanged bool) {
	if s.regFeatures == nil {
		s.regFeatures = map[string]string{}
	}
	for _, r := range snap.resources {
		if key := "r:" + r.uri; s.regFeatures[key] != r.digest {
			def := r.def
			s.mcp.AddResource(&def, s.readHandler)
			s.regFeatures[key], resChanged = r.digest, true
		}
	}
	for _, v := range snap.uis {
		if key := "r:" + v.uri; s.regFeatures[key] != v.digest {
			s.mcp.AddResource(v.project(), s.readHandler)
			s.regFeatures[key], resChanged = v.digest, true
		}
	}
	for _, t := range snap.templates {
		if key := "t:" + t.def.URITemplate; s.regFeatures[key] != t.digest {
			def := t.def
			s.mcp.AddResourceTemplate(&def, s.readHandler)
			s.regFeatures[key], resChanged = t.digest, true
		}
	}
	for _, pr := range snap.prompts {
		if key := "p:" + pr.name; s.regFeatures[key] != pr.digest {
			s.mcp.AddPrompt(pr.project(), s.promptHandler)
			s.regFeatures[key], promptsChanged = pr.digest, true
		}
	}
	s.noteHeld()
	return resChanged, promptsChanged
}

// sweepFeatures unregisters the resources, templates and prompts that
// neither the current epoch nor a retired one in use has. s.swapMu is held.
func (s *server) sweepFeatures() (resChanged, promptsChanged bool) {
	snaps := []*Snapshot{s.cur.Load().snap}
	for _, e := range s.retired {
		snaps = append(snaps, e.snap)
	}
	var uris, templates, prompts []string
	for key := range s.regFeatures {
		kind, name := key[:2], key[2:]
		if slices.ContainsFunc(snaps, func(sn *Snapshot) bool { return sn.hasFeature(kind, name) }) {
			continue
		}
		delete(s.regFeatures, key)
		switch kind {
		case "r:":
			uris = append(uris, name)
		case "t:":
			templates = append(templates, name)
		case "p:":
			prompts = append(prompts, name)
		}
	}
	if len(uris) > 0 {
		s.mcp.RemoveResources(uris...)
	}
	if len(templates) > 0 {
		s.mcp.RemoveResourceTemplates(templates...)
	}
	if len(prompts) > 0 {
		s.mcp.RemovePrompts(prompts...)
	}
	s.noteHeld()
	return len(uris)+len(templates) > 0, len(prompts) > 0
}

// noteHeld records whether the SDK server holds prompts, and resources or
// templates: what its capabilities, which a listen's agreement follows,
// derive from when they were not declared at build. s.swapMu is held, or
// the server is being built.
func (s *server) noteHeld() {
	var prompts, resources bool
	for key := range s.regFeatures {
		if strings.HasPrefix(key, "p:") {
			prompts = true
		} else {
			resources = true
		}
	}
	s.holds.prompts.Store(prompts)
	s.holds.resources.Store(resources)
}

func (s *Snapshot) hasFeature(kind, name string) bool {
	switch kind {
	case "r:":
		_, ok := s.byURI[name]
		_, ui := s.byUI[name]
		return ok || ui
	case "t:":
		return slices.ContainsFunc(s.templates, func(t *resourceTemplate) bool { return t.def.URITemplate == name })
	case "p:":
		_, ok := s.byPrompt[name]
		return ok
	}
	return false
}

// readHandler is the SDK handler of every resource and template, and
// promptHandler of every prompt, which registering them with the SDK
// needs; the middleware reads and gets them itself (serveFeature), so
// neither is reached.
func (s *server) readHandler(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, errUnrouted
}

func (s *server) promptHandler(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return nil, errUnrouted
}
