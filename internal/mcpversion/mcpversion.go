// Package mcpversion owns the MCP protocol revisions agnara speaks, and the
// identifier of the tasks extension, so that the serving half (mcpexpose),
// the importing half (mcpimport) and the command-line client cannot
// disagree about them, and each literal is written once.
//
// The two halves speak different sets: agnara serves the revisions its
// tests run real clients at (Supported), and imports from every revision
// still in use by servers (Imported), which adds the older handshake-era
// revisions public servers still negotiate.
package mcpversion

import "slices"

// The protocol revisions agnara serves and imports from (DESIGN.md §2).
const (
	// Modern is the first revision served without sessions: stateless
	// requests, server/discover and per-request _meta.
	Modern = "2026-07-28"
	// Handshake20251125 and Handshake20250618 are the handshake-era
	// revisions, served with sessions.
	Handshake20251125 = "2025-11-25"
	Handshake20250618 = "2025-06-18"
	// Handshake20250326 and Handshake20241105 are older handshake-era
	// revisions, imported from but not served: servers built on older SDKs
	// still negotiate them (the npm server-postgres 0.6.2 speaks only
	// 2024-11-05). Neither has structured content or output schemas, which
	// 2025-06-18 introduced; 2024-11-05's HTTP transport is HTTP+SSE, not
	// streamable HTTP.
	Handshake20250326 = "2025-03-26"
	Handshake20241105 = "2024-11-05"
)

// TasksExtension is the identifier of the MCP tasks extension (SEP-2663),
// under which servers advertise it and clients declare it, in the
// extensions of their capabilities (a 2026-07-28 request's, per request).
const TasksExtension = "io.modelcontextprotocol/tasks"

// supported are the served revisions, newest first.
var supported = [...]string{Modern, Handshake20251125, Handshake20250618}

// imported are the revisions an upstream may negotiate, newest first.
var imported = [...]string{Modern, Handshake20251125, Handshake20250618, Handshake20250326, Handshake20241105}

// Supported returns the served revisions, newest first, in a new slice
// the caller may keep or change.
func Supported() []string { return slices.Clone(supported[:]) }

// Imported returns the revisions the importing half accepts from an
// upstream, newest first, in a new slice the caller may keep or change:
// the served ones and the older handshake-era ones.
func Imported() []string { return slices.Clone(imported[:]) }

// IsModern reports whether a negotiated or requested revision belongs to the
// modern era. Revisions are dates, so they compare as strings.
func IsModern(v string) bool { return v >= Modern }

// IsServed reports whether v is one of the Supported revisions.
func IsServed(v string) bool { return slices.Contains(supported[:], v) }

// IsImported reports whether v is one of the Imported revisions.
func IsImported(v string) bool { return slices.Contains(imported[:], v) }
