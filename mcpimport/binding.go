package mcpimport

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/agnara-go/agnara/policy"
)

// Binding is the host's explicit declaration for one remote tool it imports
// for reading: that the remote tool really is read-only, under which local
// name and title it may be called, and which scope check applies. Tools
// without a binding are never registered, and nothing the remote server
// says (annotations included) grants anything a binding does not.
//
// A wrong read declaration cannot make a remote write safe: bind only tools
// whose read-only behaviour the host has established.
type Binding struct {
	// Name is the local capability name (a letter followed by at most 31
	// letters, digits, '_' or '-'). Required.
	Name string
	// Title is the read policy's title, published as the tool's title.
	// Required.
	Title string
	// Description, when set, is published instead of the remote tool's own
	// description. The remote description is still part of the snapshot
	// and its digest. Hosts that do not want a remote server's words in
	// front of their callers (a model, often) set it. When neither is set
	// (the remote tool has no description), Title is published as the
	// description.
	Description string
	// Scopes are the local scopes a caller must hold, all of them, before
	// anything else happens (see agnara.CapabilityOptions.Scopes).
	Scopes []string
	// ScopeValidator checks each call against the caller and the
	// arguments. Exactly one of ScopeValidator and NoScopeValidator must be
	// set.
	ScopeValidator ScopeValidator
	// NoScopeValidator declares that the host intentionally needs no
	// argument-level scope check for this tool.
	NoScopeValidator bool
	// ConcurrencySafe declares that calls may overlap. Calls of a tool not
	// declared concurrency-safe run one at a time (a call waits for the one
	// before it, within its own deadline).
	ConcurrencySafe bool
	// Profile is the schema profile the remote tool's schemas must fit.
	// Default: [ProfileStrict]. [ProfileStandard] accepts standard JSON
	// Schema (open objects, "$ref" within the document, "default") and
	// publishes it unchanged.
	Profile Profile
	// Task, when set, lets the remote tool answer a call with a task (the
	// MCP tasks extension): the call declares the extension and follows the
	// task until it ends, within Task.Timeout (see [TaskOptions]). It needs
	// a session from [Connect] with [ConnectOptions].Tasks. Default: nil,
	// the call does not declare the extension and a task answer fails with
	// [ReasonProtocolError]. Host configuration, not part of the snapshot.
	Task *TaskOptions
}

// ScopeValidator decides whether caller may call a tool with args (the
// arguments as sent, already valid against the tool's input schema). It
// returns nil to allow the call or an error to deny it. The caller sees a
// fixed message with reason [ReasonScopeDenied]; the error's text is logged
// at debug level only.
//
// A ScopeValidator must be safe for concurrent use and should return
// promptly: it runs within the call's deadline.
type ScopeValidator func(ctx context.Context, caller policy.Principal, args json.RawMessage) error

var localNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)

// check reports what is wrong with the binding of remote tool name.
func (b *Binding) check(remote string) *Error {
	switch {
	case remote == "":
		return newError(BindingInvalid, "", "a binding has an empty remote tool name")
	case !localNamePattern.MatchString(b.Name):
		return newError(BindingInvalid, remote, "local name %q: want a letter followed by at most 31 letters, digits, '_' or '-'", b.Name)
	case b.Title == "":
		return newError(BindingInvalid, remote, "the binding has no title")
	case b.ScopeValidator == nil && !b.NoScopeValidator:
		return newError(BindingInvalid, remote, "the binding has no ScopeValidator: set one, or set NoScopeValidator to declare that none is needed")
	case b.ScopeValidator != nil && b.NoScopeValidator:
		return newError(BindingInvalid, remote, "the binding sets both ScopeValidator and NoScopeValidator")
	}
	return b.Profile.check(remote)
}

// selection returns what discovery needs of a checked read binding.
func (b *Binding) selection(remote string) selection {
	var task *TaskOptions
	if b.Task != nil {
		o := *b.Task
		task = &o
	}
	return selection{
		task:        task,
		remote:      remote,
		entry:       Entry{Name: b.Name, Title: b.Title, Mode: ModeRead, ConcurrencySafe: b.ConcurrencySafe, Profile: b.Profile},
		description: b.Description,
		scopes:      slices.Clone(b.Scopes),
		validator:   b.ScopeValidator,
	}
}
