package mcpexpose_test

import (
	"runtime"
	"testing"
)

// TestCompileScalesLinearly compiles exposures of 1,250 and 5,000 tools
// whose input types are all distinct, and compares the allocations of a
// compile (exact, unlike times) as a ratio: four times the tools must cost
// about four times as much, whether the process compiles them for the
// first time or again (a swap, a test binary compiling one application
// many times). 5,000 input schemas are more than the validator cache by
// schema text holds (4,096): if plans found their validators only there,
// compiling again would compile most of them again (16 times the
// allocations of 1,250 tools, measured).
func TestCompileScalesLinearly(t *testing.T) {
	small, large := distinctFuncs(100000, 1250, false), distinctFuncs(200000, 5000, false)
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
	t.Logf("first compile: %.0f / %.0f allocations for 1,250 / 5,000 tools (%.2f×)", firstSmall, firstLarge, firstLarge/firstSmall)
	t.Logf("compiled again: %.0f / %.0f allocations (%.2f×)", againSmall, againLarge, againLarge/againSmall)
	if r := firstLarge / firstSmall; r > 4.5 {
		t.Errorf("the first compile of 5,000 tools allocates %.2f× what 1,250 do, want at most 4.5×", r)
	}
	if r := againLarge / againSmall; r > 4.5 {
		t.Errorf("compiling 5,000 tools again allocates %.2f× what 1,250 do, want at most 4.5×", r)
	}
}
