// Package mcpversion owns the MCP protocol revisions agnara speaks, so that
// the serving half (mcpexpose) and the importing half (mcpimport) cannot
// disagree about them, and a version literal is written once.
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
)

// supported are the supported revisions, newest first.
var supported = [...]string{Modern, Handshake20251125, Handshake20250618}

// Supported returns the supported revisions, newest first, in a new slice
// the caller may keep or change.
func Supported() []string { return slices.Clone(supported[:]) }

// IsModern reports whether a negotiated or requested revision belongs to the
// modern era. Revisions are dates, so they compare as strings.
func IsModern(v string) bool { return v >= Modern }

// IsServed reports whether v is one of the Supported revisions.
func IsServed(v string) bool { return slices.Contains(supported[:], v) }
