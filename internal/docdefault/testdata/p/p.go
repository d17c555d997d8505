// Package p states its defaults, for docdefault's test.
package p

import "time"

// Options configures nothing.
type Options struct {
	// Size bounds something. Default: 1 MiB.
	Size int64
	// Count caps something. Default: 1000; negative: no limit.
	Count int
	// Prefix namespaces keys. Default: "p:keys:".
	Prefix string
	// Wait is how long. Zero means 30 seconds.
	Wait time.Duration
}

// T is a type with a method.
type T struct{}

// M refuses more than 64 keys.
func (*T) M() {}

// F takes at most 7 days.
func F() {}
