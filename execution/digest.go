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
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v); err != nil {
		return "", fmt.Errorf("execution: arguments digest: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case *object:
		keys := slices.Clone(v.keys)
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteByte(':')
			if err := writeCanonical(buf, v.vals[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case json.Number:
		s := string(v)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("number out of range")
			}
			s = strconv.FormatFloat(f, 'g', -1, 64)
			if s == "-0" {
				s = "0"
			}
		} else if s == "-0" {
			s = "0"
		}
		buf.WriteString(s)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}
