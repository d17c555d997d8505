package inbox

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
	"result": readResult,
	"lines":  lines,
	"actsAs": actsAs,
}

// actsAs says whose authority a write reaches its server with, from its
// approval's credential (approval.Intent.Credential).
func actsAs(credential string) string {
	switch credential {
	case "gateway":
		return "the gateway's own identity"
	case "token_exchange":
		return "the requester's own token, exchanged for this server"
	case "consent":
		return "the requester's own grant, given by signing in at this server"
	}
	return credential
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// summarize is an argument object at a glance, for the lists: its first
// members as name=value, values as compact JSON cut to 24 characters, the
// whole cut to max characters. Names that are not plain printable text
// are quoted with Go escapes, so that no invisible or reordering
// character changes what a row seems to say. The template escapes the
// result.
func summarize(raw json.RawMessage, max int) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return shorten(compact(raw), max)
	}
	var b strings.Builder
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(plain(name) + "=" + shorten(compact(v), 24))
		if utf8.RuneCountInString(b.String()) > max {
			break
		}
	}
	return shorten(b.String(), max)
}

// plain returns s when it is printable text without spaces that could
// confuse a reader, and s quoted with Go escapes otherwise.
func plain(s string) string {
	for _, r := range s {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) || unicode.In(r, unicode.Bidi_Control, unicode.Join_Control) {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// lines counts the lines of s.
func lines(s string) int { return strings.Count(s, "\n") + 1 }

// eventDetail is what the audit trail's details say, as far as the
// sentences use them.
type eventDetail struct {
	Note     string    `json:"note"`
	From     string    `json:"from"`
	Deadline time.Time `json:"deadline"`
	Changed  []string  `json:"changed"`
	Effect   string    `json:"effect"`
	Code     string    `json:"code"`
	Evidence string    `json:"evidence"`
	Tool     string    `json:"tool"`
}

// sentence tells an audit entry as a person would: who did what, and for
// the dispatcher's entries what it means. quote is the note or evidence
// recorded with it, shown apart.
func sentence(e approval.Event, requester string) (text, quote string) {
	var d eventDetail
	if json.Unmarshal(e.Detail, &d) != nil {
		d = eventDetail{} // a detail the sentences cannot read is left to the raw record
	}
	actor := cmp.Or(e.Actor, "someone")
	switch e.Kind {
	case "prepared":
		return fmt.Sprintf("%s's agent asked to run %s.", actor, cmp.Or(d.Tool, "the tool")), ""
	case "approved":
		return actor + " approved it, to run once when " + requester + "'s agent made the same call again.", d.Note
	case "rejected":
		return actor + " rejected it. It will not run.", d.Note
	case "canceled":
		if d.From == string(approval.StateApproved) {
			return actor + " canceled it after it was approved. It will not run.", d.Note
		}
		return actor + " canceled it before anyone decided. It will not run.", d.Note
	case "expired":
		if d.From == string(approval.StateApproved) {
			return "It expired: " + requester + "'s agent did not call again before " + stampOf(d.Deadline) + ", so it never ran.", ""
		}
		return "It expired: nobody decided it before " + stampOf(d.Deadline) + ".", ""
	case "claimed":
		return requester + "'s agent called again, and the gateway took it to run (once).", ""
	case "claim_refused":
		return "The gateway refused to run it: " + strings.Join(d.Changed, ", ") + " changed since it was approved. It stays approved until its deadline; a new approval is needed for the tool as it is now.", ""
	case "completed":
		why := ""
		if d.Code != "" {
			why = " (" + d.Code + ")"
		}
		switch approval.EffectState(d.Effect) {
		case approval.EffectCommitted:
			return "It ran, and the server confirmed it (committed).", ""
		case approval.EffectNotStarted:
			return "It did not run: it was stopped before anything was sent" + why + ".", ""
		}
		return "It was sent, but whether it took effect is unknown" + why + ". Someone should check and record the effect.", ""
	case "reconciled":
		if approval.EffectState(d.Effect) == approval.EffectCommitted {
			return actor + " recorded that it did take effect.", d.Evidence
		}
		return actor + " recorded that it did not take effect.", d.Evidence
	}
	if e.Actor != "" {
		return e.Kind + ", by " + e.Actor + ".", ""
	}
	return e.Kind + ".", ""
}

func stampOf(t time.Time) string {
	if t.IsZero() {
		return "its deadline"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// The receipt's result as an approver reads it. A tool's result is an MCP
// CallToolResult whose text blocks often hold JSON, which shown raw is a
// string of \" escapes; each part is shown the way the arguments are,
// indented, and a text block holding JSON is decoded first. Bounded: at
// most maxParts parts of at most partRunes characters each.
const (
	maxParts  = 20
	partRunes = 16 << 10
)

// resultPart is one part of a result: what it is, and its text.
type resultPart struct{ Label, Body string }

// readResult splits raw, a receipt's result, into the parts an approver
// reads: each content block (a text block holding JSON indented, other
// text as it is), the structured content, and any other members; the
// envelope of receipts recorded before results carried content blocks
// ({"text": [...], "structured": ...}) likewise. Any other JSON is one
// part, indented. The template escapes every part.
func readResult(raw json.RawMessage) []resultPart {
	var env map[string]json.RawMessage
	if json.Unmarshal(raw, &env) != nil || env == nil || (env["content"] == nil && env["text"] == nil) {
		return []resultPart{{Body: bounded(pretty(raw))}}
	}
	var parts []resultPart
	var blocks []json.RawMessage
	if json.Unmarshal(env["content"], &blocks) != nil {
		var texts []string
		if json.Unmarshal(env["text"], &texts) != nil {
			return []resultPart{{Body: bounded(pretty(raw))}}
		}
		for _, s := range texts {
			b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
			blocks = append(blocks, b)
		}
		delete(env, "text")
	}
	delete(env, "content")
	for i, b := range blocks {
		if len(parts) == maxParts {
			parts = append(parts, resultPart{Label: fmt.Sprintf("and %d more blocks, not shown", len(blocks)-i)})
			break
		}
		n := ""
		if len(blocks) > 1 {
			n = fmt.Sprintf(" %d of %d", i+1, len(blocks))
		}
		var block struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(b, &block) != nil || block.Type != "text" || block.Text == nil {
			parts = append(parts, resultPart{Label: "Block" + n + " (" + plain(shorten(cmp.Or(block.Type, "no type"), 24)) + ")", Body: bounded(pretty(b))})
			continue
		}
		text := *block.Text
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if out, err := indent(json.RawMessage(t)); err == nil {
				parts = append(parts, resultPart{Label: "Text" + n + ", JSON indented", Body: bounded(out)})
				continue
			}
		}
		parts = append(parts, resultPart{Label: "Text" + n, Body: bounded(text)})
	}
	for _, k := range []string{"structuredContent", "structured"} {
		if v, ok := env[k]; ok {
			if string(v) != "null" {
				parts = append(parts, resultPart{Label: "Structured content", Body: bounded(pretty(v))})
			}
			delete(env, k)
		}
	}
	if len(env) > 0 {
		rest, _ := json.Marshal(env) // sorted by name
		parts = append(parts, resultPart{Label: "Other members", Body: bounded(pretty(rest))})
	}
	return parts
}

// bounded cuts s to partRunes characters, saying how much was left out,
// and makes visible the characters that would hide or reorder text: each
// control, format or invisible character but newline and tab is written
// as its Go escape.
func bounded(s string) string {
	var b strings.Builder
	n := 0
	for i, r := range s {
		if n == partRunes {
			fmt.Fprintf(&b, "\n… (%d more bytes not shown)", len(s)-i)
			break
		}
		n++
		if r != '\n' && r != '\t' && !unicode.IsGraphic(r) {
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
