package agnara

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"

	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/policy"
)

// ErrFrozen is reported for a capability registered after the application was
// compiled. Compilation freezes an application: what was compiled is what is
// served, and later registrations change nothing. It is [di.ErrFrozen], the
// one frozen error for every late definition (a provider, a capability, a
// tool): errors.Is holds against any of the three packages' names for it.
var ErrFrozen = di.ErrFrozen

// namePattern is the shape of application and capability names: they form the
// identity "<app>.<capability>", which must itself be a valid MCP tool name.
var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)

// Options configures an [App]. A nil *Options and every zero field mean the
// documented default. The struct is copied by [New].
type Options struct {
	// Version is the application's version, published to clients (for MCP,
	// in the server's implementation info). Default: "0.0.0".
	Version string
	// Dependencies holds the providers capabilities' dependencies are
	// resolved from. Default: an empty registry. The registry is frozen when
	// the application is compiled.
	Dependencies *di.Registry
	// Logger receives one record per finished invocation and the causes of
	// internal failures. Default: a logger that discards everything.
	Logger *slog.Logger
	// Scopes decides whether a principal holds a declared scope. Default:
	// exact match only.
	Scopes policy.Scopes
	// Observer, when set, watches every request an exposure serves for the
	// application and the stages of every invocation, for tracing and
	// metrics. It is the one place observation is installed. Default: none.
	Observer Observer
	// ConfirmationVerifier decides whether confirmation evidence allows a
	// capability that requires confirmation to run, unless the capability
	// sets its own. Default: [policy.Bound].
	ConfirmationVerifier policy.ConfirmationVerifier
}

// App is an application: a named set of capabilities and the options they
// share.
//
// An App is safe for concurrent use. Registration is meant to happen during
// start-up; once the App is compiled it is frozen.
type App struct {
	name string
	site site.Site
	opts Options

	mu     sync.Mutex
	caps   []*Capability
	byName map[string]*Capability
	errs   []error
	frozen bool

	containerOnce sync.Once
	container     *container.Container
	containerErr  error
}

// New returns an application named name. The name must start with a letter
// and contain at most 32 letters, digits, '_' or '-'; a bad name is reported
// when the application is compiled, with the file:line of this call.
func New(name string, opts *Options) *App {
	a := &App{name: name, site: site.Caller(1)}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.Version == "" {
		a.opts.Version = "0.0.0"
	}
	if a.opts.Dependencies == nil {
		a.opts.Dependencies = di.NewRegistry()
	}
	if a.opts.Logger == nil {
		a.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if a.opts.ConfirmationVerifier == nil {
		a.opts.ConfirmationVerifier = policy.Bound{}
	}
	if !namePattern.MatchString(name) {
		a.errs = append(a.errs, site.Errorf(a.site, "agnara.New", "invalid application name %q: want a letter followed by at most 31 letters, digits, '_' or '-'", name))
	}
	return a
}

// Name returns the application's name.
func (a *App) Name() string { return a.name }

// Version returns the application's version.
func (a *App) Version() string { return a.opts.Version }

// Logger returns the application's logger.
func (a *App) Logger() *slog.Logger { return a.opts.Logger }

// Observer returns the application's observer, or nil when it has none.
// Exposures report requests to it; compiled plans report stages.
func (a *App) Observer() Observer { return a.opts.Observer }

// Capabilities returns the registered capabilities in registration order.
func (a *App) Capabilities() []*Capability {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.caps)
}

func init() {
	registry.Install(freeze, define)
}

// freeze closes registration and returns what the compiler needs: the
// capabilities registered so far, the application's dependency container
// (built once, on the first call), the options plans carry and every
// registration mistake recorded so far, joined. It is idempotent.
func freeze(a *App) registry.Frozen[*Capability] {
	a.containerOnce.Do(func() {
		a.container, a.containerErr = container.New(registry.Dependencies(a.opts.Dependencies))
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	a.frozen = true
	errs := slices.Clone(a.errs)
	if a.containerErr != nil {
		errs = append(errs, a.containerErr)
	}
	return registry.Frozen[*Capability]{
		Capabilities:         slices.Clone(a.caps),
		Container:            a.container,
		Err:                  errors.Join(errs...),
		Logger:               a.opts.Logger,
		Scopes:               a.opts.Scopes,
		ConfirmationVerifier: a.opts.ConfirmationVerifier,
	}
}

// Close releases the application's singleton dependencies, in reverse order
// of construction. Call it when the application stops serving. Close is
// idempotent.
func (a *App) Close() error {
	a.containerOnce.Do(func() {
		a.container, a.containerErr = container.New(registry.Dependencies(a.opts.Dependencies))
	})
	return a.container.Close()
}

// Capability registers fn as a capability and returns its handle, which
// exposures (such as mcpexpose) refer to. opts may be nil. Mistakes in fn or
// opts are not reported here but when the application is compiled, each with
// the file:line of this call.
func (a *App) Capability(fn any, opts *CapabilityOptions) *Capability {
	c := newCapability(a, site.Caller(1), fn, opts)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.frozen {
		a.errs = append(a.errs, &site.Error{Site: c.site, Subject: c.Identity(), Err: ErrFrozen})
		c.late = true
		return c
	}
	if prev, dup := a.byName[c.name]; dup && c.name != "" {
		a.errs = append(a.errs, site.Errorf(c.site, c.Identity(), "duplicate capability name (first registered at %s)", prev.site))
	} else if c.name != "" {
		if a.byName == nil {
			a.byName = map[string]*Capability{}
		}
		a.byName[c.name] = c
	}
	a.caps = append(a.caps, c)
	return c
}

func (a *App) String() string { return fmt.Sprintf("agnara.App(%s)", a.name) }

func joinErrs(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}
