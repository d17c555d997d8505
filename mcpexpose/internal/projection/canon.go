package projection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// canonicalJSON appends to dst the JSON document src — the output of
// json.Marshal — compact, with object keys sorted at every level and
// strings written as encoding/json writes them without HTML escaping:
// exactly what decoding src (numbers kept as written, a repeated key's last
// value kept) and encoding the result with SetEscapeHTML(false) writes,
// in one pass and without building the decoded tree. It fails when src
// nests objects and arrays more than MaxDepth levels deep.
func canonicalJSON(dst, src []byte) ([]byte, error) {
	c := canon{src: src, out: dst}
	if err := c.value(0); err != nil {
		return nil, err
	}
	return c.out, nil
}

type canon struct {
	src []byte
	i   int
	out []byte
}

type canonMember struct {
	key        string // decoded, for sorting
	start, end int    // the member's canonical bytes in out
}

func (c *canon) value(depth int) error {
	switch c.src[c.i] {
	case '{':
		return c.object(depth + 1)
	case '[':
		if depth+1 > MaxDepth {
			return errTooDeep
		}
		c.out = append(c.out, '[')
		c.i++
		if c.src[c.i] == ']' {
			c.i++
			c.out = append(c.out, ']')
			return nil
		}
		for {
			if err := c.value(depth + 1); err != nil {
				return err
			}
			if c.src[c.i] == ']' {
				c.i++
				c.out = append(c.out, ']')
				return nil
			}
			c.i++ // ','
			c.out = append(c.out, ',')
		}
	case '"':
		_, err := c.str()
		return err
	default: // a number, true, false or null, written as it is
		j := c.i
		for j < len(c.src) && !strings.ContainsRune(",}]", rune(c.src[j])) {
			j++
		}
		c.out = append(c.out, c.src[c.i:j]...)
		c.i = j
		return nil
	}
}

var errTooDeep = fmt.Errorf("%w: nested deeper than %d levels", ErrProjection, MaxDepth)

func (c *canon) object(depth int) error {
	if depth > MaxDepth {
		return errTooDeep
	}
	c.i++
	begin := len(c.out)
	c.out = append(c.out, '{')
	if c.src[c.i] == '}' {
		c.i++
		c.out = append(c.out, '}')
		return nil
	}
	var ms []canonMember
	sorted := true
	for {
		start := len(c.out)
		key, err := c.str()
		if err != nil {
			return err
		}
		c.i++ // ':'
		c.out = append(c.out, ':')
		if err := c.value(depth); err != nil {
			return err
		}
		if n := len(ms); n > 0 && ms[n-1].key >= key {
			sorted = false
		}
		ms = append(ms, canonMember{key: key, start: start, end: len(c.out)})
		if c.src[c.i] == '}' {
			c.i++
			break
		}
		c.i++ // ','
		c.out = append(c.out, ',')
	}
	if !sorted {
		// Reorder in place: a repeated key keeps its last value, as a
		// decoded map does.
		body := slices.Clone(c.out[begin+1:])
		slices.SortStableFunc(ms, func(a, b canonMember) int { return strings.Compare(a.key, b.key) })
		c.out = c.out[:begin+1]
		for i, m := range ms {
			if i+1 < len(ms) && ms[i+1].key == m.key {
				continue
			}
			if len(c.out) > begin+1 {
				c.out = append(c.out, ',')
			}
			c.out = append(c.out, body[m.start-begin-1:m.end-begin-1]...)
		}
	}
	c.out = append(c.out, '}')
	return nil
}

// str copies a string token, returning its decoded value. A string with
// no escape that is valid UTF-8 is written as it is; any other is decoded
// and written again by encoding/json.
func (c *canon) str() (string, error) {
	j := c.i + 1
	plain := true
	for ; c.src[j] != '"'; j++ {
		if c.src[j] == '\\' {
			plain = false
			j++
		}
	}
	tok := c.src[c.i : j+1]
	c.i = j + 1
	inner := tok[1 : len(tok)-1]
	if plain && utf8.Valid(inner) && !bytes.Contains(inner, []byte("\u2028")) && !bytes.Contains(inner, []byte("\u2029")) {
		c.out = append(c.out, tok...)
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", fmt.Errorf("%w: %v", ErrProjection, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", fmt.Errorf("%w: %v", ErrProjection, err)
	}
	c.out = append(c.out, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	return s, nil
}
