package execution

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ArgumentsDigest returns a digest of a JSON arguments value that does not
// depend on how the JSON was written: "sha256:" followed by the hex SHA-256 of
// its canonical form. In the canonical form object keys are sorted bytewise
// (a repeated key keeps its last value), there is no insignificant
// whitespace, strings are escaped as encoding/json escapes them, integer
// literals are kept as written (with -0 as 0), and other numbers are written
// in the shortest form that round-trips through float64 (so 1.0, 1e0 and 1
// agree). Empty arguments and null digest as {}.
//
// Confirmation evidence is bound to this digest, so that a confirmation given
// for some arguments cannot be used for others.
func ArgumentsDigest(args json.RawMessage) (string, error) {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		args = emptyObject
	}
	v, err := parseOrdered(args)
	if err != nil {
		return "", fmt.Errorf("execution: arguments digest: %w", err)
	}
	if v, err = canonicalize(v); err != nil {
		return "", fmt.Errorf("execution: arguments digest: %w", err)
	}
	var buf bytes.Buffer
	if err := writeOrdered(&buf, v); err != nil {
		return "", fmt.Errorf("execution: arguments digest: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// canonicalize rewrites a parsed JSON tree in place into its canonical
// form: object keys sorted, numbers in canonical spelling.
func canonicalize(v any) (any, error) {
	switch v := v.(type) {
	case *object:
		slices.Sort(v.keys)
		for _, k := range v.keys {
			c, err := canonicalize(v.vals[k])
			if err != nil {
				return nil, err
			}
			v.vals[k] = c
		}
	case []any:
		for i, e := range v {
			c, err := canonicalize(e)
			if err != nil {
				return nil, err
			}
			v[i] = c
		}
	case json.Number:
		s := string(v)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("number out of range")
			}
			s = strconv.FormatFloat(f, 'g', -1, 64)
		}
		if s == "-0" {
			s = "0"
		}
		return json.Number(s), nil
	}
	return v, nil
}
