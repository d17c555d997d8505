package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"

	"github.com/agnara-go/agnara/bench/internal/realistic"
)

// expectedQuote is realistic.Expected() as generic JSON values, which
// CheckRealistic compares each answer with.
var expectedQuote = func() any {
	b, _ := json.Marshal(realistic.Expected()) // plain data: cannot fail
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}()

// CheckRealistic returns an error unless result is a successful tools/call
// result of the realistic workload: one text block and the structured
// content, each exactly the quote of the sample order (realistic.Expected:
// every field present with its value, none more).
func CheckRealistic(result json.RawMessage) error {
	r, err := completed(result)
	if err != nil {
		return err
	}
	if err := sameQuote(r.StructuredContent); err != nil {
		return fmt.Errorf("structured content: %w", err)
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return fmt.Errorf("content is not one text block: %.200s", result)
	}
	if err := sameQuote([]byte(r.Content[0].Text)); err != nil {
		return fmt.Errorf("text content: %w", err)
	}
	return nil
}

// sameQuote returns an error unless b is one JSON value equal to the
// expected quote. It compares generic values, so that a missing field, an
// extra one or a different value is told even where the Go types would
// decode them to the same struct.
func sameQuote(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%w: %.200s", err, b)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the quote: %.200s", b)
	}
	if d := diff(v, expectedQuote, ""); d != "" {
		return fmt.Errorf("not the expected quote: %s", d)
	}
	return nil
}

// diff returns where got first differs from want (generic JSON values),
// as a JSON Pointer and what is there, or "" when they are equal.
func diff(got, want any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if _, ok := g[k]; !ok {
				return fmt.Sprintf("%s/%s missing", at, k)
			}
			if d := diff(g[k], w[k], at+"/"+k); d != "" {
				return d
			}
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := w[k]; !ok {
				return fmt.Sprintf("%s/%s unexpected", at, k)
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s has %d elements, want %d", at, len(g), len(w))
		}
		for i := range w {
			if d := diff(g[i], w[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if reflect.DeepEqual(got, want) {
		return ""
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if at == "" {
		at = "the value"
	}
	return fmt.Sprintf("%s is %.100s, want %.100s", at, gb, wb)
}
