package agnara

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/policy"
)

// CapabilityOptions declares the metadata of a capability. A nil
// *CapabilityOptions and every zero field mean the documented default. The
// struct and its slices are copied on registration.
type CapabilityOptions struct {
	// Name is the capability's name within its application. Default: the
	// function's name in snake_case, initialisms kept together (GetUser
	// becomes get_user, GetUserByID get_user_by_id, HTTPServer
	// http_server, ListURLs list_urls). Closures and
	// other anonymous functions have no usable name and must set one. A name
	// starts with a letter and has at most 32 letters, digits, '_' or '-'.
	Name string
	// Title is a short human-readable name.
	Title string
	// Description tells a caller (often a model) what the capability does
	// and when to use it. Exposures such as MCP tools require it.
	Description string
	// Scopes are the scopes a caller must hold, all of them. They are
	// checked before the input is decoded, a dependency is built or the
	// function runs.
	Scopes []string
	// Policies run in order after the scope check and input validation.
	Policies []policy.Policy
	// Confirm, when non-empty, requires the caller to confirm each
	// invocation; it is the question put to them. Without confirmation
	// evidence an invocation ends with an "interaction_required" failure.
	Confirm string
	// ConfirmationVerifier overrides the application's verifier for this
	// capability.
	ConfirmationVerifier policy.ConfirmationVerifier
	// Timeout bounds each invocation; when it expires the caller receives a
	// "timeout" failure. Default: no bound of its own.
	Timeout time.Duration
	// RateLimit bounds how often each caller may invoke the capability; a
	// call over the limit is refused before its input is decoded, with an
	// "unavailable" failure of reason "rate_limited" saying when to retry.
	// It is checked after the scope guard. Default (the zero RateLimit):
	// the exposure's default, if any (for MCP, ServerOptions.RateLimit),
	// else no limit.
	RateLimit RateLimit
	// Annotations are hints for clients about the capability's effects.
	// They authorize nothing; but a capability annotated Destructive must
	// say who may run it: Scopes, Policies, Confirm, or AnyoneMayCall.
	Annotations Annotations
	// AnyoneMayCall declares, in so many words, that any caller, anonymous
	// ones included, may invoke the capability with no scope, policy or
	// confirmation in the way. A capability annotated Destructive needs it
	// when it declares none of those: without it, compiling the
	// application reports the capability, so that a write served to anyone
	// is never the quiet default. It contradicts Scopes. Exposures show it
	// in their review form (for MCP, "anyoneMayCall" in the snapshot's
	// JSON); it changes nothing a caller sees.
	AnyoneMayCall bool
	// Forms are the forms (made by execution.NewForm) the capability asks
	// the caller to fill in. Declaring them makes compilation report a form
	// that does not fit the elicitation subset, with this registration's
	// file:line, instead of the first invocation that asks it.
	Forms []Form
	// InputSchema is the JSON Schema of the arguments of a capability whose
	// input parameter is json.RawMessage. It is required for such
	// capabilities, must describe an object, and is published verbatim.
	// It must not be set for any other capability: their schema is derived
	// from the input struct.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the value a capability whose
	// output type is json.RawMessage returns. It is optional for such
	// capabilities (without it the value is described as any JSON value),
	// is published verbatim, and exposures validate results against it.
	// For a capability returning execution.Result it describes the
	// result's structured value, which exposures then publish as it is,
	// with no envelope; optional there too (without it the result is
	// content only). It must not be set for any other capability.
	OutputSchema json.RawMessage
}

// Form is a form a capability asks its caller to fill in (for MCP, an
// elicitation), declared in [CapabilityOptions.Forms]. Forms are made by
// execution.NewForm, from a struct type; no other type is a Form.
type Form interface {
	// Schema returns the form's JSON Schema, or nil when the form is
	// invalid.
	Schema() json.RawMessage
	// Err reports why the form's type does not fit the elicitation form
	// subset, or nil.
	Err() error
	// FormSeal seals the interface: its argument's type is internal to
	// agnara-go. It does nothing.
	FormSeal(registry.Sealed)
}

// Annotations are hints about a capability's behaviour, published to clients
// (for MCP, as tool annotations). They are advisory: no part of agnara grants
// or refuses a call because of them. Combine them with '|'.
//
// The zero value declares nothing, and clients then assume the worst (a
// destructive, open-world tool). Once any annotation is set, all of them are
// published exactly as declared: a capability annotated ReadOnly is published
// as read-only, not idempotent and closed-world.
type Annotations uint8

const (
	// ReadOnly: the capability does not modify its environment.
	ReadOnly Annotations = 1 << iota
	// Destructive: the capability may delete or overwrite data. Meaningless
	// with ReadOnly, and refused together with it. A Destructive capability
	// must say who may run it (Scopes, Policies or Confirm), or that anyone
	// may ([CapabilityOptions.AnyoneMayCall]); compiling it is a mistake
	// otherwise.
	Destructive
	// Idempotent: calling it again with the same arguments has no further
	// effect.
	Idempotent
	// OpenWorld: the capability reaches beyond the application's own data
	// (the web, third-party services).
	OpenWorld
)

// Has reports whether every annotation in b is set in a.
func (a Annotations) Has(b Annotations) bool { return a&b == b }

// String lists the set annotations, such as "read-only|idempotent".
func (a Annotations) String() string {
	var parts []string
	for _, x := range []struct {
		a    Annotations
		name string
	}{{ReadOnly, "read-only"}, {Destructive, "destructive"}, {Idempotent, "idempotent"}, {OpenWorld, "open-world"}} {
		if a.Has(x.a) {
			parts = append(parts, x.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Capability is one registered capability: the function and its declared
// metadata, as written by the application. It is the handle exposures refer
// to. Compilation (package execution) turns it into an immutable plan.
//
// A Capability is immutable after registration and safe for concurrent use.
type Capability struct {
	app  *App
	site site.Site
	fn   any
	name string
	opts CapabilityOptions
	errs []error
	late bool
}

var scopePattern = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`)

func newCapability(a *App, s site.Site, fn any, opts *CapabilityOptions) *Capability {
	c := &Capability{app: a, site: s, fn: fn}
	if opts != nil {
		c.opts = *opts
		c.opts.Scopes = slices.Clone(opts.Scopes)
		c.opts.Policies = slices.Clone(opts.Policies)
		c.opts.Forms = slices.Clone(opts.Forms)
		c.opts.InputSchema = slices.Clone(opts.InputSchema)
		c.opts.OutputSchema = slices.Clone(opts.OutputSchema)
	}
	c.name = c.opts.Name
	subject := "capability"
	if c.name == "" {
		name, err := defaultName(fn)
		if err != nil {
			c.errs = append(c.errs, &site.Error{Site: s, Subject: subject, Err: err})
		}
		c.name = name
	}
	if c.name != "" {
		subject = a.name + "." + c.name
		if !namePattern.MatchString(c.name) {
			c.errs = append(c.errs, site.Errorf(s, subject, "invalid capability name %q: want a letter followed by at most 31 letters, digits, '_' or '-'", c.name))
		}
	}
	for i, p := range c.opts.Policies {
		if p == nil {
			c.errs = append(c.errs, site.Errorf(s, subject, "policy %d is nil", i))
		}
	}
	for _, sc := range c.opts.Scopes {
		if !scopePattern.MatchString(sc) {
			c.errs = append(c.errs, site.Errorf(s, subject, "invalid scope %q: a scope is one or more printable ASCII characters without spaces, '\"' or '\\'", sc))
		}
	}
	if c.opts.Timeout < 0 {
		c.errs = append(c.errs, site.Errorf(s, subject, "negative timeout %s", c.opts.Timeout))
	}
	if err := c.opts.RateLimit.Validate(); err != nil {
		c.errs = append(c.errs, &site.Error{Site: s, Subject: subject, Err: err})
	}
	if c.opts.Annotations.Has(ReadOnly | Destructive) {
		c.errs = append(c.errs, site.Errorf(s, subject, "annotations ReadOnly and Destructive contradict each other"))
	}
	if c.opts.Annotations > ReadOnly|Destructive|Idempotent|OpenWorld {
		c.errs = append(c.errs, site.Errorf(s, subject, "unknown annotations %#x", uint8(c.opts.Annotations)))
	}
	c.errs = append(c.errs, guardErrs(s, subject, &c.opts)...)
	return c
}

// guardErrs reports a capability that says it destroys and not who may run
// it (ADR 57): Destructive with no scope, no policy and no confirmation,
// unless AnyoneMayCall says that anyone may; and AnyoneMayCall beside
// Scopes, which say the opposite. A capability with no annotations at all
// declares nothing and is not refused: clients assume the worst of it.
func guardErrs(s site.Site, subject string, o *CapabilityOptions) []error {
	guarded := len(o.Scopes) > 0 || len(o.Policies) > 0 || o.Confirm != ""
	switch {
	case o.AnyoneMayCall && len(o.Scopes) > 0:
		return []error{site.Errorf(s, subject, "AnyoneMayCall contradicts Scopes %q: remove one of them", o.Scopes)}
	case o.Annotations.Has(Destructive) && !o.Annotations.Has(ReadOnly) && !guarded && !o.AnyoneMayCall:
		// (ReadOnly|Destructive is refused as a contradiction already.)
		return []error{site.Errorf(s, subject, "annotated Destructive, but any caller, anonymous ones included, may run it: "+
			"declare who may (Scopes: []string{\"<scope>\"}, a policy in Policies, or Confirm: \"<question>\"), "+
			"or set AnyoneMayCall: true if anyone may")}
	}
	return nil
}

// App returns the application the capability belongs to.
func (c *Capability) App() *App { return c.app }

// Name returns the capability's name within its application.
func (c *Capability) Name() string { return c.name }

// Identity returns the capability's stable identity, "<app>.<name>".
func (c *Capability) Identity() string { return c.app.name + "." + c.name }

// Site returns the file:line the capability was registered at.
func (c *Capability) Site() string { return c.site.String() }

// Options returns a copy of the options the capability was registered with,
// with Name filled in.
func (c *Capability) Options() CapabilityOptions {
	o := c.opts
	o.Name = c.name
	o.Scopes = slices.Clone(c.opts.Scopes)
	o.Policies = slices.Clone(c.opts.Policies)
	o.Forms = slices.Clone(c.opts.Forms)
	o.InputSchema = slices.Clone(c.opts.InputSchema)
	o.OutputSchema = slices.Clone(c.opts.OutputSchema)
	return o
}

// err returns the mistakes found in the registration itself (name, options,
// a registration after compile), joined, or nil. Signature and schema
// mistakes are found by compilation, which reports these too.
func (c *Capability) err() error {
	errs := c.errs
	if c.late {
		errs = append(slices.Clone(errs), &site.Error{Site: c.site, Subject: c.Identity(), Err: ErrFrozen})
	}
	return joinErrs(errs)
}

// define is what the compiler reads of c (registry.Define).
func define(c *Capability) registry.Definition {
	return registry.Definition{Site: c.site, Func: c.fn, Err: c.err()}
}

func (c *Capability) String() string { return c.Identity() }

// defaultName derives a capability name from fn's Go name.
func defaultName(fn any) (string, error) {
	v := reflect.ValueOf(fn)
	if fn == nil || v.Kind() != reflect.Func || v.IsNil() {
		return "", fmt.Errorf("want a function, got %T", fn)
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return "", fmt.Errorf("cannot name this function: set CapabilityOptions.Name")
	}
	full := f.Name()
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		full = full[i+1:]
	}
	full = strings.TrimSuffix(full, "-fm") // method values
	if i := strings.IndexByte(full, '['); i >= 0 {
		full = full[:i] // instantiated generic functions: Fetch[...]
	}
	base := full[strings.LastIndexByte(full, '.')+1:]
	if isAnonymous(base) {
		return "", fmt.Errorf("anonymous function %s has no name: set CapabilityOptions.Name", full)
	}
	return snakeCase(base), nil
}

// isAnonymous reports whether a runtime function name segment is one the
// compiler invented for a closure ("func1", "gowrap2", "1").
func isAnonymous(seg string) bool {
	rest := strings.TrimLeft(seg, "0123456789")
	if rest == "" {
		return true
	}
	for _, prefix := range []string{"func", "gowrap", "deferwrap"} {
		if s, ok := strings.CutPrefix(seg, prefix); ok && s != "" && strings.Trim(s, "0123456789") == "" {
			return true
		}
	}
	return false
}

// pluralInitialism reports whether rs[i] ends an initialism made plural by a
// lower-case 's', as in IDs or URLs.
func pluralInitialism(rs []rune, i int) bool {
	if i == 0 || !unicode.IsUpper(rs[i-1]) || rs[i+1] != 's' {
		return false
	}
	return i+2 == len(rs) || !unicode.IsLower(rs[i+2])
}

// snakeCase converts a Go identifier to snake_case, keeping initialisms
// together: GetUser is get_user, GetUserByID is get_user_by_id, HTTPServer is
// http_server, ListURLs is list_urls.
func snakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !pluralInitialism(rs, i)
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					b.WriteByte('_')
				}
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
