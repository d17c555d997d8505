package mcpexpose

import "testing"

// TestTaskIDsNeverLookLikeFlags: a task id never begins with '-', which a
// command line takes for a flag (CI saw `agnara tasks get URL -WwPE...`
// fail). Unfixed, 10,000 ids would hold one about 1 - (63/64)^10000 of the
// time: always.
func TestTaskIDsNeverLookLikeFlags(t *testing.T) {
	for range 10000 {
		if id := randomID(18); id[0] == '-' || len(id) != 24 {
			t.Fatalf("task id %q", id)
		}
	}
}
