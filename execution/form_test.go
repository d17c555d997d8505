package execution_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// The forms of TestFormDerivation: one field kind each, with and without
// defaults and titles.
type (
	stringDefault struct {
		Name string `json:"name" jsonschema:"minLength=1,default=John Doe"`
	}
	commaDefault struct {
		City string `json:"city" jsonschema:"default=Paris\\, France"`
	}
	integerDefault struct {
		Age int `json:"age" jsonschema:"minimum=0,default=30"`
	}
	numberDefault struct {
		Score float64 `json:"score" jsonschema:"default=95.5"`
	}
	booleanDefault struct {
		Verified bool `json:"verified" jsonschema:"default=true"`
	}
	enumDefault struct {
		Status string `json:"status" jsonschema:"enum=active,enum=inactive,default=active"`
	}
	titledDefault struct {
		Size string `json:"size" jsonschema:"enum=s,enum=l,default=l" enumtitles:"Small,Large"`
	}
	legacyTitled struct {
		Plan string `json:"plan" jsonschema:"enum=free,enum=pro,default=free" enumnames:"Free, Professional"`
	}
	multiDefault struct {
		Extras []string `json:"extras" jsonschema:"enum=gift,enum=insurance,default=gift" enumtitles:"Gift wrap,Insurance"`
	}
	titleWithComma struct {
		Size string `json:"size" jsonschema:"enum=s,enum=l" enumtitles:"Small\\, cheap,Large"`
	}
)

func TestFormDerivation(t *testing.T) {
	for _, tc := range []struct {
		name string
		form interface {
			Err() error
			Schema() json.RawMessage
		}
		want string
	}{
		{"string default", execution.NewForm[stringDefault]("q"),
			`{"type":"object","properties":{"name":{"type":"string","minLength":1,"default":"John Doe"}},"required":["name"]}`},
		{"escaped comma in a default", execution.NewForm[commaDefault]("q"),
			`{"type":"object","properties":{"city":{"type":"string","default":"Paris, France"}},"required":["city"]}`},
		{"integer default", execution.NewForm[integerDefault]("q"),
			`{"type":"object","properties":{"age":{"type":"integer","minimum":0,"default":30}},"required":["age"]}`},
		{"number default", execution.NewForm[numberDefault]("q"),
			`{"type":"object","properties":{"score":{"type":"number","default":95.5}},"required":["score"]}`},
		{"boolean default", execution.NewForm[booleanDefault]("q"),
			`{"type":"object","properties":{"verified":{"type":"boolean","default":true}},"required":["verified"]}`},
		{"enum default", execution.NewForm[enumDefault]("q"),
			`{"type":"object","properties":{"status":{"type":"string","enum":["active","inactive"],"default":"active"}},"required":["status"]}`},
		{"titled single select with a default", execution.NewForm[titledDefault]("q"),
			`{"type":"object","properties":{"size":{"type":"string","default":"l","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]}},"required":["size"]}`},
		{"legacy enumNames", execution.NewForm[legacyTitled]("q"),
			`{"type":"object","properties":{"plan":{"type":"string","enum":["free","pro"],"default":"free","enumNames":["Free","Professional"]}},"required":["plan"]}`},
		{"titled multi-select with a default", execution.NewForm[multiDefault]("q"),
			`{"type":"object","properties":{"extras":{"type":"array","items":{"anyOf":[{"const":"gift","title":"Gift wrap"},{"const":"insurance","title":"Insurance"}]},"default":["gift"]}},"required":["extras"]}`},
		{"escaped comma in a title", execution.NewForm[titleWithComma]("q"),
			`{"type":"object","properties":{"size":{"type":"string","oneOf":[{"const":"s","title":"Small, cheap"},{"const":"l","title":"Large"}]}},"required":["size"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.form.Err(); err != nil {
				t.Fatal(err)
			}
			if got := string(tc.form.Schema()); got != tc.want {
				t.Errorf("schema =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestFormDefaultsAndTitlesRefused(t *testing.T) {
	type (
		notAnOption struct {
			Status string `json:"status" jsonschema:"enum=a,enum=b,default=c"`
		}
		notATitledOption struct {
			Status string `json:"status" jsonschema:"enum=a,enum=b,default=c" enumtitles:"A,B"`
		}
		tooShort struct {
			Name string `json:"name" jsonschema:"minLength=3,default=ab"`
		}
		fraction struct {
			N int `json:"n" jsonschema:"default=1.5"`
		}
		notANumber struct {
			N float64 `json:"n" jsonschema:"default=many"`
		}
		notABool struct {
			B bool `json:"b" jsonschema:"default=yes"`
		}
		outOfRange struct {
			N int `json:"n" jsonschema:"maximum=10,default=11"`
		}
		namesOnAList struct {
			Tags []string `json:"tags" jsonschema:"enum=a,enum=b" enumnames:"A,B"`
		}
		bothTags struct {
			S string `json:"s" jsonschema:"enum=a,enum=b" enumtitles:"A,B" enumnames:"A,B"`
		}
		namesMismatch struct {
			S string `json:"s" jsonschema:"enum=a,enum=b" enumnames:"A"`
		}
		namesWithoutEnum struct {
			S string `json:"s" enumnames:"A"`
		}
	)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"default outside the enum", execution.NewForm[notAnOption]("q").Err(), `Status: the default "c" is not a valid value`},
		{"default outside the titled options", execution.NewForm[notATitledOption]("q").Err(), `Status: the default "c" is not a valid value`},
		{"default shorter than minLength", execution.NewForm[tooShort]("q").Err(), `Name: the default "ab" is not a valid value`},
		{"fraction on an integer", execution.NewForm[fraction]("q").Err(), `N: the default 1.5 is not a valid value`},
		{"default that is not a number", execution.NewForm[notANumber]("q").Err(), `default=many: want a number`},
		{"default that is not a boolean", execution.NewForm[notABool]("q").Err(), `default=yes: want true or false`},
		{"default above maximum", execution.NewForm[outOfRange]("q").Err(), `N: the default 11 is not a valid value`},
		{"enumnames on a multi-select", execution.NewForm[namesOnAList]("q").Err(), `enumnames titles a single select`},
		{"enumtitles and enumnames", execution.NewForm[bothTags]("q").Err(), `say the same thing twice`},
		{"enumnames count", execution.NewForm[namesMismatch]("q").Err(), `enumnames needs one title per enum value (2 values, 1 titles)`},
		{"enumnames without an enum", execution.NewForm[namesWithoutEnum]("q").Err(), `enumnames needs one title per enum value (0 values, 1 titles)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("the form was accepted")
			}
			if !strings.Contains(tc.err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to say %q", tc.err, tc.want)
			}
		})
	}
}

// A tool's input schema still refuses a default: the rule is for published
// tool schemas, and forms are not tool schemas.
func TestToolSchemaStillRefusesDefaults(t *testing.T) {
	app := agnara.New("app", nil)
	app.Capability(func(in stringDefault) error { return nil }, &agnara.CapabilityOptions{Name: "x", Description: "x"})
	_, err := execution.Compile(app)
	if err == nil || !strings.Contains(err.Error(), "agnara publishes no defaults in tool schemas") {
		t.Fatalf("Compile = %v, want the default refused", err)
	}
}

// Answers are validated against the form as before: a default is a
// suggestion to the client, not a value the server fills in.
func TestAnswersToFormsWithDefaults(t *testing.T) {
	type profile struct {
		Name   string   `json:"name" jsonschema:"default=John Doe"`
		Age    int      `json:"age" jsonschema:"minimum=0,default=30"`
		Plan   string   `json:"plan" jsonschema:"enum=free,enum=pro,default=free" enumnames:"Free,Pro"`
		Size   string   `json:"size" jsonschema:"enum=s,enum=l,default=s" enumtitles:"Small,Large"`
		Extras []string `json:"extras,omitempty" jsonschema:"enum=gift,enum=insurance,default=gift" enumtitles:"Gift,Insurance"`
	}
	form := execution.NewForm[profile]("Your profile")
	app := agnara.New("app", nil)
	// The handler answers with the submission's text: a default tag on
	// the output type would be refused, as in any tool schema.
	c := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "profile", form)
		return fmt.Sprintf("%+v", v), err
	}, &agnara.CapabilityOptions{Name: "x", Forms: []agnara.Form{form}})
	p := compileOne(t, app, c)
	for _, tc := range []struct {
		name    string
		content string
		want    *profile // nil: InvalidInput
	}{
		{"every field", `{"name":"Ada","age":36,"plan":"pro","size":"l","extras":["insurance"]}`, &profile{Name: "Ada", Age: 36, Plan: "pro", Size: "l", Extras: []string{"insurance"}}},
		{"the defaults, sent back", `{"name":"John Doe","age":30,"plan":"free","size":"s","extras":["gift"]}`, &profile{Name: "John Doe", Age: 30, Plan: "free", Size: "s", Extras: []string{"gift"}}},
		{"an optional field left out stays empty", `{"name":"Ada","age":36,"plan":"pro","size":"l"}`, &profile{Name: "Ada", Age: 36, Plan: "pro", Size: "l"}},
		{"a required field left out is not defaulted", `{"age":36,"plan":"pro","size":"l"}`, nil},
		{"a legacy option's title is not its value", `{"name":"Ada","age":36,"plan":"Pro","size":"l"}`, nil},
		{"a titled option's title is not its value", `{"name":"Ada","age":36,"plan":"pro","size":"Large"}`, nil},
		{"below the minimum", `{"name":"Ada","age":-1,"plan":"pro","size":"l"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := p.Invoke(bg, &execution.Invocation{Answers: map[string]execution.Answer{
				"profile": {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(tc.content)},
			}})
			if tc.want == nil {
				mustFailure(t, out, err, execution.InvalidInput)
				return
			}
			s := mustSuccess(t, out, err)
			if want := fmt.Sprintf("%+v", *tc.want); s.Value != want {
				t.Errorf("value = %v, want %v", s.Value, want)
			}
		})
	}
}
