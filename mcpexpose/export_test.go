package mcpexpose

// Watched returns how many sessions the live server would tell of a change
// of their lists: tests wait for a client's listen stream to be heard
// before they swap.
func Watched(l *Live) int {
	l.s.watch.mu.Lock()
	defer l.s.watch.mu.Unlock()
	return len(l.s.watch.by)
}

// DefaultMaxBodyBytes is the default of [Limits.MaxBodyBytes], for the
// black-box tests of the body limit.
const DefaultMaxBodyBytes = defaultMaxBodyBytes

// DelayTaskRuns makes each task's run wait, as its goroutine begins, until
// release is closed: tests of what reaches a task before its run starts.
func DelayTaskRuns(h *Handler, release <-chan struct{}) {
	h.srv.tasks.runStarts = func() { <-release }
}
