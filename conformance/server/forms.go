package main

import "github.com/agnara-go/agnara/execution"

// The forms of the SEP-1034 and SEP-1330 fixtures
// (test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums), as
// the suite describes them: a default on every primitive type, and the five
// kinds of enum. Defaults come from jsonschema:"default=...", titled options
// from enumtitles (oneOf, items.anyOf) and the legacy enumNames from
// enumnames; mcpexpose sends each revision its own dialect of them.
type (
	DefaultsForm struct {
		Name     string  `json:"name" jsonschema:"description=User name,default=John Doe"`
		Age      int     `json:"age" jsonschema:"description=User age,default=30"`
		Score    float64 `json:"score" jsonschema:"description=User score,default=95.5"`
		Status   string  `json:"status" jsonschema:"description=User status,enum=active,enum=inactive,enum=pending,default=active"`
		Verified bool    `json:"verified" jsonschema:"description=Verification status,default=true"`
	}
	EnumsForm struct {
		UntitledSingle string   `json:"untitledSingle" jsonschema:"enum=option1,enum=option2,enum=option3"`
		TitledSingle   string   `json:"titledSingle" jsonschema:"enum=value1,enum=value2,enum=value3" enumtitles:"First Option,Second Option,Third Option"`
		LegacyEnum     string   `json:"legacyEnum" jsonschema:"enum=opt1,enum=opt2,enum=opt3" enumnames:"Option One,Option Two,Option Three"`
		UntitledMulti  []string `json:"untitledMulti" jsonschema:"enum=option1,enum=option2,enum=option3"`
		TitledMulti    []string `json:"titledMulti" jsonschema:"enum=value1,enum=value2,enum=value3" enumtitles:"First Choice,Second Choice,Third Choice"`
	}
)

var (
	defaultsForm = execution.NewForm[DefaultsForm]("Test defaults for primitives")
	enumsForm    = execution.NewForm[EnumsForm]("Test enum schemas")
)
