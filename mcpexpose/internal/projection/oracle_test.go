package projection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// The two ways the projection encoded a success's value before the
// canonical encoder (appendCanonical), kept as the oracles it is held to.

// oldEnvelope is the unvalidated path: json.Marshal, then canonicalJSON
// re-walking its output to sort the keys.
func oldEnvelope(value any) ([]byte, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProjection, err)
	}
	if err := stringKeys(reflect.ValueOf(value)); err != nil {
		return nil, err
	}
	b := append([]byte(nil), envelopePrefix...)
	if b, err = canonicalJSON(b, raw); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// oldEnvelopeDoc is the validating path: json.Marshal, decoded, the
// nesting measured, the decoded tree encoded again; it returns the tree
// too, which the schema judged.
func oldEnvelopeDoc(value any) ([]byte, any, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrProjection, err)
	}
	if err := stringKeys(reflect.ValueOf(value)); err != nil {
		return nil, nil, err
	}
	v, err := schemacheck.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrProjection, err)
	}
	if Nesting(v, 0) > MaxDepth {
		return nil, nil, fmt.Errorf("%w: nested deeper than %d levels", ErrProjection, MaxDepth)
	}
	buf := bytes.NewBufferString(envelopePrefix)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrProjection, err)
	}
	b := buf.Bytes()
	b[len(b)-1] = '}'
	return b, map[string]any{"result": v}, nil
}
