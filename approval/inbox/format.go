package inbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"time"

	"github.com/agnara-go/agnara/approval"
)

// indent returns raw indented by two spaces.
func indent(raw json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return "", err
	}
	return b.String(), nil
}

// compact returns raw on one line, or "" for an empty object.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil || b.String() == "{}" {
		return ""
	}
	return b.String()
}

// ago says how long before now t was, to the minute.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min ago", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// until says how long after now t is, or that it has passed.
func until(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d <= 0:
		return "expired"
	case d < time.Minute:
		return "in less than a minute"
	case d < time.Hour:
		return fmt.Sprintf("in %d min", int(d/time.Minute))
	}
	return fmt.Sprintf("in %d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// effectOf is the effect an approval's receipt (and any reconciliation)
// says, or "".
func effectOf(a approval.Approval) string {
	switch {
	case a.Reconciliation != nil:
		return string(a.Reconciliation.Effect) + " (recorded by " + a.Reconciliation.By + ")"
	case a.Receipt != nil:
		return string(a.Receipt.Effect)
	case a.State == approval.StateClaimed:
		return string(approval.EffectUnknown) + " (claimed, no receipt)"
	}
	return ""
}

var funcs = template.FuncMap{
	"ago":    ago,
	"until":  until,
	"effect": effectOf,
	"stamp":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"iso":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"short":  func(s string) string { return shorten(s, 24) },
	"raw":    func(r json.RawMessage) string { return string(r) },
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
