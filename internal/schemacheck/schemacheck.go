// Package schemacheck compiles JSON Schemas for validation the one way
// agnara validates: draft 2020-12, formats and content encodings asserted,
// and no external references loaded.
package schemacheck

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles schema, a JSON document.
func Compile(schema []byte) (*jsonschema.Schema, error) {
	doc, err := Parse(schema)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.AssertContent()
	c.UseLoader(noLoader{})
	const loc = "agnara:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// Parse decodes one JSON value the way the validator expects it: numbers as
// json.Number, nothing after the value.
func Parse(b []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", url)
}
