package mcpexpose

import (
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/site"
)

// ErrFrozen is reported for a tool, resource or prompt declared after its
// exposure was compiled. It is [agnara.ErrFrozen] (and so di.ErrFrozen),
// the one frozen error for every late definition: errors.Is holds against
// any of the three packages' names for it.
var ErrFrozen = agnara.ErrFrozen

// toolNamePattern is the shape of a tool's wire name.
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ToolOptions configures one tool. A nil *ToolOptions means the defaults.
type ToolOptions struct {
	// Name is the tool's wire name: 1 to 64 letters, digits, '_', '.' or
	// '-', unique within the exposure. Default: the capability's identity,
	// such as "users.get_user".
	Name string
	// Task lets the tool run as a task of the MCP tasks extension
	// (io.modelcontextprotocol/tasks, see docs/tasks.md): a 2026-07-28
	// tools/call whose client declares the extension is answered with a
	// task handle once every check (scope guard, rate limit, policies,
	// input, confirmation) has passed, and the handler, an ordinary
	// capability function, goes on running. Default: TaskNever.
	Task TaskSupport
	// TaskAfterQuestions creates the task only when the handler calls
	// execution.Detach, not before it runs: questions it asks first are
	// asked in rounds of the tools/call itself, and a handler that returns
	// without detaching answers directly. It needs Task.
	TaskAfterQuestions bool
	// UI, when set, is the tool's MCP App view (see [UI] and
	// docs/apps.md): served as a ui:// resource that the tool's definition
	// links as _meta.ui.resourceUri, and readable by exactly the callers
	// who may see the tool. A server with a view declares the
	// io.modelcontextprotocol/ui extension. Default: nil, no view.
	UI *UI
}

// Exposure declares which capabilities of one application are MCP tools,
// resources, resource templates and prompts.
// Declarations are recorded with their file:line; mistakes are reported by
// [Exposure.Compile], all together.
//
// An Exposure is safe for concurrent use.
type Exposure struct {
	app *agnara.App

	mu        sync.Mutex
	decls     []decl
	withdrawn []*withdrawnTool // withdrawn.go
	features  []featureDecl    // resources, templates, prompts (resources.go)
	search    *searchDecl      // search.go
	errs      []error
	frozen    bool
	snap      *Snapshot
	err       error
}

type decl struct {
	cap      *agnara.Capability
	name     string
	task     TaskSupport
	askFirst bool
	ui       *UI // a copy of ToolOptions.UI (apps.go)
	site     site.Site
}

// New returns an exposure of app's capabilities. It exposes nothing until
// tools are declared with [Exposure.Tool].
func New(app *agnara.App) *Exposure {
	return &Exposure{app: app}
}

// Tool declares c as a tool. opts may be nil.
func (e *Exposure) Tool(c *agnara.Capability, opts *ToolOptions) {
	s := site.Caller(1)
	d := decl{cap: c, site: s}
	if opts != nil {
		d.name = opts.Name
		d.task, d.askFirst = opts.Task, opts.TaskAfterQuestions
		if opts.UI != nil {
			d.ui = cloneUI(opts.UI)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c == nil {
		e.errs = append(e.errs, site.Errorf(s, "mcpexpose.Tool", "nil capability"))
		return
	}
	if d.name == "" {
		d.name = c.Identity()
	}
	// A tool with a bad task option is still declared, so that its other
	// mistakes (name, description, input) are reported in the same round.
	if d.task > TaskRequired {
		e.errs = append(e.errs, site.Errorf(s, d.name, "unknown ToolOptions.Task %d", d.task))
		d.task, d.askFirst = TaskNever, false
	}
	if d.askFirst && d.task == TaskNever {
		e.errs = append(e.errs, site.Errorf(s, d.name, "ToolOptions.TaskAfterQuestions needs ToolOptions.Task"))
		d.askFirst = false
	}
	if e.frozen {
		e.errs = append(e.errs, &site.Error{Site: s, Subject: d.name, Err: ErrFrozen})
		return
	}
	e.decls = append(e.decls, d)
}

// Compile compiles the application (see [execution.Compile]) and the
// declared tools into an immutable snapshot, in declaration order. It
// reports every mistake at once, in one round, each with the file:line that
// made it: the application's own, invalid or duplicate wire names, resource
// URIs, templates and prompt names, tools without a description, views
// ([ToolOptions].UI) that are incomplete, clash or allow what is no origin,
// capabilities of another application, and what a declaration's plan
// cannot serve (a template variable that is no input field, say). The
// declarations are checked against the plans of every capability compiled
// without a mistake, whatever the others' mistakes: fixing one mistake
// never reveals another that was there all along. The error is an
// errors.Join of one error per mistake, as [execution.Compile]'s is; its
// Unwrap() []error lists them.
//
// Compile closes the exposure: tools declared later are errors. It is
// idempotent: later calls return the same snapshot, or the mistakes made
// since.
func (e *Exposure) Compile() (*Snapshot, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.frozen {
		if len(e.errs) > 0 {
			return nil, errors.Join(append(unjoin(e.err), e.errs...)...)
		}
		return e.snap, e.err
	}
	e.frozen = true
	snap, errs := e.compile()
	errs = append(errs, e.errs...)
	e.errs = nil
	if len(errs) > 0 {
		e.snap, e.err = nil, errors.Join(errs...)
	} else {
		e.snap, e.err = snap, nil
	}
	return e.snap, e.err
}

// unjoin returns the errors err joins, err itself, or nothing for nil.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// compile builds the snapshot and returns every mistake found, one error
// each. The snapshot is served only when there are none.
func (e *Exposure) compile() (*Snapshot, []error) {
	plans, errs := registry.Compile[*execution.Plans](e.app)
	// With mistakes in the application, a capability without a plan is one
	// of them, already reported.
	appFailed := len(errs) > 0
	snap := &Snapshot{app: e.app, byName: map[string]*tool{}, withdrawn: map[string]*withdrawnTool{}, byURI: map[string]*resource{}, byPrompt: map[string]*prompt{}, byUI: map[string]*uiView{}}
	c := &checks{names: map[string]site.Site{}, described: map[*agnara.Capability]bool{}}
	for _, d := range e.decls {
		named := true
		if !toolNamePattern.MatchString(d.name) {
			errs = append(errs, site.Errorf(d.site, d.name, "invalid tool name %q: want 1 to 64 letters, digits, '_', '.' or '-'", d.name))
			named = false
		} else if prev, dup := c.names[d.name]; dup {
			errs = append(errs, site.Errorf(d.site, d.name, "duplicate tool name (first declared at %s)", prev))
			named = false
		} else {
			c.names[d.name] = d.site
		}
		if d.cap.App() != e.app {
			errs = append(errs, site.Errorf(d.site, d.name, "capability %s belongs to application %q, not %q", d.cap, d.cap.App().Name(), e.app.Name()))
			continue
		}
		if err := c.describe(d.cap, d.site, d.name, "a tool"); err != nil {
			errs = append(errs, err)
		}
		if !named {
			continue
		}
		p, ok := plans.Plan(d.cap)
		if !ok {
			if !appFailed {
				errs = append(errs, site.Errorf(d.site, d.name, "no plan for capability %s: it was registered after the application was compiled", d.cap))
			}
			continue
		}
		t, err := newTool(d, p)
		if err != nil {
			errs = append(errs, site.Errorf(d.site, d.name, "%v", err))
			continue
		}
		snap.tools = append(snap.tools, t)
		snap.byName[t.name] = t
	}
	errs = append(errs, e.compileWithdrawn(snap, c)...)
	errs = append(errs, e.compileSearch(snap, c)...)
	errs = append(errs, e.compileFeatures(plans, appFailed, snap, c)...)
	errs = append(errs, e.compileUIs(snap)...)
	return snap, errs
}

// checks is what the declaration checks of one compile share: the wire
// names declared so far (tools and withdrawn tools, whether or not they
// compiled), and the capabilities whose description has been checked, so
// that a capability declared twice is reported once.
type checks struct {
	names     map[string]site.Site
	described map[*agnara.Capability]bool
}

// describe checks, once per capability, that c has the description what
// (such as "a tool") needs.
func (c *checks) describe(capability *agnara.Capability, at site.Site, subject, what string) error {
	if c.described[capability] {
		return nil
	}
	c.described[capability] = true
	if capability.Options().Description != "" {
		return nil
	}
	return site.Errorf(at, subject, "%s needs a description: set CapabilityOptions.Description of %s (registered at %s)", what, capability, capability.Site())
}

func (e *Exposure) String() string { return fmt.Sprintf("mcpexpose.Exposure(%s)", e.app.Name()) }
