package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agnara-go/agnara/approval"
)

// The preview of a list's row: what tells its call apart from the other
// calls of the same tool in that list. Three writes of one tool for three
// people differ only in, say, entities[0].name; the preview shows that
// leaf, not the first members of the arguments, which read alike.
//
// Its cost is bounded: a list holds at most pageSize approvals, each read
// to at most maxLeaves leaves, maxDepth deep.
const (
	maxLeaves = 256 // leaves read from one call's arguments; later ones are not compared
	maxDepth  = 16  // deeper values are compared whole, as compact JSON
	leafRunes = 40  // a leaf's value is cut to this many characters
)

// leaf is one scalar (or empty object or array) of an argument object:
// where it is, as entities[0].name, and its value as shown.
type leaf struct{ path, value string }

// row is an approval as a list shows it.
type row struct {
	approval.Approval
	// Preview is its arguments at a glance: the leaves that tell it from
	// the other calls of its tool in the list, or its first members.
	Preview string
	// Differs says that Preview holds the leaves that tell it apart.
	Differs bool
}

// rows returns as, each with its preview, cut to max characters. Calls are
// compared with the other calls of the same tool on the same server in as;
// a call alone of its tool, or whose arguments equal the others', is shown
// by its first members (summarize).
func rows(as []approval.Approval, max int) []row {
	out := make([]row, len(as))
	groups := map[[2]string][]int{}
	for i, a := range as {
		out[i].Approval = a
		k := [2]string{a.Intent.Binding.Tool, a.Intent.Server}
		groups[k] = append(groups[k], i)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		flat := make([][]leaf, len(g))
		first := map[string]string{}
		seen := map[string]int{}
		differ := map[string]bool{}
		for j, i := range g {
			flat[j] = leaves(as[i].Intent.Arguments)
			for _, l := range flat[j] {
				if v, ok := first[l.path]; !ok {
					first[l.path] = l.value
				} else if v != l.value {
					differ[l.path] = true
				}
				seen[l.path]++
			}
		}
		for j, i := range g {
			var parts []string
			n := 0
			for _, l := range flat[j] {
				if !differ[l.path] && seen[l.path] == len(g) {
					continue // every call of the tool has it, alike
				}
				s := l.path + "=" + shorten(l.value, leafRunes)
				if l.path == "" {
					s = shorten(l.value, leafRunes)
				}
				parts = append(parts, s)
				if n += utf8.RuneCountInString(s) + 2; n > max {
					break
				}
			}
			if parts != nil {
				out[i].Preview, out[i].Differs = shorten(strings.Join(parts, ", "), max), true
			}
		}
	}
	for i := range out {
		if !out[i].Differs {
			out[i].Preview = summarize(out[i].Intent.Arguments, max)
		}
	}
	return out
}

// leaves flattens raw, in its own order, into at most maxLeaves leaves.
// Strings are quoted with Go escapes, so that no invisible or reordering
// character changes what a row seems to say; other scalars are their JSON
// text. Arguments that are not JSON are one leaf at the root.
func leaves(raw json.RawMessage) []leaf {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out []leaf
	if walk(dec, "", 0, &out) != nil && len(out) == 0 {
		return []leaf{{value: compact(raw)}}
	}
	return out
}

// errFull stops a walk at maxLeaves.
var errFull = errors.New("inbox: maxLeaves read")

// walk reads one value from dec into out, under path.
func walk(dec *json.Decoder, path string, depth int, out *[]leaf) error {
	if len(*out) >= maxLeaves {
		return errFull
	}
	if depth >= maxDepth {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*out = append(*out, leaf{path, compact(v)})
		return nil
	}
	t, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := t.(type) {
	case json.Delim:
		empty, n := "{}", 0
		if t == '[' {
			empty = "[]"
		}
		for ; dec.More(); n++ {
			sub := path + "[" + strconv.Itoa(n) + "]"
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := k.(string)
				sub = member(path, name)
			}
			if err := walk(dec, sub, depth+1, out); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return err
		}
		if n == 0 {
			*out = append(*out, leaf{path, empty})
		}
	case string:
		*out = append(*out, leaf{path, strconv.Quote(t)})
	case json.Number:
		*out = append(*out, leaf{path, t.String()})
	case bool:
		*out = append(*out, leaf{path, strconv.FormatBool(t)})
	case nil:
		*out = append(*out, leaf{path, "null"})
	}
	return nil
}

// member is the path of the member name of the object at path: .name, or
// ."a b" for a name that is not letters, digits, - and _ (so that a name
// holding a dot, a bracket or an invisible character cannot pose as a
// path).
func member(path, name string) string {
	seg := name
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' {
			seg = strconv.Quote(name)
			break
		}
	}
	if name == "" {
		seg = `""`
	}
	if path == "" {
		return seg
	}
	return path + "." + seg
}
