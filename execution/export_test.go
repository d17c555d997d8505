package execution

import (
	"encoding/json"
	"reflect"
)

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

// InputPath says which path a plan's arguments take: "one-pass" (checked
// as they are decoded, ADR 86) or "general" (the decoder, then the
// validator).
func InputPath(p *Plan) string { return p.inputPath() }

// ReadInput reads args as the plan does, by the one pass when it has one,
// or by the general path (the decoder, then the validator) when general
// is set or it has none.
func ReadInput(p *Plan, args []byte, general bool) (reflect.Value, *Failure) {
	if p.onepass != nil && !general {
		return p.onepass.decode(args)
	}
	return p.decoder.decode(args, p.validator)
}

// ReadInputBothWays reads args with the one pass, when the plan has one,
// and with the general path, and returns both outcomes: the decoded input
// (nil on failure) and the failure.
func ReadInputBothWays(p *Plan, args []byte) (one any, oneF *Failure, general any, generalF *Failure) {
	if p.onepass != nil {
		v, f := ReadInput(p, args, false)
		if f == nil {
			one = v.Interface()
		}
		oneF = f
	}
	v, f := ReadInput(p, args, true)
	if f == nil {
		general = v.Interface()
	}
	return one, oneF, general, f
}
