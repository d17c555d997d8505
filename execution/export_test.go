package execution

import "encoding/json"

// Hooks for the black-box tests of package execution_test.

// CheckRelayedForm reports why schema is outside the elicitation form
// subset that [Context.Relay] accepts, or nil.
func CheckRelayedForm(schema json.RawMessage) error {
	_, err := relayedForm(schema)
	return err
}

// Len returns the number of buckets l holds.
func (l *LocalLimiter) Len() int { return l.len() }

// LimiterUnavailable is the failure of a request whose rate limit cannot
// be checked now.
func LimiterUnavailable() *Failure { return limiterUnavailable() }

// CheckURL reports why rawURL is not a URL [Context.AskURL] may ask the
// caller to open, or nil.
func CheckURL(rawURL string) error { return checkURL(rawURL) }
