package mcpimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// profileParser decodes a document into profileObject, []any, json.Number,
// string, bool and nil from the token stream, so that a duplicate key is
// seen (decoding into a map would keep the last one silently).
type profileParser struct {
	dec  *json.Decoder
	path []string
}

func parseProfileDocument(raw []byte) (any, *profileError) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	p := &profileParser{dec: dec}
	v, perr := p.value()
	if perr != nil {
		return nil, perr
	}
	switch _, err := dec.Token(); {
	case err == io.EOF:
		return v, nil
	case err != nil:
		return nil, profileSyntaxError(err)
	default:
		return nil, &profileError{Reason: "schema holds more than one JSON value"}
	}
}

func profileSyntaxError(err error) *profileError {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &profileError{Reason: "schema is not valid JSON (at byte offset " + strconv.FormatInt(se.Offset, 10) + ")"}
	}
	return &profileError{Reason: "schema is not valid JSON (unexpected end)"}
}

func (p *profileParser) value() (any, *profileError) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, profileSyntaxError(err)
	}
	if n, ok := tok.(json.Number); ok && !profileFinite(string(n)) {
		return nil, &profileError{Pointer: profilePointer(p.path), Reason: "number is out of range: it must be within the range of an IEEE 754 double, with an exponent the validator can read"}
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if len(p.path) >= profileMaxNesting {
		return nil, &profileError{Pointer: profilePointer(p.path), Reason: "schema nests JSON objects and arrays deeper than " + strconv.Itoa(profileMaxNesting) + " levels"}
	}
	switch d {
	case '{':
		return p.object()
	case '[':
		return p.array()
	}
	return nil, &profileError{Reason: "schema is not valid JSON"} // the decoder reports stray closers itself
}

func (p *profileParser) object() (any, *profileError) {
	o := &profileObject{vals: map[string]any{}}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, profileSyntaxError(err)
		}
		k, ok := tok.(string)
		if !ok {
			return nil, &profileError{Reason: "schema is not valid JSON"}
		}
		if _, dup := o.vals[k]; dup {
			return nil, &profileError{Pointer: profilePointer(p.path), Reason: "duplicate key " + quote(k)}
		}
		p.path = append(p.path, k)
		v, perr := p.value()
		if perr != nil {
			return nil, perr
		}
		p.path = p.path[:len(p.path)-1]
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	if err := p.closer('}'); err != nil {
		return nil, err
	}
	return o, nil
}

func (p *profileParser) array() (any, *profileError) {
	a := []any{}
	for p.dec.More() {
		p.path = append(p.path, strconv.Itoa(len(a)))
		v, perr := p.value()
		if perr != nil {
			return nil, perr
		}
		p.path = p.path[:len(p.path)-1]
		a = append(a, v)
	}
	if err := p.closer(']'); err != nil {
		return nil, err
	}
	return a, nil
}

func (p *profileParser) closer(want json.Delim) *profileError {
	tok, err := p.dec.Token()
	if err != nil {
		return profileSyntaxError(err)
	}
	if tok != want {
		return &profileError{Reason: "schema is not valid JSON"}
	}
	return nil
}
