package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigError lists every mistake found in a config, each with its line
// when the config came from a file.
type ConfigError struct {
	File     string
	Problems []Problem
}

// Problem is one mistake: where (Line, 0 when unknown; Path, the key path
// such as "upstreams[1].tools[0].name") and what to fix.
type Problem struct {
	Line    int
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Error lists the problems, one a line, as "file:line: path: message".
func (e *ConfigError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch {
		case e.File != "" && p.Line > 0:
			fmt.Fprintf(&b, "%s:%d: ", e.File, p.Line)
		case e.File != "":
			fmt.Fprintf(&b, "%s: ", e.File)
		}
		b.WriteString(p.String())
	}
	return b.String()
}

func (e *ConfigError) add(line int, path, format string, args ...any) {
	e.Problems = append(e.Problems, Problem{Line: line, Path: path, Message: fmt.Sprintf(format, args...)})
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// addRaw adds a message of the YAML decoder, "line N: ...", with its line.
func (e *ConfigError) addRaw(msg string) {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		e.add(n, "", "%s", m[2])
		return
	}
	e.add(0, "", "%s", msg)
}

func (e *ConfigError) sort() {
	slices.SortStableFunc(e.Problems, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
}

func asTypeError(err error, te **yaml.TypeError) bool { return errors.As(err, te) }

// positions finds the line of a key path in the parsed document; a zero
// positions (a config built in code) knows none.
type positions struct{ doc *yaml.Node }

// at returns the line of the value at path (string keys, int indexes), or
// of the nearest enclosing node that exists; 0 without a document.
func (p positions) at(path ...any) int {
	n := p.doc
	if n == nil {
		return 0
	}
	line := n.Line
	for _, step := range path {
		var next *yaml.Node
		switch s := step.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == s {
						next = n.Content[i+1]
						line = n.Content[i].Line
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && s < len(n.Content) {
				next = n.Content[s]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// ref is " (line N)" for the value at path, or "" without a document.
func (p positions) ref(path ...any) string {
	if p.doc == nil {
		return ""
	}
	return fmt.Sprintf(" (line %d)", p.at(path...))
}

// pathString renders a key path as "upstreams[1].tools[0].name".
func pathString(path ...any) string {
	var b strings.Builder
	for _, step := range path {
		switch s := step.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		}
	}
	return b.String()
}

var configType = reflect.TypeFor[Config]()

// checkKeys reports every mapping key of n that the Go type t has no field
// for, recursively, with a hint when a known key is one edit away.
func checkKeys(ce *ConfigError, n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.AliasNode:
		return
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			checkKeys(ce, c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag != "" && f.IsExported() {
				fields[tag] = f.Type
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			at := k.Value
			if path != "" {
				at = path + "." + k.Value
			}
			ft, ok := fields[k.Value]
			if !ok {
				msg := fmt.Sprintf("unknown key %q", k.Value)
				if near := nearest(k.Value, fields); near != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", near)
				}
				ce.add(k.Line, path, "%s", msg)
				continue
			}
			checkKeys(ce, n.Content[i+1], ft, at)
		}
	}
}

// nearest returns a known key at most two edits from k, or "".
func nearest(k string, known map[string]reflect.Type) string {
	for _, cand := range slices.Sorted(mapsKeys(known)) {
		if editDistance(k, cand) <= 2 {
			return cand
		}
	}
	return ""
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
