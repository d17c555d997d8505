package mcpexpose_test

import (
	"runtime"
	"testing"
)

// TestCompileScalesLinearly compiles exposures of 1,000 and 4,000 tools
// whose input and output types are all distinct, and compares the
// allocations of a compile (exact, unlike times) as a ratio: four times
// the tools must cost about four times as much, whether the process
// compiles them for the first time or again (a swap, a test binary
// compiling one application many times). A cache that holds fewer entries
// than one application needs (4,000 tools publish 8,000 schemas) fails it.
func TestCompileScalesLinearly(t *testing.T) {
	small, large := distinctFuncs(0, 1000), distinctFuncs(1000, 4000)
	first := func(fns []any) float64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		compileDistinct(t, fns)
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs - before.Mallocs)
	}
	again := func(fns []any) float64 {
		return testing.AllocsPerRun(1, func() { compileDistinct(t, fns) })
	}
	firstSmall, firstLarge := first(small), first(large)
	againSmall, againLarge := again(small), again(large)
	t.Logf("first compile: %.0f / %.0f allocations for 1,000 / 4,000 tools (%.2f×)", firstSmall, firstLarge, firstLarge/firstSmall)
	t.Logf("compiled again: %.0f / %.0f allocations (%.2f×)", againSmall, againLarge, againLarge/againSmall)
	if r := firstLarge / firstSmall; r > 4.5 {
		t.Errorf("the first compile of 4,000 tools allocates %.2f× what 1,000 do, want at most 4.5×", r)
	}
	if r := againLarge / againSmall; r > 4.5 {
		t.Errorf("compiling 4,000 tools again allocates %.2f× what 1,000 do, want at most 4.5×", r)
	}
}
