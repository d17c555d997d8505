package inbox

// Sessions is how many sessions in holds: tests show with it that a
// refused request made none.
func (in *Inbox) Sessions() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.sessions)
}

// PendingSignIns is how many sign-ins in has started and not finished.
func (in *Inbox) PendingSignIns() int {
	if in.oidc == nil {
		return 0
	}
	in.oidc.mu.Lock()
	defer in.oidc.mu.Unlock()
	return len(in.oidc.pending)
}
