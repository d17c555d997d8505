package schemacheck

import (
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// metaURL is the JSON Schema 2020-12 meta-schema, which the validator ships
// (it is never fetched).
const metaURL = "https://json-schema.org/draft/2020-12/schema"

var metaSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat() // patterns must be valid regular expressions
	c.UseLoader(noLoader{})
	return c.Compile(metaURL)
})

// Problem is one way in which a schema breaks the meta-schema.
type Problem struct {
	// Pointer is the JSON Pointer of the offending keyword's value in the
	// schema, such as "/properties/name/maxLength".
	Pointer string
	// Message says what the meta-schema wants there.
	Message string
}

// CheckMeta validates doc, a schema parsed by [Parse], against the JSON
// Schema 2020-12 meta-schema and returns every problem it finds, ordered by
// pointer. A schema without problems can still be unsatisfiable (minimum
// above maximum): the meta-schema cannot say that.
func CheckMeta(doc any) []Problem {
	meta, err := metaSchema()
	if err != nil {
		return []Problem{{Message: "the 2020-12 meta-schema does not compile: " + err.Error()}}
	}
	err = meta.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Message: err.Error()}}
	}
	var out []Problem
	var leaves func(e *jsonschema.ValidationError)
	leaves = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Problem{Pointer: pointer(e.InstanceLocation), Message: leafMessage(e)})
			return
		}
		for _, c := range e.Causes {
			leaves(c)
		}
	}
	leaves(ve)
	if len(out) == 0 {
		out = append(out, Problem{Pointer: pointer(ve.InstanceLocation), Message: "does not match the 2020-12 meta-schema"})
	}
	return sorted(out)
}

// sorted orders problems by pointer and keeps the first of several at one
// pointer (the meta-schema explains a bad "type" twice).
func sorted(ps []Problem) []Problem {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Pointer < ps[j].Pointer })
	out := ps[:0]
	for i, p := range ps {
		if i == 0 || p.Pointer != ps[i-1].Pointer {
			out = append(out, p)
		}
	}
	return out
}

// leafMessage is the validator's message for an error without causes, which
// it formats as "at '<pointer>': <message>"; the pointer is reported apart.
func leafMessage(e *jsonschema.ValidationError) string {
	msg := e.Error()
	if rest, ok := strings.CutPrefix(msg, "at '"); ok {
		if _, m, ok := strings.Cut(rest, "': "); ok {
			return m
		}
	}
	return msg
}

// pointer formats an instance location as a JSON Pointer.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(escape(tok))
	}
	return b.String()
}

// escape escapes a JSON Pointer reference token (RFC 6901).
func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
